package dashboard_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"payments/pkg/dashboard/browsertest"
)

// TestSignedInSession drives the dashboard function over its table, its
// AWS calls recorded (browsertest.Start): a sign-in through the
// new-password challenge starts a session (PutItem), Home resumes it
// (GetItem) and reads the wallets and their ledger (Query), and sign-out
// ends it (DeleteItem), after which its cookie opens nothing. With the
// session key's GetSecretValue (pkg/function's configuration test) and the
// card freeze's UpdateItem and the card transactions' Query on an index
// (the browser tests' TestCustomersAndCards), these are every action the
// dashboard is granted: grantcheck holds them to it.
func TestSignedInSession(t *testing.T) {
	srv := browsertest.Start(t)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	post := func(path string, form url.Values) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		return do(t, c, req)
	}
	res, body := post("/dashboard/sign-in", url.Values{"email": {browsertest.OwnerEmail}, "password": {browsertest.TemporaryPassword}})
	if res.Request.URL.Path != "/dashboard/new-password" {
		t.Fatalf("sign-in with the temporary password: %s %d %s", res.Request.URL.Path, res.StatusCode, body)
	}
	res, body = post("/dashboard/new-password", url.Values{"new_password": {browsertest.NewPassword}})
	if res.StatusCode != http.StatusOK || res.Request.URL.Path != "/dashboard" {
		t.Fatalf("after the new password: %s %d %s", res.Request.URL.Path, res.StatusCode, body)
	}
	for _, want := range []string{"<h1>Home</h1>", "1,500,000 XAF", "250,000 XAF"} {
		if !strings.Contains(body, want) {
			t.Errorf("Home lacks %q: %s", want, body)
		}
	}
	u, _ := url.Parse(srv.URL + "/dashboard")
	var old *http.Cookie
	for _, ck := range jar.Cookies(u) {
		if ck.Name == "dashboard_session" {
			old = ck
		}
	}
	if old == nil {
		t.Fatal("no session cookie")
	}
	if res, _ = post("/dashboard/sign-out", nil); res.Request.URL.Path != "/dashboard/sign-in" {
		t.Fatalf("sign-out went to %s", res.Request.URL)
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/dashboard", nil)
	req.AddCookie(&http.Cookie{Name: old.Name, Value: old.Value})
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if res, _ = do(t, noRedirect, req); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/dashboard/sign-in" {
		t.Errorf("the old cookie after sign-out: %d %s; want 303 to sign-in", res.StatusCode, res.Header.Get("Location"))
	}
}

func do(t *testing.T, c *http.Client, req *http.Request) (*http.Response, string) {
	t.Helper()
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}
