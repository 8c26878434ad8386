package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"payments/pkg/field"
)

// keysBody has every kind of place a key can be: a nested struct behind a
// pointer, an array of structs, a map, a raw value, an embedded struct and
// an untagged field.
type keysBody struct {
	Amount json.RawMessage `json:"amount"`
	Rate   *struct {
		ID string `json:"exchangeRateId"`
	} `json:"exchangeRate"`
	Rules []struct {
		Fixed json.Number `json:"fixed"`
	} `json:"rules"`
	Labels  map[string]string `json:"labels"`
	Extra   json.RawMessage   `json:"extra"`
	Ignored string            `json:"-"`
	Plain   string
	keysEmbedded
}

type keysEmbedded struct {
	Note string `json:"note"`
}

func TestDecodeKeys(t *testing.T) {
	many := func(last string) string {
		var b strings.Builder
		b.WriteString(`{"extra":{`)
		for i := range 20 {
			b.WriteString(`"k` + string(rune('a'+i)) + `":1,`)
		}
		return b.String() + last + `:2}}`
	}
	tests := []struct {
		name    string
		body    string
		field   string
		problem string // "" when the body decodes
	}{
		{"exact keys", `{"amount":1000,"exchangeRate":{"exchangeRateId":"r1"},"rules":[{"fixed":1}],"note":"n","Plain":"p"}`, "", ""},
		{"an escaped key is its text", `{"\u0061mount":1000}`, "", ""},
		{"map keys are any text", `{"labels":{"A":"1","a":"2"}}`, "", ""},
		{"a raw value's object keys are any text", `{"extra":{"A":1,"a":2}}`, "", ""},
		{"an empty object and array", `{"extra":{},"rules":[],"labels":{}}`, "", ""},

		{"a key in upper case beside its field", `{"amount":1000,"AMOUNT":5000}`, "AMOUNT", "unknown field (names are case-sensitive: amount)"},
		{"a key in upper case alone", `{"AMOUNT":5000}`, "AMOUNT", "unknown field (names are case-sensitive: amount)"},
		{"a key in another case", `{"Amount":5000}`, "Amount", "unknown field (names are case-sensitive: amount)"},
		{"an untagged field in another case", `{"plain":"p"}`, "plain", "unknown field (names are case-sensitive: Plain)"},
		{"a field the decoder skips", `{"Ignored":"x"}`, "Ignored", "unknown field"},
		{"an embedded field in another case", `{"NOTE":"n"}`, "NOTE", "unknown field (names are case-sensitive: note)"},
		{"a nested key in another case", `{"exchangeRate":{"exchangeRateID":"r1"}}`, "exchangeRate.exchangeRateID", "unknown field (names are case-sensitive: exchangeRateId)"},
		{"a key in an array's object", `{"rules":[{"fixed":1},{"FIXED":2}]}`, "rules[1].FIXED", "unknown field (names are case-sensitive: fixed)"},
		{"an unknown key", `{"fee":1}`, "fee", "unknown field"},

		{"a key twice", `{"amount":1000,"amount":5000}`, "amount", "is given more than once"},
		{"a key twice, once escaped", `{"amount":1000,"\u0061mount":5000}`, "amount", "is given more than once"},
		{"a nested key twice", `{"exchangeRate":{"exchangeRateId":"r1","exchangeRateId":"r2"}}`, "exchangeRate.exchangeRateId", "is given more than once"},
		{"a key twice in an array's object", `{"rules":[{"fixed":1,"fixed":2}]}`, "rules[0].fixed", "is given more than once"},
		{"a map key twice", `{"labels":{"a":"1","a":"2"}}`, "labels.a", "is given more than once"},
		{"a raw value's key twice", `{"extra":{"x":[{"y":1,"y":2}]}}`, "extra.x[0].y", "is given more than once"},
		{"a key twice in a large object", many(`"kc"`), "extra.kc", "is given more than once"},
		{"a large object's keys once", many(`"kz"`), "", ""},
		{"an empty key twice", `{"extra":{"":1,"":2}}`, "body", "has a key given more than once"},
		{"the duplicate before a later error", `{"amount":1,"amount":2,"fee":3}`, "amount", "is given more than once"},

		// What is not JSON is the decoder's to name.
		{"malformed after a key", `{"amount":1,`, "body", "malformed JSON: unexpected end"},
		{"a duplicate after malformed text", `{"amount":1 "amount":2}`, "body", "malformed JSON at offset 13"},
		{"a control character in a key", "{\"am\x01ount\":1,\"amount\":2}", "body", "malformed JSON at offset 5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v keysBody
			err := DecodeBytes([]byte(tt.body), &v)
			if tt.problem == "" {
				if err != nil {
					t.Fatalf("DecodeBytes(%s): %v", tt.body, err)
				}
				return
			}
			var fe *field.Error
			if !errors.As(err, &fe) || fe.Field != tt.field || fe.Problem != tt.problem {
				t.Fatalf("DecodeBytes(%s) = %v, want %s: %s", tt.body, err, tt.field, tt.problem)
			}
		})
	}
}

// TestShapeOfSelfReference checks that a type that refers to itself has a
// shape, and checks its keys at every depth.
func TestShapeOfSelfReference(t *testing.T) {
	type node struct {
		Name string `json:"name"`
		Next *node  `json:"next"`
	}
	var v node
	err := DecodeBytes([]byte(`{"name":"a","next":{"name":"b","next":{"NAME":"c"}}}`), &v)
	var fe *field.Error
	if !errors.As(err, &fe) || fe.Field != "next.next.NAME" {
		t.Fatalf("err = %v, want next.next.NAME unknown", err)
	}
}

// FuzzCheckKeys holds the key check to encoding/json: every JSON text is
// read to its end (none is left to the decoder as not JSON), and a body
// DecodeBytes accepts has each key once in its object and no key but the
// fields of payload, as spelled.
func FuzzCheckKeys(f *testing.F) {
	for _, s := range []string{
		`{"name":"a","amount":12.5,"count":2,"nested":{"flag":true}}`,
		`{"amount":1000,"AMOUNT":5000}`, `{"amount":1000,"amount":5000}`, `{"\u0061mount":1,"amount":2}`,
		`{"nested":{"flag":true,"Flag":false}}`, `[{"a":[1,{"b":null}]},"x\"y",-1.5e+3,true]`, " { } ", `{"n\u00e9":1}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		if json.Valid([]byte(body)) {
			k := keyScanner{data: []byte(body)}
			err := k.value(nil)
			switch dup := hasDuplicate(body); {
			case err == errNotJSON:
				t.Fatalf("%q: valid JSON read as not JSON at %d", body, k.i)
			case err != nil && !dup:
				t.Fatalf("%q: %v, but no key is given twice", body, err)
			case err == nil && dup:
				t.Fatalf("%q: a key given twice not seen", body)
			case err == nil && len(bytes.TrimSpace(k.data[k.i:])) > 0:
				t.Fatalf("%q: %q left unread", body, k.data[k.i:])
			}
		}
		var p payload
		if DecodeBytes([]byte(body), &p) != nil {
			return
		}
		if hasDuplicate(body) {
			t.Fatalf("%q: accepted with a key given twice", body)
		}
		var keys map[string]json.RawMessage
		if json.Unmarshal([]byte(body), &keys) != nil {
			t.Fatalf("%q: accepted, not an object", body)
		}
		fields := map[string]bool{"name": true, "amount": true, "count": true, "nested": true}
		for key := range keys {
			if !fields[key] {
				t.Fatalf("%q: accepted with key %q", body, key)
			}
		}
		var nested map[string]json.RawMessage
		if json.Unmarshal(keys["nested"], &nested) == nil {
			for key := range nested {
				if key != "flag" {
					t.Fatalf("%q: accepted with nested key %q", body, key)
				}
			}
		}
	})
}

// hasDuplicate reports whether some object of body, a JSON text, has a key
// twice, reading it with encoding/json's tokens.
func hasDuplicate(body string) bool {
	dec := json.NewDecoder(strings.NewReader(body))
	type frame struct {
		object bool
		keys   map[string]bool
		expect bool // the next string token of an object is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.expect {
			if key, ok := tok.(string); ok {
				if top.keys[key] {
					return true
				}
				top.keys[key] = true
				top.expect = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, keys: map[string]bool{}, expect: true})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		// A value was read: the next string of its object is a key.
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].expect = true
		}
	}
}
