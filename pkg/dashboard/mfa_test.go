package dashboard_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"net/url"

	"payments/pkg/dashboard/dashboardtest"
	"payments/pkg/identity"
)

// TestMFASetUpWhenRequired: with MFA required (the prod stage's pool), a
// first sign-in sets up an authenticator: the page shows its key, a wrong
// code is refused with the same key shown again, the app's code signs in.
// The next sign-in then asks for the app's code, and refuses a wrong one.
func TestMFASetUpWhenRequired(t *testing.T) {
	ts := newServer(t, nil, nil)
	srv, pool := ts.Server, ts.pool
	pool.RequireMFA()
	if err := pool.CreateUser(context.Background(), "c1", "ada@example.com", identity.Owner, "Temporary-pass-1"); err != nil {
		t.Fatal(err)
	}
	c := client(t, srv)
	post(t, c, srv, "/dashboard/sign-in", url.Values{"email": {"ada@example.com"}, "password": {"Temporary-pass-1"}})
	res, body := post(t, c, srv, "/dashboard/new-password", url.Values{"new_password": {"A-longer-password-2"}})
	if res.Request.URL.Path != "/dashboard/mfa-setup" || !strings.Contains(body, "<h1>Set up two-factor sign-in</h1>") {
		t.Fatalf("after the new password: %s %d %s", res.Request.URL.Path, res.StatusCode, body)
	}
	secret := between(body, "&amp;secret=", `"`)
	grouped := between(body, `<output id="setup-key" class="secret">`, "</output>")
	if secret == "" || strings.ReplaceAll(grouped, " ", "") != secret {
		t.Fatalf("the key shown %q and in the link %q", grouped, secret)
	}
	res, body = post(t, c, srv, "/dashboard/mfa-setup", url.Values{"code": {"000000"}})
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(body, grouped) || !strings.Contains(body, `role="alert"`) {
		t.Errorf("a wrong first code: %d %s", res.StatusCode, body)
	}
	res, body = post(t, c, srv, "/dashboard/mfa-setup", url.Values{"code": {dashboardtest.TOTP(secret, time.Now())}})
	if res.StatusCode != http.StatusOK || !strings.Contains(body, "<h1>Home</h1>") {
		t.Fatalf("the app's code: %s %d %s", res.Request.URL.Path, res.StatusCode, body)
	}

	again := client(t, srv)
	res, _ = post(t, again, srv, "/dashboard/sign-in", url.Values{"email": {"ada@example.com"}, "password": {"A-longer-password-2"}})
	if res.Request.URL.Path != "/dashboard/mfa" {
		t.Fatalf("the next sign-in went to %s, want the code's page", res.Request.URL.Path)
	}
	if res, _ = post(t, again, srv, "/dashboard/mfa", url.Values{"code": {"123456"}}); res.StatusCode != http.StatusBadRequest {
		t.Errorf("a wrong code: %d, want 400", res.StatusCode)
	}
	if res, body = post(t, again, srv, "/dashboard/mfa", url.Values{"code": {dashboardtest.TOTP(secret, time.Now())}}); !strings.Contains(body, "<h1>Home</h1>") {
		t.Errorf("the app's code: %d %s", res.StatusCode, body)
	}
}
