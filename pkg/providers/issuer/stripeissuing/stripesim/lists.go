package stripesim

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/stripe/stripe-go/v85"
)

// listed is an object of a list: its id, creation time and JSON.
type listed struct {
	id      string
	created int64
	json    func() []byte
}

// list answers a list request of url over all (oldest first) as Stripe
// lists: newest first, created filtered by created (an exact time) or its
// gt, gte, lt, lte bounds, limit (1 to 100, default 10) objects after the
// object starting_after, or before the object ending_before (the limit
// nearest to it, still newest first), has_more telling whether more are
// left that way. s.mu is held.
func (s *Sim) list(r *request, url string, all []listed) result {
	newest := slices.Clone(all)
	slices.Reverse(newest)
	keep, bad := createdFilter(r)
	if bad.status != 0 {
		return bad
	}
	limit := int64(10)
	if n, has, bad := formInt(r, "limit"); bad.status != 0 {
		return bad
	} else if has {
		if n < 1 || n > 100 {
			return invalid("parameter_invalid_integer", "limit must be between 1 and 100.")
		}
		limit = n
	}
	at := func(id string) (int, result) {
		i := slices.IndexFunc(newest, func(o listed) bool { return o.id == id })
		if i < 0 {
			return 0, invalid("resource_missing", fmt.Sprintf("No such object: '%s'", id))
		}
		return i, result{}
	}
	var page []listed
	more := false
	switch after, before := r.form.Get("starting_after"), r.form.Get("ending_before"); {
	case after != "" && before != "":
		return invalid("", "You may only specify one of these parameters: starting_after, ending_before.")
	case before != "":
		i, bad := at(before)
		if bad.status != 0 {
			return bad
		}
		page = slices.DeleteFunc(slices.Clone(newest[:i]), func(o listed) bool { return !keep(o.created) })
		if int64(len(page)) > limit {
			page, more = page[int64(len(page))-limit:], true
		}
	default:
		from := 0
		if after != "" {
			i, bad := at(after)
			if bad.status != 0 {
				return bad
			}
			from = i + 1
		}
		page = slices.DeleteFunc(slices.Clone(newest[from:]), func(o listed) bool { return !keep(o.created) })
		if int64(len(page)) > limit {
			page, more = page[:limit], true
		}
	}
	data := make([]json.RawMessage, 0, len(page))
	for _, o := range page {
		data = append(data, o.json())
	}
	b, _ := json.Marshal(map[string]any{"object": "list", "url": url, "has_more": more, "data": data})
	return ok(b)
}

// createdFilter reads the form's created filter: created=<time>, or its
// created[gt], [gte], [lt], [lte] bounds.
func createdFilter(r *request) (func(int64) bool, result) {
	bound := func(key string) (int64, bool, result) {
		v := r.form.Get(key)
		if v == "" {
			return 0, false, result{}
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, false, invalid("parameter_invalid_integer", fmt.Sprintf("Invalid integer: %s", v))
		}
		return n, true, result{}
	}
	type test struct {
		key string
		ok  func(c, b int64) bool
	}
	var checks []func(int64) bool
	for _, t := range []test{
		{"created", func(c, b int64) bool { return c == b }},
		{"created[gt]", func(c, b int64) bool { return c > b }},
		{"created[gte]", func(c, b int64) bool { return c >= b }},
		{"created[lt]", func(c, b int64) bool { return c < b }},
		{"created[lte]", func(c, b int64) bool { return c <= b }},
	} {
		b, has, bad := bound(t.key)
		if bad.status != 0 {
			return nil, bad
		}
		if has {
			checks = append(checks, func(c int64) bool { return t.ok(c, b) })
		}
	}
	return func(c int64) bool {
		for _, ok := range checks {
			if !ok(c) {
				return false
			}
		}
		return true
	}, result{}
}

// listTransactions answers GET /v1/issuing/transactions (card and type
// filters too; expand[]=data.card gives each its card in full).
func (s *Sim) listTransactions(r *request) result {
	s.mu.Lock()
	defer s.mu.Unlock()
	card, typ, full := r.form.Get("card"), r.form.Get("type"), expanded(r, "data.card")
	var all []listed
	for _, t := range s.txnList {
		if card != "" && t.Card.ID != card || typ != "" && string(t.Type) != typ {
			continue
		}
		all = append(all, listed{t.ID, t.Created, func() []byte {
			if full {
				return transactionJSON(t, s.cards[t.Card.ID])
			}
			return transactionJSON(t, nil)
		}})
	}
	return s.list(r, "/v1/issuing/transactions", all)
}

// listAuthorizations answers GET /v1/issuing/authorizations (card and
// status filters too).
func (s *Sim) listAuthorizations(r *request) result {
	s.mu.Lock()
	defer s.mu.Unlock()
	card, status := r.form.Get("card"), r.form.Get("status")
	var all []listed
	for _, a := range s.authList {
		if card != "" && a.Card.ID != card || status != "" && string(a.Status) != status {
			continue
		}
		all = append(all, listed{a.ID, a.Created, func() []byte { return authorizationJSON(a) }})
	}
	return s.list(r, "/v1/issuing/authorizations", all)
}

// listDisputes answers GET /v1/issuing/disputes (transaction and status
// filters too; expand[]=data.balance_transactions, data.transaction).
func (s *Sim) listDisputes(r *request) result {
	s.mu.Lock()
	defer s.mu.Unlock()
	tx, status := r.form.Get("transaction"), r.form.Get("status")
	var all []listed
	for _, d := range s.disputeList {
		if tx != "" && d.d.Transaction.ID != tx || status != "" && string(d.d.Status) != status {
			continue
		}
		all = append(all, listed{d.d.ID, d.d.Created, func() []byte { return s.disputeJSON(d, r, "data.") }})
	}
	return s.list(r, "/v1/issuing/disputes", all)
}

// getBalance answers GET /v1/balance: the Issuing balance available, in
// USD, as the simulation keeps it; the payments balance is 0.
func (s *Sim) getBalance(*request) result {
	s.mu.Lock()
	defer s.mu.Unlock()
	zero := []*stripe.BalanceAmount{{Amount: 0, Currency: stripe.CurrencyUSD}}
	b := &stripe.Balance{
		Object: "balance", Available: zero, Pending: zero,
		Issuing: &stripe.BalanceIssuing{Available: []*stripe.BalanceAmount{{Amount: s.balance, Currency: stripe.CurrencyUSD}}},
	}
	return ok(encode(b, nil, nil))
}

// TopUp adds amount, USD cents, to the Issuing balance, as a top-up
// Stripe's dashboard or a bank transfer makes (neither is in the API the
// simulation serves).
func (s *Sim) TopUp(amount int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.balance += amount
}
