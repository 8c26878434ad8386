package app

import (
	"fmt"
	"strings"
	"testing"
)

// TestExchangeRates: the console sets and lists a company's rates, each
// with its version; a changed rate gets a new version, an unchanged one
// keeps its own; the company quotes a conversion at its current rate.
func TestExchangeRates(t *testing.T) {
	e := newCustomersTestEnv(t)
	companyID, token := e.approvedCompany()
	path := "/admin/companies/" + companyID + "/exchange-rates"
	r := e.admin("PUT", path, `{"rates":[{"from_currency":"XAF","to_currency":"USD","rate":0.0016},{"from_currency":"USD","to_currency":"XAF","rate":655.957}]}`)
	if r.status != 200 {
		t.Fatalf("put rates: %s", r.raw)
	}
	versions := func(r result) map[string]string {
		t.Helper()
		out := map[string]string{}
		for _, it := range r.data()["rates"].([]any) {
			m := it.(map[string]any)
			out[m["from_currency"].(string)+"→"+m["to_currency"].(string)] = fmt.Sprint(m["exchangeRateId"]) + " " + fmt.Sprint(m["rate"])
		}
		return out
	}
	first := versions(r)
	if len(first) != 2 || !strings.HasSuffix(first["XAF→USD"], " 0.0016") || !strings.HasSuffix(first["USD→XAF"], " 655.957") {
		t.Fatalf("rates %v", first)
	}
	r = e.admin("PUT", path, `{"rates":[{"from_currency":"XAF","to_currency":"USD","rate":0.00160},{"from_currency":"USD","to_currency":"XAF","rate":650}]}`)
	second := versions(r)
	if second["XAF→USD"] != first["XAF→USD"] {
		t.Errorf("an unchanged rate got a new version: %s, then %s", first["XAF→USD"], second["XAF→USD"])
	}
	if second["USD→XAF"] == first["USD→XAF"] || !strings.HasSuffix(second["USD→XAF"], " 650") {
		t.Errorf("a changed rate: %s, then %s", first["USD→XAF"], second["USD→XAF"])
	}
	if got := versions(e.admin("GET", path, "")); len(got) != 2 || got["USD→XAF"] != second["USD→XAF"] {
		t.Errorf("GET rates %v, want %v", got, second)
	}

	for _, c := range []struct{ body, field string }{
		{`{"rates":[{"from_currency":"XAF","to_currency":"USD","rate":0}]}`, "rates[0].rate"},
		{`{"rates":[{"from_currency":"XAF","to_currency":"USD","rate":"0.0016"}]}`, "rates[0].rate"},
		{`{"rates":[{"from_currency":"XAF","to_currency":"USD","rate":0.1234567890123}]}`, "rates[0].rate"},
		{`{"rates":[{"from_currency":"XAF","to_currency":"USD"}]}`, "rates[0].rate"},
		{`{"rates":[{"from_currency":"XAF","to_currency":"XAF","rate":1}]}`, "rates[0].to_currency"},
		{`{"rates":[{"from_currency":"EUR","to_currency":"USD","rate":1}]}`, "rates[0].from_currency"},
		{`{"rates":[{"from_currency":"XAF","to_currency":"USD","rate":1},{"from_currency":"XAF","to_currency":"USD","rate":2}]}`, "rates[1]"},
		{`{}`, "rates"},
	} {
		if r := e.admin("PUT", path, c.body); r.status != 400 || r.str("field") != c.field {
			t.Errorf("%s: %d %s, want 400 on %s", c.body, r.status, r.raw, c.field)
		}
	}
	if r := e.admin("GET", "/admin/companies/0196d1e2-0000-7000-8000-00000000dead/exchange-rates", ""); r.status != 404 {
		t.Errorf("rates of an unknown company: %d %s", r.status, r.raw)
	}

	// 333 XAF at 0.0016 is 0.5328 USD: 0.53, less 1 % (0.0053, rounded to 0.01).
	q := e.call(e.wallets, token, "POST", "/company/exchange-rates/convert", `{"fromCurrency":"XAF","toCurrency":"USD","amount":333}`)
	if q.status != 200 || q.str("data", "convertedAmount") != "0.53" || q.str("data", "feeAmount") != "0.01" ||
		q.str("data", "netAmount") != "0.52" || q.str("data", "rate") != "0.0016" || q.str("data", "exchangeRateId")+" 0.0016" != second["XAF→USD"] {
		t.Errorf("convert: %s", q.raw)
	}
	for _, c := range []struct {
		body, code, field string
	}{
		{`{"fromCurrency":"XOF","toCurrency":"USD","amount":333}`, "NO_EXCHANGE_RATE", ""},
		{`{"fromCurrency":"XAF","toCurrency":"XAF","amount":333}`, "INVALID_FIELD", "toCurrency"},
		{`{"fromCurrency":"EUR","toCurrency":"USD","amount":333}`, "INVALID_FIELD", "fromCurrency"},
		{`{"fromCurrency":"XAF","toCurrency":"USD","amount":0.5}`, "INVALID_FIELD", "amount"},
	} {
		r := e.call(e.wallets, token, "POST", "/company/exchange-rates/convert", c.body)
		if r.status != 400 || r.str("code") != c.code || c.field != "" && r.str("field") != c.field {
			t.Errorf("convert %s: %d %s", c.body, r.status, r.raw)
		}
	}
	if r := e.call(e.wallets, token, "POST", "/company/exchange-rates/convert", `{"fromCurrency":"XOF","toCurrency":"USD","amount":1}`); r.str("message") != "no exchange rate configured for the pair" {
		t.Errorf("the spec's message: %s", r.raw)
	}
	// Another company has no rates.
	_, other := e.approvedCompany()
	if r := e.call(e.wallets, other, "POST", "/company/exchange-rates/convert", `{"fromCurrency":"XAF","toCurrency":"USD","amount":333}`); r.str("code") != "NO_EXCHANGE_RATE" {
		t.Errorf("another company's quote: %s", r.raw)
	}

	// The conversion fee is priced by the same calculator as the others.
	if r := e.call(e.wallets, token, "POST", "/wallets/calculate-transfer-fees", `{"type":"CONVERSION","currency":"USD","amount":100}`); r.status != 200 || r.str("data", "fee_amount") != "1" {
		t.Errorf("a conversion's fee: %s", r.raw)
	}
	if r := e.call(e.wallets, token, "POST", "/wallets/calculate-transfer-fees", `{"type":"TRANSFER","currency":"XAF","amount":1000}`); r.status != 200 || r.str("data", "fee_amount") != "0" {
		t.Errorf("an internal transfer's fee: %s", r.raw)
	}
	if r := e.call(e.wallets, token, "POST", "/wallets/calculate-transfer-fees", `{"type":"CONVERSION","operator":"mtn","currency":"USD","amount":100}`); r.status != 400 || r.str("field") != "operator" {
		t.Errorf("a conversion with an operator: %s", r.raw)
	}
}
