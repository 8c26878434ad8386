package dashboard_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"payments/pkg/activity"
	"payments/pkg/dashboard"
	"payments/pkg/dashboard/dashboardtest"
	"payments/pkg/identity"
	"payments/pkg/page"
	"payments/pkg/sessions"
	"payments/pkg/store"
	"payments/pkg/store/storetest"
	"payments/pkg/wallets"
)

// fakeWallets is one company's wallet and ledger.
type fakeWallets struct{}

func (fakeWallets) Transaction(_ context.Context, companyID, id string) (wallets.Transaction, error) {
	for _, t := range ledger {
		if t.CompanyID == companyID && t.ID == id {
			return t, nil
		}
	}
	return wallets.Transaction{}, wallets.ErrTransactionNotFound
}

func (fakeWallets) List(_ context.Context, companyID string) ([]wallets.Wallet, error) {
	if companyID != "c1" {
		return nil, nil
	}
	return []wallets.Wallet{{ID: "w1", CompanyID: "c1", Currency: "XAF", Country: "Cameroon", PayinBalance: 1500000,
		PayoutBalance: 250000, PayoutReserved: 50000, PayoutAvailable: 200000, IsActive: true}}, nil
}

// ledger is company c1's ledger, newest first.
var ledger = []wallets.Transaction{
	{ID: "t1", CompanyID: "c1", WalletID: "w1", Amount: 12345, Currency: "XAF", Type: wallets.TypeFund, Status: wallets.StatusSuccess,
		Reference: "ref-1", CreatedAt: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)},
	{ID: "t2", CompanyID: "c1", WalletID: "w1", Amount: 5000, FeeAmount: 75, Currency: "XAF", Type: wallets.TypeWithdraw, Status: wallets.StatusPending,
		Reference: "=HYPERLINK(\"http://evil.example\")", PhoneNumber: "237670000001", CreatedAt: time.Date(2026, 2, 27, 9, 0, 0, 0, time.UTC)},
	{ID: "t3", CompanyID: "c1", WalletID: "w1", Amount: 75, Currency: "XAF", Type: wallets.TypeFee, Status: wallets.StatusSuccess,
		Reference: "fee", CreatedAt: time.Date(2026, 2, 20, 9, 0, 0, 0, time.UTC)},
}

// Transactions pages through ledger as the store does: filtered by type,
// status and dates, Limit at a time after the entry After.
func (fakeWallets) Transactions(_ context.Context, companyID string, q wallets.TransactionQuery, p page.Request) (page.Result[wallets.Transaction], error) {
	var match []wallets.Transaction
	for _, t := range ledger {
		if t.CompanyID == companyID && (q.Type == "" || q.Type == t.Type) && (q.Status == "" || q.Status == t.Status) &&
			(q.From.IsZero() || !t.CreatedAt.Before(q.From)) && (q.To.IsZero() || t.CreatedAt.Before(q.To)) {
			match = append(match, t)
		}
	}
	res := page.Result[wallets.Transaction]{Total: len(match)}
	start := 0
	for i, t := range match {
		if t.ID == p.After {
			start = i + 1
		}
	}
	end := min(start+p.Limit, len(match))
	res.Items = match[start:end]
	if end < len(match) {
		res.Next = match[end-1].ID
	}
	return res, nil
}

// server is the dashboard over the test double pool and the table.
func server(t *testing.T) (*httptest.Server, *dashboardtest.Pool) {
	t.Helper()
	s := newServer(t, nil, nil)
	return s.Server, s.pool
}

// serverWith is server with its dependencies changed by change (when not
// nil) before the dashboard is built over them.
func serverWith(t *testing.T, change func(*dashboard.Deps)) (*httptest.Server, *dashboardtest.Pool) {
	s := newServer(t, nil, change)
	return s.Server, s.pool
}

// serverWithLog is server, and the activity log it records in, whose
// entries are timed by now (time.Now when nil).
func serverWithLog(t *testing.T, now func() time.Time) (*httptest.Server, *dashboardtest.Pool, *activity.Log) {
	s := newServer(t, now, nil)
	return s.Server, s.pool, s.log
}

// testServer is the dashboard on an httptest server, with its fakes and
// its activity log.
type testServer struct {
	*httptest.Server
	pool    *dashboardtest.Pool
	payouts *fakePayouts
	log     *activity.Log
}

// newServer serves the dashboard over the test double pool, the table and
// the fakes, its activity timed by now (time.Now when nil), its
// dependencies changed by change (when not nil).
func newServer(t *testing.T, now func() time.Time, change func(*dashboard.Deps)) testServer {
	t.Helper()
	pool := dashboardtest.NewPool(nil)
	db := storetest.NewDB(t)
	sm, err := sessions.NewManager(store.NewSessions(db), []byte(strings.Repeat("k", 32)), nil)
	if err != nil {
		t.Fatal(err)
	}
	log, err := activity.NewLog(store.NewActivity(db), now)
	if err != nil {
		t.Fatal(err)
	}
	pays := newFakePayouts()
	d := dashboard.Deps{Pool: pool, Sessions: sm, Wallets: fakeWallets{}, Activity: log,
		Payouts: pays, Batches: fakeBatches{}, Forms: store.NewIdempotency(db), Errors: fakeErrors{},
		Customers: fakeCustomers{}, Cards: newFakeCards()}
	withDevelopers(t, &d)
	if change != nil {
		change(&d)
	}
	h, err := dashboard.New(d)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return testServer{Server: srv, pool: pool, payouts: pays, log: log}
}

// client is a browser without JavaScript: cookies kept, redirects
// followed, Origin sent as a browser's form post does.
func client(t *testing.T, srv *httptest.Server) *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar}
}

func post(t *testing.T, c *http.Client, srv *httptest.Server, path string, form url.Values) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", srv.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return do(t, c, req)
}

func get(t *testing.T, c *http.Client, srv *httptest.Server, path string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	return do(t, c, req)
}

func do(t *testing.T, c *http.Client, req *http.Request) (*http.Response, string) {
	t.Helper()
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(res.Body)
	return res, b.String()
}

// signIn signs email in through the new-password challenge and returns
// the session cookie.
func signIn(t *testing.T, c *http.Client, srv *httptest.Server, pool *dashboardtest.Pool, email string, role identity.Role) *http.Cookie {
	t.Helper()
	if err := pool.CreateUser(context.Background(), "c1", email, role, "Temporary-pass-1"); err != nil {
		t.Fatal(err)
	}
	res, body := post(t, c, srv, "/dashboard/sign-in", url.Values{"email": {email}, "password": {"Temporary-pass-1"}})
	if res.Request.URL.Path != "/dashboard/new-password" || !strings.Contains(body, "<h1>Choose a new password</h1>") {
		t.Fatalf("after a temporary password: %s %d %s", res.Request.URL.Path, res.StatusCode, body)
	}
	res, body = post(t, c, srv, "/dashboard/new-password", url.Values{"new_password": {"A-longer-password-2"}})
	if res.StatusCode != http.StatusOK || res.Request.URL.Path != "/dashboard" || !strings.Contains(body, "<h1>Home</h1>") {
		t.Fatalf("after the new password: %s %d %s", res.Request.URL.Path, res.StatusCode, body)
	}
	u, _ := url.Parse(srv.URL + "/dashboard")
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == "dashboard_session" {
			return ck
		}
	}
	t.Fatal("no session cookie")
	return nil
}

// TestSignInHomeSignOut: the new-password challenge, Home with the
// wallet's balances formatted from minor units, the headers, and sign-out
// ending the session server-side: the old cookie no longer works.
func TestSignInHomeSignOut(t *testing.T) {
	srv, pool := server(t)
	c := client(t, srv)
	old := signIn(t, c, srv, pool, "ada@example.com", identity.Finance)
	res, body := get(t, c, srv, "/dashboard")
	for _, want := range []string{"1,500,000 XAF", "250,000 XAF", "50,000 XAF", "200,000 XAF", "12,345 XAF", "ref-1", ">Sign out</button>", "Export transactions"} {
		if !strings.Contains(body, want) {
			t.Errorf("Home lacks %q", want)
		}
	}
	for k, want := range map[string]string{"Content-Security-Policy": dashboard.CSP, "Cache-Control": "no-store",
		"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"} {
		if got := res.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if strings.Contains(body, "style=") || strings.Contains(body, "<style") {
		t.Error("Home has an inline style")
	}
	res, _ = post(t, c, srv, "/dashboard/sign-out", nil)
	if res.Request.URL.Path != "/dashboard/sign-in" {
		t.Fatalf("sign-out went to %s", res.Request.URL)
	}
	// The old cookie, replayed by someone who kept it.
	thief := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/dashboard", nil)
	req.AddCookie(&http.Cookie{Name: old.Name, Value: old.Value})
	res, _ = do(t, thief, req)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/dashboard/sign-in" {
		t.Errorf("the old cookie after sign-out: %d %s; want 303 to sign-in", res.StatusCode, res.Header.Get("Location"))
	}
}

// TestWrongPassword says only "wrong email or password", for a wrong
// password and an unknown email alike.
func TestWrongPassword(t *testing.T) {
	srv, pool := server(t)
	pool.CreateUser(context.Background(), "c1", "ada@example.com", identity.Owner, "Temporary-pass-1")
	for _, email := range []string{"ada@example.com", "nobody@example.com"} {
		res, body := post(t, client(t, srv), srv, "/dashboard/sign-in", url.Values{"email": {email}, "password": {"wrong"}})
		if res.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "Wrong email or password.") || strings.Contains(body, "identity:") {
			t.Errorf("%s: %d %s", email, res.StatusCode, body)
		}
	}
}

// TestRolesOnTheServer: a viewer's direct POST of a finance action is
// 403 with a page that says so; finance may.
func TestRolesOnTheServer(t *testing.T) {
	srv, pool := server(t)
	for _, tt := range []struct {
		role identity.Role
		want int
	}{{identity.Viewer, http.StatusForbidden}, {identity.Developer, http.StatusForbidden}, {identity.Finance, http.StatusOK}, {identity.Owner, http.StatusOK}} {
		c := client(t, srv)
		signIn(t, c, srv, pool, string(tt.role)+"@example.com", tt.role)
		res, body := get(t, c, srv, "/dashboard/transactions/export.csv")
		if res.StatusCode != tt.want {
			t.Errorf("%s: export %d, want %d", tt.role, res.StatusCode, tt.want)
		}
		if tt.want == http.StatusForbidden && !strings.Contains(body, "does not allow this") {
			t.Errorf("%s: the 403 page does not say so: %s", tt.role, body)
		}
		if tt.want == http.StatusOK && !strings.Contains(body, "t1,2026-03-01T09:00:00Z") {
			t.Errorf("%s: export %s", tt.role, body)
		}
	}
}

// TestCrossSitePostRefused: a form posted from another site is refused.
func TestCrossSitePostRefused(t *testing.T) {
	srv, _ := server(t)
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/dashboard/sign-in", strings.NewReader("email=a&password=b"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	if res, _ := do(t, http.DefaultClient, req); res.StatusCode != http.StatusForbidden {
		t.Errorf("cross-site POST: %d, want 403", res.StatusCode)
	}
}

// TestAmount formats minor units by the currency's exponent.
func TestAmount(t *testing.T) {
	for _, tt := range []struct {
		minor    int64
		currency string
		want     string
	}{
		{0, "USD", "0.00 USD"}, {5, "USD", "0.05 USD"}, {123456, "USD", "1,234.56 USD"}, {-100, "USD", "−1.00 USD"},
		{15000, "XAF", "15,000 XAF"}, {999, "XAF", "999 XAF"}, {1000000, "XAF", "1,000,000 XAF"},
	} {
		if got := dashboard.Amount(tt.minor, tt.currency); got != tt.want {
			t.Errorf("Amount(%d, %s) = %q, want %q", tt.minor, tt.currency, got, tt.want)
		}
	}
}

// TestVendoredHTMXIsThePinnedPackage: assets/htmx.min.js is the file of
// the htmx.org that infra/local/dashboard pins, as make install put it
// in .cache/dashboard (make generate copies it).
func TestVendoredHTMXIsThePinnedPackage(t *testing.T) {
	installed := filepath.Join("..", "..", ".cache", "dashboard", "node_modules", "htmx.org", "dist", "htmx.min.js")
	want, err := os.ReadFile(installed)
	if err != nil {
		if testing.Short() && os.Getenv("CI") != "true" {
			t.Skipf("htmx.org is not installed (%v): make install", err)
		}
		t.Fatalf("htmx.org is not installed: %v: make install", err)
	}
	got, err := os.ReadFile(filepath.Join("assets", "htmx.min.js"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("assets/htmx.min.js differs from the pinned htmx.org: make generate")
	}
}
