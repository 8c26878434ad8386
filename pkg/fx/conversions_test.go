package fx_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"payments/pkg/app/apptest"
	"payments/pkg/function/webhooksapi"
	"payments/pkg/ids"
	"payments/pkg/waittest"
)

// TestConversion previews and makes a conversion of 1,000 XAF at 0.001667
// USD per XAF: 1.667 USD rounds to 1.67, the 1 % fee (0.0167) to 0.02, and
// 1.65 reaches the USD wallet's payout balance. The preview moves nothing;
// the conversion writes a TRANSFER entry on each wallet and its event.
func TestConversion(t *testing.T) {
	t.Parallel()
	e := apptest.NewPaymentsTestEnv(t)
	companyID, token, xaf, usd, rateID := e.FxCompany("10000", "0.001667")
	hooks, err := webhooksapi.New(context.Background(), apptest.Recording(e.Cfg, "webhooks"))
	if err != nil {
		t.Fatal(err)
	}
	body := `{"source_wallet_id":"` + xaf + `","amount":1000,"exchangeRateId":"` + rateID + `"}`
	want := map[string]string{
		"source_wallet_id": xaf, "usd_wallet_id": usd, "amount": "1000", "currency": "XAF", "rate": "0.001667",
		"exchangeRateId": rateID, "converted_amount": "1.67", "fee_amount": "0.02", "credited_amount": "1.65",
		"source_payin_balance_after": "9000", "usd_balance_after": "1.65",
	}
	check := func(r apptest.Result) {
		t.Helper()
		if r.Status != 200 || len(r.Data()) != len(want)+1 {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
		for k, v := range want {
			if got := r.Str("data", k); got != v {
				t.Errorf("%s = %s, want %s", k, got, v)
			}
		}
	}

	p := e.Call(e.Wallets, token, "POST", "/partner/wallets/preview-conversion", body)
	check(p)
	if p.Str("data", "conversion_id") != "<nil>" {
		t.Errorf("a preview's conversion_id: %s", p.Raw)
	}
	if got := e.Balances(token, xaf) + ", " + e.Balances(token, usd); got != "payin 10000 payout 0, payin 0 payout 0" {
		t.Errorf("after the preview: %s", got)
	}
	// Without exchangeRateId, the current version is quoted.
	check(e.Call(e.Wallets, token, "POST", "/partner/wallets/preview-conversion", `{"source_wallet_id":"`+xaf+`","amount":1000}`))

	r := e.Call(e.Wallets, token, "POST", "/partner/wallets/xaf-usd-conversion", body)
	check(r)
	id := r.Str("data", "conversion_id")
	if !ids.IsUUID(id) {
		t.Fatalf("conversion_id %q", id)
	}
	if got := e.Balances(token, xaf) + ", " + e.Balances(token, usd); got != "payin 9000 payout 0, payin 0 payout 1.65" {
		t.Errorf("after the conversion: %s", got)
	}
	entries := e.EntriesOf(token, id)
	src, dst := entries[xaf], entries[usd]
	if src == nil || dst == nil || len(entries) != 2 {
		t.Fatalf("entries of %s: %v", id, entries)
	}
	for _, c := range []struct {
		entry                                                   map[string]any
		balance, amount, fee, net, before, after, amountWithFee string
	}{
		{src, "payin", "1000", "0", "1000", "10000", "9000", "1000"},
		{dst, "payout", "1.67", "0.02", "1.65", "0", "1.65", "1.67"},
	} {
		got := join(c.entry["balance"], c.entry["amount"], c.entry["fee_amount"], c.entry["net_amount"],
			c.entry["wallet_balance_before"], c.entry["wallet_balance_after"], c.entry["amount_with_fee"], c.entry["status"])
		if w := join(c.balance, c.amount, c.fee, c.net, c.before, c.after, c.amountWithFee, "SUCCESS"); got != w {
			t.Errorf("entry %s, want %s", got, w)
		}
	}

	var found bool
	for _, it := range e.Call(hooks, token, "GET", "/webhooks/events?limit=100", "").Items() {
		ev := it.(map[string]any)
		pl, _ := ev["payload"].(map[string]any)
		if ev["event"] == "wallet.conversion.completed" && pl["conversion_id"] == id {
			found = true
			if join(pl["credited_amount"], pl["exchange_rate_id"], pl["usd_wallet_id"]) != join("1.65", rateID, usd) {
				t.Errorf("payload %v", pl)
			}
		}
	}
	if !found {
		t.Errorf("no wallet.conversion.completed for %s", id)
	}
	e.VerifyBoth(companyID)
}

// TestConcurrentConversions sends 100 conversions of 1,000 XAF at once
// against a payin balance that covers exactly 40: 40 are made, 60 refused,
// no balance goes negative, and the USD wallet holds 40 × 1.65 USD, each
// conversion's entries rounded by the documented rule.
func TestConcurrentConversions(t *testing.T) {
	if testing.Short() {
		t.Skip("needs DynamoDB Local: too slow on the in-memory one, which serves one request at a time (tens of seconds of contended writes): make test")
	}
	e := apptest.NewPaymentsTestEnv(t)
	companyID, token, xaf, usd, rateID := e.FxCompany("40000", "0.001667")
	body := `{"source_wallet_id":"` + xaf + `","amount":1000,"exchangeRateId":"` + rateID + `"}`
	results := make([]apptest.Result, 100)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() { results[i] = e.Call(e.Wallets, token, "POST", "/partner/wallets/xaf-usd-conversion", body) })
	}
	wg.Wait()
	count := map[string]int{}
	var ids []string
	for _, r := range results {
		count[fmt.Sprint(r.Status, " ", r.Str("code"))]++
		if r.Status == 200 {
			ids = append(ids, r.Str("data", "conversion_id"))
		} else if r.Str("message") != "insufficient wallet balance" {
			t.Errorf("refusal %s", r.Raw)
		}
	}
	if count["200 <nil>"] != 40 || count["400 INSUFFICIENT_WALLET_BALANCE"] != 60 {
		t.Fatalf("statuses %v, want 40 × 200 and 60 × 400", count)
	}
	if got := e.Balances(token, xaf) + ", " + e.Balances(token, usd); got != "payin 0 payout 0, payin 0 payout 66" {
		t.Errorf("after the conversions: %s", got)
	}
	for _, id := range ids {
		en := e.EntriesOf(token, id)
		if join(en[xaf]["amount"], en[usd]["amount"], en[usd]["fee_amount"], en[usd]["net_amount"]) != "1000 1.67 0.02 1.65" {
			t.Errorf("entries of %s: %v", id, en)
		}
	}
	e.VerifyBoth(companyID)
}

// TestDepositsRaceARateChange sends 50 deposits of 1,000 XAF quoted at
// 0.0016 USD per XAF while the console changes the rate to 0.0017: each
// deposit either ran at 0.0016 (1.60 USD) or was refused RATE_CHANGED;
// none ran at the new rate.
func TestDepositsRaceARateChange(t *testing.T) {
	t.Parallel()
	e := apptest.NewPaymentsTestEnv(t)
	companyID, token, xaf, usd, _ := e.FxCompany("60000", "0.0016")
	q := e.Call(e.Wallets, token, "POST", "/company/exchange-rates/convert", `{"fromCurrency":"XAF","toCurrency":"USD","amount":1000}`)
	old := q.Str("data", "exchangeRateId")
	body := `{"sourceWallet":{"id":"` + xaf + `","amount":1000},"destinationWallet":{"id":"` + usd + `"},"exchangeRate":{"exchangeRateId":"` + old + `"}}`

	results := make([]apptest.Result, 50)
	var done atomic.Int32
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			results[i] = e.Call(e.Wallets, token, "POST", "/wallets/deposit", body)
			done.Add(1)
		})
	}
	waittest.Until(t, 30*time.Second, "a first deposit", func() bool { return done.Load() > 0 })
	newID := e.SetRate(companyID, "XAF", "USD", "0.0017")
	wg.Wait()

	made := 0
	for _, r := range results {
		switch {
		case r.Status == 200:
			made++
			id := r.Str("data", "deposit_id")
			if join(r.Str("data", "rate"), r.Str("data", "exchangeRateId"), r.Str("data", "converted_amount"), r.Str("data", "total_amount")) != join("0.0016", old, "1.6", "1010") {
				t.Errorf("deposit %s", r.Raw)
			}
			en := e.EntriesOf(token, id)
			if join(en[xaf]["amount"], en[xaf]["fee_amount"], en[xaf]["amount_with_fee"], en[usd]["amount"]) != "1000 10 1010 1.6" {
				t.Errorf("entries of deposit %s: %v", id, en)
			}
		case r.Status != 400 || r.Str("code") != "RATE_CHANGED" || r.Str("message") != "exchange rate has changed; request a new quote":
			t.Errorf("deposit: %d %s", r.Status, r.Raw)
		}
	}
	if made == 0 {
		t.Fatal("no deposit ran before the rate changed")
	}
	t.Logf("%d deposits ran at the old rate, %d were refused", made, len(results)-made)
	if r := e.Call(e.Wallets, token, "POST", "/wallets/deposit", body); r.Str("code") != "RATE_CHANGED" {
		t.Errorf("a deposit at the old version after the change: %s", r.Raw)
	}
	wantXAF, wantUSD := 60000-1010*made, 160*made
	if got, want := e.Balances(token, xaf)+", "+e.Balances(token, usd), fmt.Sprintf("payin %d payout 0, payin 0 payout %s", wantXAF, dollars(wantUSD)); got != want {
		t.Errorf("after %d deposits: %s, want %s", made, got, want)
	}
	// At the new version, the new rate.
	body = strings.Replace(body, old, newID, 1)
	if r := e.Call(e.Wallets, token, "POST", "/wallets/deposit", body); r.Status != 200 || r.Str("data", "converted_amount") != "1.7" {
		t.Errorf("a deposit at the new version: %s", r.Raw)
	}
	e.VerifyBoth(companyID)
}

// join returns the values' texts separated by spaces.
func join(vs ...any) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = fmt.Sprint(v)
	}
	return strings.Join(out, " ")
}

// dollars formats cents as GET /wallets shows them.
func dollars(cents int) string {
	s := fmt.Sprintf("%d.%02d", cents/100, cents%100)
	return strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
}

// TestDeposit moves 1,000 XAF from the payin balance of an XAF wallet to
// the payout balance of an XOF wallet at 1 XOF per XAF: the source pays
// 1,010 XAF (the 1 % fee in XAF), the destination gets 1,000 XOF; the
// response shows both wallets as GET /wallets does.
func TestDeposit(t *testing.T) {
	t.Parallel()
	e := apptest.NewPaymentsTestEnv(t)
	companyID, token, xaf := e.Company("")
	xof := e.OpenWallet(token, "XOF", "Senegal", "SN", "+221")
	e.FundPayin(xaf, "5000")
	rateID := e.SetRate(companyID, "XAF", "XOF", "1")
	r := e.Call(e.Wallets, token, "POST", "/wallets/deposit",
		`{"sourceWallet":{"id":"`+xaf+`","amount":1000},"destinationWallet":{"id":"`+xof+`"},"exchangeRate":{"exchangeRateId":"`+rateID+`"}}`)
	if r.Status != 200 {
		t.Fatalf("deposit: %s", r.Raw)
	}
	got := join(r.Str("data", "amount"), r.Str("data", "fee_amount"), r.Str("data", "total_amount"), r.Str("data", "rate"),
		r.Str("data", "exchangeRateId"), r.Str("data", "converted_amount"))
	if want := join("1000", "10", "1010", "1", rateID, "1000"); got != want {
		t.Errorf("deposit %s, want %s", got, want)
	}
	for field, id := range map[string]string{"source_wallet": xaf, "destination_wallet": xof} {
		shown := r.Data()[field].(map[string]any)
		listed := e.Wallet(token, id)
		if fmt.Sprint(shown) != fmt.Sprint(listed) {
			t.Errorf("%s %v, GET /wallets %v", field, shown, listed)
		}
	}
	if got := e.Balances(token, xaf) + ", " + e.Balances(token, xof); got != "payin 3990 payout 0, payin 0 payout 1000" {
		t.Errorf("after the deposit: %s", got)
	}
	e.VerifyBoth(companyID)
}

// TestConversionPaysDebts converts into a USD wallet while the company
// owes 0.50 USD: the debt is paid from the credit, in the same
// transaction, and the wallet keeps the rest.
func TestConversionPaysDebts(t *testing.T) {
	t.Parallel()
	e := apptest.NewPaymentsTestEnv(t)
	companyID, token, xaf, usd, _ := e.FxCompany("10000", "0.001667")
	debtID := e.PutDebt(companyID, 50, time.Now().UTC().Add(-time.Minute))
	r := e.Call(e.Wallets, token, "POST", "/partner/wallets/xaf-usd-conversion", `{"source_wallet_id":"`+xaf+`","amount":1000}`)
	if r.Status != 200 || r.Str("data", "credited_amount") != "1.65" || r.Str("data", "usd_balance_after") != "1.15" {
		t.Fatalf("conversion: %s", r.Raw)
	}
	if got := e.Balances(token, usd); got != "payin 0 payout 1.15" {
		t.Errorf("USD wallet: %s", got)
	}
	fees := e.Call(e.Wallets, token, "GET", "/wallet/transactions?type=FEE", "")
	if len(fees.Items()) != 1 || fees.Items()[0].(map[string]any)["reference"] != debtID {
		t.Errorf("FEE entries: %s", fees.Raw)
	}
	if d := e.Call(e.Wallets, token, "GET", "/debts", ""); len(d.Items()) != 1 || d.Items()[0].(map[string]any)["status"] != "RECOVERED" {
		t.Errorf("debts: %s", d.Raw)
	}
	e.VerifyBoth(companyID)
}

// TestConversionRefusals: each refusal of a conversion, its preview and a
// deposit is a 400 (or a 404 for a wallet that is not the company's) that
// moves nothing.
func TestConversionRefusals(t *testing.T) {
	t.Parallel()
	e := apptest.NewPaymentsTestEnv(t)
	companyID, token, xaf, usd, rateID := e.FxCompany("10000", "0.0016")
	xof := e.OpenWallet(token, "XOF", "Senegal", "SN", "+221") // no XOF → USD rate
	gnf := e.OpenWallet(token, "GNF", "Guinea", "GN", "+224")
	xafGA := e.OpenWallet(token, "XAF", "Gabon", "GA", "+241")
	e.FundPayin(xof, "10000")
	e.FundPayin(gnf, "10000")
	xafXOF := e.SetRate(companyID, "XAF", "XOF", "1")
	stale := rateID
	rateID = e.SetRate(companyID, "XAF", "USD", "0.0017")
	_, otherToken, otherXAF, _, _ := e.FxCompany("10000", "0.0016")
	noUSD, noUSDToken, noUSDXAF := e.Company("")
	e.FundPayin(noUSDXAF, "10000")
	e.SetRate(noUSD, "XAF", "USD", "0.0016")

	conversion := func(wallet, amount, rate string) string {
		s := `{"source_wallet_id":"` + wallet + `","amount":` + amount
		if rate != "" {
			s += `,"exchangeRateId":"` + rate + `"`
		}
		return s + "}"
	}
	deposit := func(src, amount, dst, rate string) string {
		return `{"sourceWallet":{"id":"` + src + `","amount":` + amount + `},"destinationWallet":{"id":"` + dst + `"},"exchangeRate":{"exchangeRateId":"` + rate + `"}}`
	}
	tests := []struct {
		name, token, body string
		deposit           bool
		status            int
		code, field       string
	}{
		{"no source", token, `{"amount":1000}`, false, 400, "INVALID_FIELD", "source_wallet_id"},
		{"a GNF source", token, conversion(gnf, "1000", ""), false, 400, "INVALID_FIELD", "source_wallet_id"},
		{"a USD source", token, conversion(usd, "1000", ""), false, 400, "INVALID_FIELD", "source_wallet_id"},
		{"another company's source", token, conversion(otherXAF, "1000", ""), false, 404, "WALLET_NOT_FOUND", "source_wallet_id"},
		{"not a wallet id", token, conversion("nope", "1000", ""), false, 404, "WALLET_NOT_FOUND", "source_wallet_id"},
		{"a fraction of XAF", token, conversion(xaf, "10.5", ""), false, 400, "INVALID_FIELD", "amount"},
		{"more than the payin balance", token, conversion(xaf, "10001", ""), false, 400, "INSUFFICIENT_WALLET_BALANCE", ""},
		{"no USD wallet", noUSDToken, conversion(noUSDXAF, "1000", ""), false, 400, "NO_USD_WALLET", ""},
		{"no rate", token, conversion(xof, "1000", ""), false, 400, "NO_EXCHANGE_RATE", ""},
		{"a stale exchangeRateId", token, conversion(xaf, "1000", stale), false, 400, "RATE_CHANGED", ""},
		{"an unknown exchangeRateId", token, conversion(xaf, "1000", uuid.NewString()), false, 400, "INVALID_FIELD", "exchangeRateId"},
		{"an exchangeRateId past a key's length", token, conversion(xaf, "1000", strings.Repeat("7", 3000)), false, 400, "INVALID_FIELD", "exchangeRateId"},
		{"another pair's exchangeRateId", token, conversion(xaf, "1000", xafXOF), false, 400, "INVALID_FIELD", "exchangeRateId"},
		{"another company's exchangeRateId", otherToken, conversion(otherXAF, "1000", rateID), false, 400, "INVALID_FIELD", "exchangeRateId"},
		{"too small to convert", token, conversion(xaf, "1", ""), false, 400, "INVALID_FIELD", "amount"},

		{"deposit: no exchangeRate", token, `{"sourceWallet":{"id":"` + xaf + `","amount":1},"destinationWallet":{"id":"` + usd + `"}}`, true, 400, "INVALID_FIELD", "exchangeRate"},
		{"deposit: the same wallet", token, deposit(xaf, "1000", xaf, rateID), true, 400, "INVALID_FIELD", "destinationWallet.id"},
		{"deposit: the same currency", token, deposit(xaf, "1000", xafGA, rateID), true, 400, "INVALID_FIELD", "destinationWallet.id"},
		{"deposit: no exchangeRateId", token, `{"sourceWallet":{"id":"` + xaf + `","amount":1},"destinationWallet":{"id":"` + usd + `"},"exchangeRate":{}}`, true, 400, "INVALID_FIELD", "exchangeRate.exchangeRateId"},
		{"deposit: the pair of another rate", token, deposit(xaf, "1000", usd, xafXOF), true, 400, "INVALID_FIELD", "exchangeRate.exchangeRateId"},
		{"deposit: an unknown exchangeRateId", token, deposit(xaf, "1000", usd, uuid.NewString()), true, 400, "INVALID_FIELD", "exchangeRate.exchangeRateId"},
		{"deposit: an exchangeRateId that is not a rate id", token, deposit(xaf, "1000", usd, "rate-1"), true, 400, "INVALID_FIELD", "exchangeRate.exchangeRateId"},
		{"deposit: a stale exchangeRateId", token, deposit(xaf, "1000", usd, stale), true, 400, "RATE_CHANGED", ""},
		{"deposit: no rate of the pair", token, deposit(xof, "1000", usd, rateID), true, 400, "INVALID_FIELD", "exchangeRate.exchangeRateId"},
		{"deposit: another company's destination", token, deposit(xaf, "1000", otherXAF, rateID), true, 404, "WALLET_NOT_FOUND", "destinationWallet.id"},
		{"deposit: the fee past the balance", token, deposit(xaf, "10000", usd, rateID), true, 400, "INSUFFICIENT_WALLET_BALANCE", ""},
		{"deposit: too small to convert", token, deposit(xaf, "2", usd, rateID), true, 400, "INVALID_FIELD", "sourceWallet.amount"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			routes := []string{"/partner/wallets/xaf-usd-conversion", "/partner/wallets/preview-conversion"}
			if tt.deposit {
				routes = []string{"/wallets/deposit"}
			}
			for _, route := range routes {
				r := e.Call(e.Wallets, tt.token, "POST", route, tt.body)
				if r.Status != tt.status || r.Str("code") != tt.code || tt.field != "" && r.Str("field") != tt.field {
					t.Errorf("%s: %d %s, want %d %s on %q", route, r.Status, r.Raw, tt.status, tt.code, tt.field)
				}
			}
		})
	}
	for id, want := range map[string]string{xaf: "payin 10000 payout 0", usd: "payin 0 payout 0", xof: "payin 10000 payout 0", gnf: "payin 10000 payout 0", xafGA: "payin 0 payout 0"} {
		if got := e.Balances(token, id); got != want {
			t.Errorf("wallet %s: %s, want %s", id, got, want)
		}
	}
	if r := e.Call(e.Wallets, token, "GET", "/wallet/transactions?type=TRANSFER", ""); len(r.Items()) != 0 {
		t.Errorf("TRANSFER entries: %s", r.Raw)
	}
	e.VerifyBoth(companyID)
}
