package stripesim

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/stripe/stripe-go/v85"
)

// newID returns an id as Stripe makes them: prefix (e.g. "ic_") and 24
// letters and digits.
func newID(prefix string) string {
	return prefix + rand.Text()[:24]
}

// luhn appends the Luhn check digit to the digits of partial.
func luhn(partial string) string {
	sum := 0
	for i := range len(partial) {
		d := int(partial[len(partial)-1-i] - '0')
		if i%2 == 0 { // doubled: the check digit will sit to its right
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return partial + strconv.Itoa((10-sum%10)%10)
}

// formInt returns the integer form value of key; present is false when it
// is absent.
func formInt(r *request, key string) (n int64, present bool, bad result) {
	v := r.form.Get(key)
	if v == "" {
		return 0, false, result{}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, true, invalid("parameter_invalid_integer", fmt.Sprintf("Invalid integer: %s", v))
	}
	return n, true, result{}
}

// formBool returns the boolean form value of key, def when absent.
func formBool(r *request, key string, def bool) bool {
	switch r.form.Get(key) {
	case "true":
		return true
	case "false":
		return false
	}
	return def
}

// applyMetadata applies the form's metadata[key] values to m as Stripe
// does: an empty value unsets its key, an empty metadata unsets them all.
// It returns Stripe's refusal of metadata over its limits (50 keys, keys of
// 40 characters, values of 500), which stripe-mock does not check, leaving
// m as it was.
func applyMetadata(r *request, m map[string]string) (bad result) {
	next := maps.Clone(m)
	if vs, ok := r.form["metadata"]; ok && len(vs) > 0 && vs[0] == "" {
		clear(next)
	}
	for k, vs := range r.form {
		key, ok := strings.CutPrefix(k, "metadata[")
		if !ok || !strings.HasSuffix(key, "]") || len(vs) == 0 {
			continue
		}
		key = strings.TrimSuffix(key, "]")
		switch {
		case len(key) > 40:
			return invalid("parameter_invalid_string_too_long", fmt.Sprintf("Invalid metadata: keys can be at most 40 characters long, %q is not.", key))
		case len(vs[0]) > 500:
			return invalid("parameter_invalid_string_too_long", fmt.Sprintf("Invalid metadata: values can be at most 500 characters long, the value of %q is not.", key))
		case vs[0] == "":
			delete(next, key)
		default:
			next[key] = vs[0]
		}
	}
	if len(next) > 50 {
		return invalid("", "Invalid metadata: an object can have at most 50 keys.")
	}
	clear(m)
	maps.Copy(m, next)
	return result{}
}

// expanded reports whether the form asks to expand field, as expand[]=field
// or as stripe-go sends it, expand[0]=field.
func expanded(r *request, field string) bool {
	for k, vs := range r.form {
		if k != "expand[]" && !(strings.HasPrefix(k, "expand[") && strings.HasSuffix(k, "]")) {
			continue
		}
		for _, v := range vs {
			if v == field {
				return true
			}
		}
	}
	return false
}

// encode marshals v, each of the fields ids, an expandable object in v,
// reduced to its id as Stripe sends an object not expanded, and the fields
// of extra set to the raw JSON given.
func encode(v any, ids []string, extra map[string]json.RawMessage) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // stripe-go's types always marshal
	}
	if len(ids) == 0 && len(extra) == 0 {
		return b
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		panic(err)
	}
	for _, f := range ids {
		var o struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(m[f], &o) == nil && o.ID != "" {
			m[f], _ = json.Marshal(o.ID)
		} else {
			m[f] = json.RawMessage("null")
		}
	}
	for f, raw := range extra {
		m[f] = raw
	}
	b, _ = json.Marshal(m)
	return b
}

// cardJSON is the card as Stripe answers it: its cardholder in full, its
// number and CVC only when expanded.
func cardJSON(c *stripe.IssuingCard, number, cvc bool) []byte {
	view := *c
	if !number {
		view.Number = ""
	}
	if !cvc {
		view.CVC = ""
	}
	return encode(&view, nil, nil)
}

// transactionJSON is the transaction as Stripe answers it: its
// authorization, card and cardholder as ids, or its card in full when
// card, expanded, is given.
func transactionJSON(t *stripe.IssuingTransaction, card *stripe.IssuingCard) []byte {
	ids := []string{"authorization", "card", "cardholder", "balance_transaction", "dispute"}
	if card == nil {
		return encode(t, ids, nil)
	}
	return encode(t, ids, map[string]json.RawMessage{"card": cardJSON(card, false, false)})
}

// authorizationJSON is the authorization as Stripe answers it: its card in
// full, its cardholder as an id, its transactions in full.
func authorizationJSON(a *stripe.IssuingAuthorization) []byte {
	txns := make([]json.RawMessage, 0, len(a.Transactions))
	for _, t := range a.Transactions {
		txns = append(txns, transactionJSON(t, nil))
	}
	list, _ := json.Marshal(txns)
	return encode(a, []string{"cardholder"}, map[string]json.RawMessage{
		"card":         cardJSON(a.Card, false, false),
		"transactions": list,
	})
}
