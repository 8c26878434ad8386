package fx_test

import (
	"fmt"
	"strings"
	"testing"

	"payments/pkg/app/apptest"
)

// TestExchangeRates: the console sets and lists a company's rates, each
// with its version; a changed rate gets a new version, an unchanged one
// keeps its own; the company quotes a deposit at its current rate.
func TestExchangeRates(t *testing.T) {
	t.Parallel()
	e := apptest.NewCustomersTestEnv(t)
	companyID, token := e.ApprovedCompany()
	path := "/admin/companies/" + companyID + "/exchange-rates"
	r := e.Admin("PUT", path, `{"rates":[{"from_currency":"XAF","to_currency":"USD","rate":0.0016},{"from_currency":"USD","to_currency":"XAF","rate":655.957}]}`)
	if r.Status != 200 {
		t.Fatalf("put rates: %s", r.Raw)
	}
	versions := func(r apptest.Result) map[string]string {
		t.Helper()
		out := map[string]string{}
		for _, it := range r.Data()["rates"].([]any) {
			m := it.(map[string]any)
			out[m["from_currency"].(string)+"→"+m["to_currency"].(string)] = fmt.Sprint(m["exchangeRateId"]) + " " + fmt.Sprint(m["rate"])
		}
		return out
	}
	first := versions(r)
	if len(first) != 2 || !strings.HasSuffix(first["XAF→USD"], " 0.0016") || !strings.HasSuffix(first["USD→XAF"], " 655.957") {
		t.Fatalf("rates %v", first)
	}
	r = e.Admin("PUT", path, `{"rates":[{"from_currency":"XAF","to_currency":"USD","rate":0.00160},{"from_currency":"USD","to_currency":"XAF","rate":650}]}`)
	second := versions(r)
	if second["XAF→USD"] != first["XAF→USD"] {
		t.Errorf("an unchanged rate got a new version: %s, then %s", first["XAF→USD"], second["XAF→USD"])
	}
	if second["USD→XAF"] == first["USD→XAF"] || !strings.HasSuffix(second["USD→XAF"], " 650") {
		t.Errorf("a changed rate: %s, then %s", first["USD→XAF"], second["USD→XAF"])
	}
	if got := versions(e.Admin("GET", path, "")); len(got) != 2 || got["USD→XAF"] != second["USD→XAF"] {
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
		if r := e.Admin("PUT", path, c.body); r.Status != 400 || r.Str("field") != c.field {
			t.Errorf("%s: %d %s, want 400 on %s", c.body, r.Status, r.Raw, c.field)
		}
	}
	if r := e.Admin("GET", "/admin/companies/0196d1e2-0000-7000-8000-00000000dead/exchange-rates", ""); r.Status != 404 {
		t.Errorf("rates of an unknown company: %d %s", r.Status, r.Raw)
	}

	// 333 XAF at 0.0016 is 0.5328 USD: 0.53; the 1 % fee, 3.33 XAF,
	// rounds to 3 XAF, on top: 336 XAF.
	q := e.Call(e.Wallets, token, "POST", "/company/exchange-rates/convert", `{"fromCurrency":"XAF","toCurrency":"USD","amount":333}`)
	if q.Status != 200 || q.Str("data", "convertedAmount") != "0.53" || q.Str("data", "feeAmount") != "3" || q.Str("data", "feeCurrency") != "XAF" ||
		q.Str("data", "totalAmount") != "336" || q.Str("data", "netAmount") != "0.53" || q.Str("data", "rate") != "0.0016" || q.Str("data", "exchangeRateId")+" 0.0016" != second["XAF→USD"] {
		t.Errorf("convert: %s", q.Raw)
	}
	for _, c := range []struct {
		body, code, field string
	}{
		{`{"fromCurrency":"XOF","toCurrency":"USD","amount":333}`, "NO_EXCHANGE_RATE", ""},
		{`{"fromCurrency":"XAF","toCurrency":"XAF","amount":333}`, "INVALID_FIELD", "toCurrency"},
		{`{"fromCurrency":"EUR","toCurrency":"USD","amount":333}`, "INVALID_FIELD", "fromCurrency"},
		{`{"fromCurrency":"XAF","toCurrency":"USD","amount":0.5}`, "INVALID_FIELD", "amount"},
	} {
		r := e.Call(e.Wallets, token, "POST", "/company/exchange-rates/convert", c.body)
		if r.Status != 400 || r.Str("code") != c.code || c.field != "" && r.Str("field") != c.field {
			t.Errorf("convert %s: %d %s", c.body, r.Status, r.Raw)
		}
	}
	if r := e.Call(e.Wallets, token, "POST", "/company/exchange-rates/convert", `{"fromCurrency":"XOF","toCurrency":"USD","amount":1}`); r.Str("message") != "no exchange rate configured for the pair" {
		t.Errorf("the spec's message: %s", r.Raw)
	}
	// Another company has no rates.
	_, other := e.ApprovedCompany()
	if r := e.Call(e.Wallets, other, "POST", "/company/exchange-rates/convert", `{"fromCurrency":"XAF","toCurrency":"USD","amount":333}`); r.Str("code") != "NO_EXCHANGE_RATE" {
		t.Errorf("another company's quote: %s", r.Raw)
	}

	// The conversion fee is priced by the same calculator as the others.
	if r := e.Call(e.Wallets, token, "POST", "/wallets/calculate-transfer-fees", `{"type":"CONVERSION","currency":"USD","amount":100}`); r.Status != 200 || r.Str("data", "fee_amount") != "1" {
		t.Errorf("a conversion's fee: %s", r.Raw)
	}
	if r := e.Call(e.Wallets, token, "POST", "/wallets/calculate-transfer-fees", `{"type":"TRANSFER","currency":"XAF","amount":1000}`); r.Status != 200 || r.Str("data", "fee_amount") != "0" {
		t.Errorf("an internal transfer's fee: %s", r.Raw)
	}
	if r := e.Call(e.Wallets, token, "POST", "/wallets/calculate-transfer-fees", `{"type":"CONVERSION","operator":"mtn","currency":"USD","amount":100}`); r.Status != 400 || r.Str("field") != "operator" {
		t.Errorf("a conversion with an operator: %s", r.Raw)
	}
}

// TestQuoteThenDeposit quotes a deposit, then makes it at the quote's
// rate version: the deposit moves, to the minor unit, what the quote
// priced (the CONVERSION fee in fromCurrency, on the amount, on top of
// it; the converted amount credited in full), over currencies with 0 and
// 2 decimals and amounts whose fee or conversion rounds. Between XAF and
// USD, a conversion then moves what its preview priced: the fee in USD,
// out of the converted amount.
func TestQuoteThenDeposit(t *testing.T) {
	t.Parallel()
	type conversion struct{ fee, credited string }
	tests := []struct {
		name, from, to, rate, amount string
		// What the quote prices and the deposit moves: the fee (in from),
		// the total debited (in from), the amount converted and
		// credited (in to).
		fee, total, converted string
		// The source's payin balance after the deposit, out of 5000.
		left string
		// A conversion of the same amount, XAF to USD only.
		conversion *conversion
	}{
		{"XAF to USD: the fee's half rounds up", "XAF", "USD", "0.001667", "1050", "11", "1061", "1.75", "3939", &conversion{"0.02", "1.73"}},
		{"XAF to USD: a fee of half a franc", "XAF", "USD", "0.0016", "50", "1", "51", "0.08", "4949", &conversion{"0", "0.08"}},
		{"CDF to USD", "CDF", "USD", "0.00035", "1234.56", "12.35", "1246.91", "0.43", "3753.09", nil},
		{"USD to CDF: the conversion's half rounds up", "USD", "CDF", "2850.5", "10.05", "0.1", "10.15", "28647.53", "4989.85", nil},
		{"XAF to CDF", "XAF", "CDF", "4.6125", "777", "8", "785", "3583.91", "4215", nil},
		{"CDF to XAF", "CDF", "XAF", "0.2168", "999.99", "10", "1009.99", "217", "3990.01", nil},
		{"USD to XAF", "USD", "XAF", "655.957", "1.01", "0.01", "1.02", "663", "4998.98", nil},
	}
	e := apptest.NewPaymentsTestEnv(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			companyID, token, xaf := e.Company("")
			wallet := map[string]string{
				"XAF": xaf,
				"USD": e.OpenWallet(token, "USD", "United States", "US", "+1"),
				"CDF": e.OpenWallet(token, "CDF", "Democratic Republic of the Congo", "CD", "+243"),
			}
			src, dst := wallet[tt.from], wallet[tt.to]
			e.FundPayin(src, "5000")
			rateID := e.SetRate(companyID, tt.from, tt.to, tt.rate)

			q := e.Call(e.Wallets, token, "POST", "/company/exchange-rates/convert",
				fmt.Sprintf(`{"fromCurrency":%q,"toCurrency":%q,"amount":%s}`, tt.from, tt.to, tt.amount))
			got := join(q.Str("data", "amount"), q.Str("data", "feeAmount"), q.Str("data", "feeCurrency"),
				q.Str("data", "totalAmount"), q.Str("data", "convertedAmount"), q.Str("data", "netAmount"), q.Str("data", "exchangeRateId"))
			if want := join(tt.amount, tt.fee, tt.from, tt.total, tt.converted, tt.converted, rateID); q.Status != 200 || got != want {
				t.Fatalf("quote: %s\ngot  %s\nwant %s", q.Raw, got, want)
			}

			d := e.Call(e.Wallets, token, "POST", "/wallets/deposit",
				`{"sourceWallet":{"id":"`+src+`","amount":`+tt.amount+`},"destinationWallet":{"id":"`+dst+`"},"exchangeRate":{"exchangeRateId":"`+rateID+`"}}`)
			got = join(d.Str("data", "amount"), d.Str("data", "fee_amount"), d.Str("data", "total_amount"), d.Str("data", "converted_amount"), d.Str("data", "exchangeRateId"))
			if want := join(q.Str("data", "amount"), q.Str("data", "feeAmount"), q.Str("data", "totalAmount"), q.Str("data", "convertedAmount"), rateID); d.Status != 200 || got != want {
				t.Fatalf("deposit: %s\ngot  %s\nwant %s, the quote's", d.Raw, got, want)
			}
			en := e.EntriesOf(token, d.Str("data", "deposit_id"))
			if got, want := join(en[src]["amount"], en[src]["fee_amount"], en[src]["amount_with_fee"], en[dst]["amount"]), join(tt.amount, tt.fee, tt.total, tt.converted); got != want {
				t.Errorf("entries %s, want %s", got, want)
			}
			if got, want := e.Balances(token, src)+", "+e.Balances(token, dst), "payin "+tt.left+" payout 0, payin 0 payout "+tt.converted; got != want {
				t.Errorf("after the deposit: %s, want %s", got, want)
			}

			if c := tt.conversion; c != nil {
				body := `{"source_wallet_id":"` + src + `","amount":` + tt.amount + `,"exchangeRateId":"` + rateID + `"}`
				want := join(tt.amount, tt.converted, c.fee, c.credited)
				for _, route := range []string{"/partner/wallets/preview-conversion", "/partner/wallets/xaf-usd-conversion"} {
					r := e.Call(e.Wallets, token, "POST", route, body)
					if got := join(r.Str("data", "amount"), r.Str("data", "converted_amount"), r.Str("data", "fee_amount"), r.Str("data", "credited_amount")); r.Status != 200 || got != want {
						t.Errorf("%s: %s\ngot  %s\nwant %s", route, r.Raw, got, want)
					}
				}
			}
			e.VerifyBoth(companyID)
		})
	}
}
