package wallets_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/uuid"

	"payments/pkg/apidoc/apitest"
	"payments/pkg/app/apptest"
	"payments/pkg/auth"
	"payments/pkg/companies"
	"payments/pkg/function"
	"payments/pkg/function/base"
	"payments/pkg/function/paymentsapi"
	"payments/pkg/function/tokenkeys"
	"payments/pkg/function/walletsapi"
	"payments/pkg/httpapi"
	"payments/pkg/store"
	"payments/pkg/store/moneystore"
	"payments/pkg/store/storetest"
	"payments/pkg/timestamp"
	"payments/pkg/wallets/walletshttp"
)

// env is one table with the wallets and payments functions built on it by
// the production constructors, companies with tokens, and the operator
// console's credit route.
type env struct {
	t        *testing.T
	db       *store.DB
	wallets  function.HTTPHandler
	payments function.HTTPHandler
	comps    *companies.Service
	tokens   *auth.Service
	admin    http.Handler
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	db := storetest.NewDB(t)
	cfg := function.Config{
		Mode:             function.ModeSandbox,
		TableName:        db.Table,
		DynamoDBEndpoint: storetest.Endpoint(t),
		AWS:              storetest.AWSConfig(),
		TokenKeys:        apptest.AuthTestKeys,
		TokenTTL:         time.Hour,
		CompanyLimits:    apptest.GenerousLimits,
	}
	e := &env{t: t, db: db, comps: companies.NewService(store.NewCompanies(db), nil)}
	caches := base.NewCaches(time.Now) // shared, as the functions of one process share theirs
	var err error
	if e.wallets, err = walletsapi.NewWith(ctx, cfg, caches); err != nil {
		t.Fatalf("NewWallets: %v", err)
	}
	if e.payments, err = paymentsapi.NewWith(ctx, cfg, caches); err != nil {
		t.Fatalf("NewPayments: %v", err)
	}
	if e.tokens, err = tokenkeys.Service(ctx, cfg, db, nil, caches.Companies); err != nil {
		t.Fatalf("auth.NewService: %v", err)
	}
	rt := httpapi.NewRouter(walletsapi.Errors, nil)
	admin := creditService(t, moneystore.NewWallets(db), approved{})
	walletshttp.AdminRoutes(rt, admin)
	e.admin = rt
	return e
}

// company creates a company with KYB status kyb and returns its id and a
// token for it.
func (e *env) company(kyb companies.KYBStatus) (string, string) {
	e.t.Helper()
	ctx := context.Background()
	c, err := e.comps.Create(ctx, "Acme "+uuid.NewString()[:8], kyb)
	if err != nil {
		e.t.Fatalf("create company: %v", err)
	}
	tok, err := e.tokens.Issue(ctx, "198.51.100.7", c.ClientID, c.ClientKey)
	if err != nil {
		e.t.Fatalf("issue token: %v", err)
	}
	return c.ID, tok.AccessToken
}

// response is a decoded response: status and body with exact numbers.
type response struct {
	status int
	body   map[string]any
}

func (r response) data() map[string]any {
	d, _ := r.body["data"].(map[string]any)
	return d
}

func (r response) items() []any {
	d, _ := r.body["data"].([]any)
	return d
}

func (r response) str(path ...string) string {
	var v any = r.body
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case nil:
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func decode(t *testing.T, body string) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("response is not JSON: %v: %s", err, body)
	}
	return m
}

// call sends one API Gateway v2 event to h.
func (e *env) call(h function.HTTPHandler, token, method, target, body string) response {
	e.t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		e.t.Fatal(err)
	}
	path := httpapi.BasePath + u.Path
	req := events.APIGatewayV2HTTPRequest{
		Version:        "2.0",
		RouteKey:       method + " " + path,
		RawPath:        path,
		RawQueryString: u.RawQuery,
		Headers:        map[string]string{"content-type": "application/json"},
		Body:           body,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			Stage: "$default", RequestID: uuid.NewString(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: path, Protocol: "HTTP/1.1", SourceIP: "198.51.100.7"},
		},
	}
	if token != "" {
		req.Headers["authorization"] = "Bearer " + token
	}
	resp, err := h(context.Background(), req)
	if err != nil {
		e.t.Fatalf("%s %s: handler error %v", method, target, err)
	}
	apitest.CheckEvent(e.t, req, resp, true)
	return response{status: resp.StatusCode, body: decode(e.t, resp.Body)}
}

// credit funds a wallet through the operator console route.
func (e *env) credit(walletID, body string) response {
	e.t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, httpapi.BasePath+"/admin/wallets/"+walletID+"/credit", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	e.admin.ServeHTTP(rec, req)
	apitest.CheckRecorded(e.t, req, []byte(body), rec)
	return response{status: rec.Code, body: decode(e.t, rec.Body.String())}
}

func (e *env) verify(company string) {
	e.t.Helper()
	verify(e.t, moneystore.NewWallets(e.db), company)
}

func keysOf(v any) []string {
	m, _ := v.(map[string]any)
	return slices.Sorted(maps.Keys(m))
}

func sortedKeys(keys ...string) []string { return slices.Sorted(slices.Values(keys)) }

var (
	walletKeys = sortedKeys("id", "company_id", "currency", "country", "country_iso_code", "country_phone_code",
		"balance", "payin_balance", "payout_balance", "payout_reserved", "payout_available", "is_active",
		"created_at", "updated_at")
	partnerKeys     = sortedKeys("id", "currency", "country", "balance", "payin_balance", "payout_balance", "is_active")
	transactionKeys = sortedKeys("id", "wallet_id", "amount", "amount_with_fee", "fee_amount", "net_amount", "currency",
		"status", "type", "category", "operator", "phone_number", "reference", "order_id",
		"wallet_balance_before", "wallet_balance_after", "created_at", "completed_at", "balance", "payment_id")
	usdKeys     = sortedKeys("wallet_id", "currency", "balance", "payin_balance", "payout_balance", "payout_reserved", "payout_available")
	balanceKeys = sortedKeys("currency", "country", "payin_balance", "payout_balance")
)

func walletBody(currency, country, iso, phone string) string {
	b, _ := json.Marshal(map[string]string{
		"currency": currency, "country": country, "country_iso_code": iso, "country_phone_code": phone,
	})
	return string(b)
}

func TestCreateWallet(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, token := e.company(companies.KYBApproved)
	_, pending := e.company(companies.KYBPending)
	tests := []struct {
		name       string
		token      string
		body       string
		wantStatus int
		wantCode   string
		wantField  string
		check      func(t *testing.T, r response)
	}{
		{"XAF in Cameroon", token, walletBody("XAF", "Cameroon", "CM", "+237"), 201, "", "", func(t *testing.T, r response) {
			if got := keysOf(r.data()); !slices.Equal(got, walletKeys) {
				t.Fatalf("keys = %v, want %v", got, walletKeys)
			}
			d := r.data()
			if d["currency"] != "XAF" || d["country"] != "Cameroon" || d["is_active"] != true ||
				r.str("data", "balance") != "0" || r.str("data", "payout_available") != "0" || r.str("statusCode") != "201" {
				t.Fatalf("wallet = %v", d)
			}
			if _, err := time.Parse(timestamp.Layout, r.str("data", "created_at")); err != nil {
				t.Fatalf("created_at: %v", err)
			}
		}},
		{"USD in the US", token, walletBody("USD", "United States", "US", "+1"), 201, "", "", nil},
		{"pair again", token, walletBody("XAF", "Cameroon", "CM", "+237"), 400, "WALLET_EXISTS", "", func(t *testing.T, r response) {
			if r.str("message") != "wallet for this currency and country already exists" || r.body["success"] != false {
				t.Fatalf("body = %v", r.body)
			}
		}},
		{"XOF in Cameroon", token, walletBody("XOF", "Cameroon", "CM", "+237"), 400, "INVALID_COMBINATION", "", func(t *testing.T, r response) {
			if r.str("message") != "invalid country and currency combination" {
				t.Fatalf("message = %q", r.str("message"))
			}
		}},
		{"unknown currency", token, walletBody("EUR", "France", "FR", "+33"), 400, "INVALID_COMBINATION", "", nil},
		{"CD forces CDF", token, walletBody("USD", "DR Congo", "CD", "+243"), 201, "", "", func(t *testing.T, r response) {
			if r.str("data", "currency") != "CDF" {
				t.Fatalf("currency = %s, want CDF", r.str("data", "currency"))
			}
		}},
		{"CD again in another currency", token, walletBody("XAF", "DR Congo", "CD", "+243"), 400, "WALLET_EXISTS", "", nil},
		{"KYB pending", pending, walletBody("XOF", "Senegal", "SN", "+221"), 403, "KYB_NOT_APPROVED", "", func(t *testing.T, r response) {
			if r.str("message") != "KYB not approved" {
				t.Fatalf("message = %q", r.str("message"))
			}
		}},
		{"KYB pending with bad input", pending, walletBody("XOF", "Senegal", "sn", "+221"), 400, "INVALID_FIELD", "country_iso_code", nil},
		{"no token", "", walletBody("XOF", "Senegal", "SN", "+221"), 401, "UNAUTHORIZED", "", nil},
		{"missing currency", token, `{"country":"Senegal","country_iso_code":"SN","country_phone_code":"+221"}`, 400, "INVALID_FIELD", "currency", nil},
		{"missing country", token, `{"currency":"XOF","country_iso_code":"SN","country_phone_code":"+221"}`, 400, "INVALID_FIELD", "country", nil},
		{"missing country_iso_code", token, `{"currency":"XOF","country":"Senegal","country_phone_code":"+221"}`, 400, "INVALID_FIELD", "country_iso_code", nil},
		{"missing country_phone_code", token, `{"currency":"XOF","country":"Senegal","country_iso_code":"SN"}`, 400, "INVALID_FIELD", "country_phone_code", nil},
		{"blank currency", token, walletBody("  ", "Senegal", "SN", "+221"), 400, "INVALID_FIELD", "currency", nil},
		{"null currency", token, `{"currency":null,"country":"Senegal","country_iso_code":"SN","country_phone_code":"+221"}`, 400, "INVALID_FIELD", "currency", nil},
		{"currency a number", token, `{"currency":952,"country":"Senegal","country_iso_code":"SN","country_phone_code":"+221"}`, 400, "INVALID_FIELD", "currency", nil},
		{"lowercase currency", token, walletBody("xof", "Senegal", "SN", "+221"), 400, "INVALID_FIELD", "currency", nil},
		{"malformed JSON", token, `{"currency":"XOF",`, 400, "INVALID_FIELD", "body", nil},
		{"an array", token, `[]`, 400, "INVALID_FIELD", "body", nil},
		{"empty body", token, ``, 400, "INVALID_FIELD", "body", nil},
		{"unknown field", token, `{"currency":"XOF","country":"Senegal","country_iso_code":"SN","country_phone_code":"+221","balance":5}`, 400, "INVALID_FIELD", "balance", nil},
		{"three-letter country code", token, walletBody("XOF", "Senegal", "SEN", "+221"), 400, "INVALID_FIELD", "country_iso_code", nil},
		{"dial code without +", token, walletBody("XOF", "Senegal", "SN", "221"), 400, "INVALID_FIELD", "country_phone_code", nil},
		{"dial code of another country", token, walletBody("XOF", "Senegal", "SN", "+225"), 400, "INVALID_FIELD", "country_phone_code", nil},
		{"country of one character", token, walletBody("XOF", "S", "SN", "+221"), 400, "INVALID_FIELD", "country", nil},
		{"country too long", token, walletBody("XOF", strings.Repeat("S", 256), "SN", "+221"), 400, "INVALID_FIELD", "country", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.call(e.wallets, tt.token, http.MethodPost, "/wallets", tt.body)
			if r.status != tt.wantStatus {
				t.Fatalf("status = %d, want %d: %v", r.status, tt.wantStatus, r.body)
			}
			if tt.wantCode != "" && r.str("code") != tt.wantCode {
				t.Fatalf("code = %s, want %s: %v", r.str("code"), tt.wantCode, r.body)
			}
			if r.str("field") != tt.wantField {
				t.Fatalf("field = %q, want %q: %v", r.str("field"), tt.wantField, r.body)
			}
			if tt.check != nil {
				tt.check(t, r)
			}
		})
	}
}

func TestWalletReads(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	companyA, a := e.company(companies.KYBApproved)
	companyB, b := e.company(companies.KYBApproved)
	get := func(h function.HTTPHandler, token, target string) response {
		return e.call(h, token, http.MethodGet, target, "")
	}

	t.Run("no wallets yet", func(t *testing.T) {
		tests := []struct {
			name       string
			h          function.HTTPHandler
			target     string
			wantStatus int
			check      func(t *testing.T, r response)
		}{
			{"list", e.wallets, "/wallets", 200, func(t *testing.T, r response) {
				if r.str("data") != "[]" || r.str("message") != "0 items retrieved successfully" {
					t.Fatalf("body = %v", r.body)
				}
			}},
			{"partner list", e.wallets, "/partner/wallets", 200, func(t *testing.T, r response) {
				if r.str("data") != "[]" {
					t.Fatalf("data = %s", r.str("data"))
				}
			}},
			{"usd balance", e.wallets, "/wallet/usd-balance", 404, func(t *testing.T, r response) {
				if r.str("code") != "USD_WALLET_NOT_FOUND" || r.str("message") != "USD wallet not found" {
					t.Fatalf("body = %v", r.body)
				}
			}},
			{"payment balance", e.payments, "/payment/balance", 200, func(t *testing.T, r response) {
				if r.str("data", "balances") != "[]" {
					t.Fatalf("balances = %s, want []", r.str("data", "balances"))
				}
			}},
			{"transactions", e.wallets, "/wallet/transactions", 200, func(t *testing.T, r response) {
				if r.str("data") != "[]" || r.str("meta", "total") != "0" {
					t.Fatalf("body = %v", r.body)
				}
			}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := get(tt.h, a, tt.target)
				if r.status != tt.wantStatus {
					t.Fatalf("status = %d, want %d: %v", r.status, tt.wantStatus, r.body)
				}
				tt.check(t, r)
			})
		}
	})

	create := func(token, body string) string {
		r := e.call(e.wallets, token, http.MethodPost, "/wallets", body)
		if r.status != 201 {
			t.Fatalf("create wallet: %d %v", r.status, r.body)
		}
		return r.str("data", "id")
	}
	xaf := create(a, walletBody("XAF", "Cameroon", "CM", "+237"))
	usd := create(a, walletBody("USD", "United States", "US", "+1"))
	cdf := create(a, walletBody("CDF", "Democratic Republic of the Congo", "CD", "+243"))
	bWallet := create(b, walletBody("XAF", "Cameroon", "CM", "+237"))

	// Fund: 12 payin credits of 100 XAF, one payout credit of 250 XAF with a
	// reference, 12.34 USD payout, 1.5 CDF payin.
	var xafFirst string
	for i := range 12 {
		r := e.credit(xaf, `{"balance":"payin","amount":100,"reference":"seed-`+uuid.NewString()+`"}`)
		if r.status != 200 {
			t.Fatalf("credit: %d %v", r.status, r.body)
		}
		if i == 0 {
			xafFirst = r.str("data", "transaction", "id")
		}
	}
	r := e.credit(xaf, `{"balance":"payout","amount":250,"reference":"wire-1"}`)
	if r.status != 200 || r.str("data", "wallet", "payout_available") != "250" || r.str("data", "wallet", "balance") != "1450" {
		t.Fatalf("credit payout: %d %v", r.status, r.body)
	}
	usdTx := e.credit(usd, `{"balance":"payout","amount":12.34,"reference":"wire-2"}`).str("data", "transaction", "id")
	if r := e.credit(cdf, `{"balance":"payin","amount":1.5,"reference":"wire-3"}`); r.status != 200 {
		t.Fatalf("credit CDF: %d %v", r.status, r.body)
	}
	e.credit(bWallet, `{"balance":"payin","amount":7,"reference":"wire-1"}`)

	t.Run("lists", func(t *testing.T) {
		r := get(e.wallets, a, "/wallets")
		if r.status != 200 || len(r.items()) != 3 || r.str("message") != "3 items retrieved successfully" {
			t.Fatalf("list: %d %v", r.status, r.body)
		}
		if _, ok := r.body["meta"]; ok {
			t.Fatalf("GET /wallets is not paginated, but has meta")
		}
		for _, it := range r.items() {
			if got := keysOf(it); !slices.Equal(got, walletKeys) {
				t.Fatalf("wallet keys = %v, want %v", got, walletKeys)
			}
		}
		first := r.items()[0].(map[string]any)
		if first["id"] != xaf || first["balance"] != json.Number("1450") || first["payin_balance"] != json.Number("1200") {
			t.Fatalf("first wallet = %v", first)
		}
		r = get(e.wallets, a, "/partner/wallets")
		if r.status != 200 || len(r.items()) != 3 {
			t.Fatalf("partner list: %d %v", r.status, r.body)
		}
		for _, it := range r.items() {
			if got := keysOf(it); !slices.Equal(got, partnerKeys) {
				t.Fatalf("partner keys = %v, want %v", got, partnerKeys)
			}
		}
		if cdfItem := r.items()[2].(map[string]any); cdfItem["balance"] != json.Number("1.5") {
			t.Fatalf("CDF wallet = %v", cdfItem)
		}
	})

	t.Run("usd balance", func(t *testing.T) {
		r := get(e.wallets, a, "/wallet/usd-balance")
		if r.status != 200 || !slices.Equal(keysOf(r.data()), usdKeys) {
			t.Fatalf("usd balance: %d %v", r.status, r.body)
		}
		if r.str("data", "wallet_id") != usd || r.str("data", "payout_balance") != "12.34" || r.str("data", "currency") != "USD" {
			t.Fatalf("usd balance = %v", r.data())
		}
		if r := get(e.wallets, b, "/wallet/usd-balance"); r.status != 404 {
			t.Fatalf("company B usd balance: %d", r.status)
		}
	})

	t.Run("payment balance", func(t *testing.T) {
		before := time.Now().UTC().Add(-time.Second)
		r := get(e.payments, a, "/payment/balance")
		if r.status != 200 || !slices.Equal(keysOf(r.data()), sortedKeys("balances", "updated_at")) {
			t.Fatalf("payment balance: %d %v", r.status, r.body)
		}
		at, err := time.Parse(time.RFC3339, r.str("data", "updated_at"))
		if err != nil || at.Before(before) || at.After(time.Now().Add(time.Second)) {
			t.Fatalf("updated_at = %s, %v", r.str("data", "updated_at"), err)
		}
		balances := r.data()["balances"].([]any)
		want := []map[string]any{
			{"currency": "XAF", "country": "CM", "payin_balance": json.Number("1200"), "payout_balance": json.Number("250")},
			{"currency": "USD", "country": "US", "payin_balance": json.Number("0"), "payout_balance": json.Number("12.34")},
			{"currency": "CDF", "country": "CD", "payin_balance": json.Number("1.5"), "payout_balance": json.Number("0")},
		}
		if len(balances) != len(want) {
			t.Fatalf("balances = %v", balances)
		}
		for i, b := range balances {
			if !maps.Equal(b.(map[string]any), want[i]) || !slices.Equal(keysOf(b), balanceKeys) {
				t.Fatalf("balance %d = %v, want %v", i, b, want[i])
			}
		}
	})

	t.Run("one transaction", func(t *testing.T) {
		r := get(e.wallets, a, "/wallet/transactions/"+usdTx)
		if r.status != 200 || !slices.Equal(keysOf(r.data()), transactionKeys) {
			t.Fatalf("transaction: %d %v", r.status, keysOf(r.data()))
		}
		d := r.data()
		want := map[string]any{
			"id": usdTx, "wallet_id": usd, "amount": json.Number("12.34"), "amount_with_fee": json.Number("12.34"),
			"fee_amount": json.Number("0"), "net_amount": json.Number("12.34"), "currency": "USD", "status": "SUCCESS",
			"type": "FUND", "category": "WALLET", "wallet_balance_before": json.Number("0"),
			"wallet_balance_after": json.Number("12.34"), "balance": "payout", "payment_id": nil,
		}
		for k, v := range want {
			if d[k] != v {
				t.Errorf("%s = %v, want %v", k, d[k], v)
			}
		}
		if d["reference"] != "wire-2" || d["completed_at"] != d["created_at"] || d["completed_at"] == nil {
			t.Errorf("reference %v, created_at %v, completed_at %v", d["reference"], d["created_at"], d["completed_at"])
		}
	})

	t.Run("another company's records are not found", func(t *testing.T) {
		tests := []struct {
			name     string
			token    string
			target   string
			wantCode string
		}{
			{"A's transaction read by B", b, "/wallet/transactions/" + xafFirst, "TRANSACTION_NOT_FOUND"},
			{"A's wallet ledger read by B", b, "/wallet/transactions/wallet/" + xaf, "WALLET_NOT_FOUND"},
			{"unknown transaction", a, "/wallet/transactions/" + uuid.NewString(), "TRANSACTION_NOT_FOUND"},
			{"not a transaction id", a, "/wallet/transactions/WTX%23x", "TRANSACTION_NOT_FOUND"},
			{"unknown wallet", a, "/wallet/transactions/wallet/" + uuid.NewString(), "WALLET_NOT_FOUND"},
			{"not a wallet id", a, "/wallet/transactions/wallet/abc", "WALLET_NOT_FOUND"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := get(e.wallets, tt.token, tt.target)
				if r.status != 404 || r.str("code") != tt.wantCode {
					t.Fatalf("%d %v, want 404 %s", r.status, r.body, tt.wantCode)
				}
			})
		}
		r := get(e.wallets, b, "/wallet/transactions?wallet_id="+xaf)
		if r.status != 200 || r.str("meta", "total") != "0" {
			t.Fatalf("B filtering on A's wallet: %d %v", r.status, r.body)
		}
	})

	t.Run("wallet ledger pagination", func(t *testing.T) {
		tests := []struct {
			query                string
			wantStatus, wantLen  int
			wantTotal, wantPages string
			wantField            string
		}{
			{"", 200, 10, "13", "2", ""},
			{"?page=2", 200, 3, "13", "2", ""},
			{"?page=3", 200, 0, "13", "2", ""},
			{"?limit=5&page=3", 200, 3, "13", "3", ""},
			{"?limit=100", 200, 13, "13", "1", ""},
			{"?limit=101", 400, 0, "", "", "limit"},
			{"?page=0", 400, 0, "", "", "page"},
			{"?limit=x", 400, 0, "", "", "limit"},
		}
		for _, tt := range tests {
			t.Run(tt.query, func(t *testing.T) {
				r := get(e.wallets, a, "/wallet/transactions/wallet/"+xaf+tt.query)
				if r.status != tt.wantStatus || r.str("field") != tt.wantField {
					t.Fatalf("%d %v", r.status, r.body)
				}
				if r.status != 200 {
					return
				}
				if len(r.items()) != tt.wantLen || r.str("meta", "total") != tt.wantTotal ||
					r.str("meta", "totalPages") != tt.wantPages || r.str("pagination", "total") != tt.wantTotal {
					t.Fatalf("items %d, meta %s", len(r.items()), r.str("meta"))
				}
				for _, it := range r.items() {
					if !slices.Equal(keysOf(it), transactionKeys) || it.(map[string]any)["wallet_id"] != xaf {
						t.Fatalf("item = %v", it)
					}
				}
			})
		}
		r := get(e.wallets, a, "/wallet/transactions/wallet/"+xaf+"?limit=100")
		items := r.items()
		if items[0].(map[string]any)["balance"] != "payout" || items[12].(map[string]any)["id"] != xafFirst {
			t.Fatalf("not newest first: first %v, last %v", items[0], items[12])
		}
	})

	t.Run("company ledger filters", func(t *testing.T) {
		tomorrow := time.Now().UTC().Add(24 * time.Hour).Format(time.RFC3339)
		yesterday := time.Now().UTC().Add(-24 * time.Hour).Format(time.DateOnly)
		tests := []struct {
			query      string
			wantStatus int
			wantTotal  string
			wantField  string
		}{
			{"", 200, "15", ""},
			{"?type=FUND", 200, "15", ""},
			{"?type=WITHDRAW", 200, "0", ""},
			{"?type=fund", 400, "", "type"},
			{"?type=PAYOUT", 400, "", "type"},
			{"?status=SUCCESS", 200, "15", ""},
			{"?status=PENDING", 200, "0", ""},
			{"?status=DONE", 400, "", "status"},
			{"?currency=USD", 200, "1", ""},
			{"?currency=EUR", 400, "", "currency"},
			{"?wallet_id=" + usd, 200, "1", ""},
			{"?wallet_id=" + xaf + "&currency=XAF&type=FUND", 200, "13", ""},
			{"?wallet_id=nope", 400, "", "wallet_id"},
			{"?from_date=" + tomorrow, 200, "0", ""},
			{"?from_date=" + yesterday, 200, "15", ""},
			{"?to_date=" + yesterday, 200, "0", ""},
			{"?from_date=" + yesterday + "&to_date=" + url.QueryEscape(tomorrow), 200, "15", ""},
			{"?from_date=" + url.QueryEscape(tomorrow) + "&to_date=" + yesterday, 400, "", "to_date"},
			{"?from_date=yesterday", 400, "", "from_date"},
			{"?to_date=2025-13-01", 400, "", "to_date"},
			{"?from_date=1900-01-01", 400, "", "from_date"},
			{"?limit=0", 400, "", "limit"},
		}
		for _, tt := range tests {
			t.Run(tt.query, func(t *testing.T) {
				r := get(e.wallets, a, "/wallet/transactions"+tt.query)
				if r.status != tt.wantStatus || r.str("field") != tt.wantField {
					t.Fatalf("%d %v", r.status, r.body)
				}
				if r.status == 200 && r.str("meta", "total") != tt.wantTotal {
					t.Fatalf("total = %s, want %s", r.str("meta", "total"), tt.wantTotal)
				}
			})
		}
		r := get(e.wallets, a, "/wallet/transactions?limit=3")
		if len(r.items()) != 3 || r.str("meta", "totalPages") != "5" {
			t.Fatalf("limit 3: %d items, meta %s", len(r.items()), r.str("meta"))
		}
	})

	e.verify(companyA)
	e.verify(companyB)
}

func TestAdminCredit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	company, token := e.company(companies.KYBApproved)
	r := e.call(e.wallets, token, http.MethodPost, "/wallets", walletBody("USD", "United States", "US", "+1"))
	if r.status != 201 {
		t.Fatalf("create: %v", r.body)
	}
	usd := r.str("data", "id")
	tests := []struct {
		name       string
		wallet     string
		body       string
		wantStatus int
		wantCode   string
		wantField  string
	}{
		{"payout", usd, `{"balance":"payout","amount":10.5,"reference":"r-1"}`, 200, "", ""},
		{"payin", usd, `{"balance":"payin","amount":1,"reference":"r-2"}`, 200, "", ""},
		{"the same credit again", usd, `{"balance":"payout","amount":10.5,"reference":"r-1"}`, 200, "", ""},
		{"reference of another credit", usd, `{"balance":"payin","amount":1,"reference":"r-1"}`, 409, "DUPLICATE_REFERENCE", ""},
		{"reference missing", usd, `{"balance":"payin","amount":1}`, 400, "INVALID_FIELD", "reference"},
		{"unknown wallet", uuid.NewString(), `{"balance":"payin","amount":1,"reference":"r-3"}`, 404, "WALLET_NOT_FOUND", ""},
		{"amount a string", usd, `{"balance":"payin","amount":"1","reference":"v-1"}`, 400, "INVALID_FIELD", "amount"},
		{"amount an object", usd, `{"balance":"payin","amount":{},"reference":"v-1"}`, 400, "INVALID_FIELD", "amount"},
		{"amount missing", usd, `{"balance":"payin","reference":"v-1"}`, 400, "INVALID_FIELD", "amount"},
		{"amount zero", usd, `{"balance":"payin","amount":0,"reference":"v-1"}`, 400, "INVALID_FIELD", "amount"},
		{"amount negative", usd, `{"balance":"payin","amount":-1,"reference":"v-1"}`, 400, "INVALID_FIELD", "amount"},
		{"too many decimals", usd, `{"balance":"payin","amount":0.001,"reference":"v-1"}`, 400, "INVALID_FIELD", "amount"},
		{"balance missing", usd, `{"amount":1,"reference":"v-1"}`, 400, "INVALID_FIELD", "balance"},
		{"balance unknown", usd, `{"balance":"total","amount":1,"reference":"v-1"}`, 400, "INVALID_FIELD", "balance"},
		{"balance a number", usd, `{"balance":1,"amount":1,"reference":"v-1"}`, 400, "INVALID_FIELD", "balance"},
		{"empty reference", usd, `{"balance":"payin","amount":1,"reference":""}`, 400, "INVALID_FIELD", "reference"},
		{"reference too long", usd, `{"balance":"payin","amount":1,"reference":"` + strings.Repeat("x", 256) + `"}`, 400, "INVALID_FIELD", "reference"},
		{"unknown field", usd, `{"balance":"payin","amount":1,"currency":"USD","reference":"v-1"}`, 400, "INVALID_FIELD", "currency"},
		{"malformed", usd, `{"balance":`, 400, "INVALID_FIELD", "body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.credit(tt.wallet, tt.body)
			if r.status != tt.wantStatus || r.str("field") != tt.wantField || (tt.wantCode != "" && r.str("code") != tt.wantCode) {
				t.Fatalf("%d %v", r.status, r.body)
			}
			if r.status == 200 {
				if r.str("data", "replayed") != fmt.Sprint(tt.name == "the same credit again") {
					t.Fatalf("replayed = %s", r.str("data", "replayed"))
				}
				if !slices.Equal(keysOf(r.data()), sortedKeys("wallet", "transaction", "replayed")) ||
					!slices.Equal(keysOf(r.data()["wallet"]), walletKeys) ||
					!slices.Equal(keysOf(r.data()["transaction"]), transactionKeys) {
					t.Fatalf("data = %v", r.data())
				}
			}
		})
	}
	r = e.call(e.wallets, token, http.MethodGet, "/wallet/usd-balance", "")
	if r.str("data", "payout_balance") != "10.5" || r.str("data", "payin_balance") != "1" || r.str("data", "balance") != "11.5" {
		t.Fatalf("usd balance = %v", r.data())
	}
	e.verify(company)
}
