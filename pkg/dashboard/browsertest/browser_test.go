package browsertest_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"payments/pkg/dashboard/browsertest"
)

// field, button, link and heading find an element by its role and
// accessible name.
func field(name string) chromedp.QueryOption   { return browsertest.ByName("textbox", name) }
func button(name string) chromedp.QueryOption  { return browsertest.ByName("button", name) }
func link(name string) chromedp.QueryOption    { return browsertest.ByName("link", name) }
func heading(name string) chromedp.QueryOption { return browsertest.ByName("heading", name) }
func cell(name string) chromedp.QueryOption    { return browsertest.ByName("cell", name) }

// signIn opens the sign-in page and signs in with email and password;
// the caller waits for the page that follows.
func signIn(t *testing.T, b *browsertest.Browser, srv *browsertest.Server, email, password string) {
	t.Helper()
	do(t, b, "sign in as "+email,
		chromedp.Navigate(srv.URL+"/dashboard/sign-in"),
		chromedp.SendKeys("", email, field("Email")),
		chromedp.SendKeys("", password, field("Password")),
		chromedp.Click("", button("Sign in")))
}

// signInOwner confirms the seeded owner (Server.ConfirmOwner) and signs
// them in: the browser is on Home.
func signInOwner(t *testing.T, b *browsertest.Browser, srv *browsertest.Server) {
	t.Helper()
	srv.ConfirmOwner(t)
	signIn(t, b, srv, browsertest.OwnerEmail, browsertest.NewPassword)
	do(t, b, "Home after signing in", chromedp.WaitVisible("", heading("Home")))
}

// do runs the steps in the browser's tab, one after the other, failing the
// test on an error. A step whose element was found in a document the page
// has just replaced (a navigation DevTools had not yet reported) fails
// before it acts, DevTools no longer knowing the node: it is run again, on
// the new document.
func do(t *testing.T, b *browsertest.Browser, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	for _, step := range steps {
		err := chromedp.Do(b.Ctx, step)
		for try := 0; try < 3 && err != nil && strings.Contains(err.Error(), "Could not find node with given id"); try++ {
			err = chromedp.Do(b.Ctx, step)
		}
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
}

// checkPage checks the page the browser shows: axe-core finds nothing
// serious, and its screenshot is saved as name.
func checkPage(t *testing.T, b *browsertest.Browser, name string) {
	t.Helper()
	b.Axe(t, name)
	b.Screenshot(t, name)
}

// TestSignInHomeSignOut: the owner signs in with the temporary password,
// chooses a new one, sees the seeded wallet's balances on Home, follows
// the navigation's Home link and signs out, back on the sign-in page;
// the session cookie, read from the browser before, no longer opens Home.
// Each page passes axe-core (serious and critical) and is photographed.
func TestSignInHomeSignOut(t *testing.T) {
	srv := browsertest.Start(t)
	b := browsertest.NewBrowser(t)
	do(t, b, "open the sign-in page", chromedp.Navigate(srv.URL+"/dashboard/sign-in"), chromedp.WaitVisible("", heading("Sign in")))
	checkPage(t, b, "sign-in")
	do(t, b, "sign in with the temporary password",
		chromedp.SendKeys("", browsertest.OwnerEmail, field("Email")),
		chromedp.SendKeys("", browsertest.TemporaryPassword, field("Password")),
		chromedp.Click("", button("Sign in")),
		chromedp.WaitVisible("", heading("Choose a new password")))
	checkPage(t, b, "new-password")
	do(t, b, "set a new password",
		chromedp.SendKeys("", browsertest.NewPassword, field("New password")),
		chromedp.Click("", button("Set password")),
		chromedp.WaitVisible("", heading("Home")))
	// The seeded wallet: its payin and payout balances, nothing reserved.
	for _, amount := range []string{"1,500,000 XAF", "250,000 XAF", "0 XAF"} {
		do(t, b, "Home shows "+amount, chromedp.WaitVisible("", cell(amount)))
	}
	checkPage(t, b, "home")
	do(t, b, "follow the navigation's Home link", chromedp.Click("", link("Home")), chromedp.WaitVisible("", heading("Last transactions")))
	if loc, err := chromedp.Run(b.Ctx, chromedp.Location()); err != nil || !strings.HasSuffix(loc, "/dashboard") {
		t.Errorf("after the Home link: %q, %v", loc, err)
	}

	cookies, err := chromedp.Call(b.Ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{srv.URL + "/dashboard"}})
	if err != nil {
		t.Fatal(err)
	}
	var session string
	for _, c := range cookies.Cookies {
		if c.Name == "dashboard_session" {
			session = c.Value
		}
	}
	if session == "" {
		t.Fatal("the browser holds no session cookie")
	}
	do(t, b, "sign out", chromedp.Click("", button("Sign out")), chromedp.WaitVisible("", heading("Sign in")))
	do(t, b, "the sign-in page says so", chromedp.WaitVisible("", browsertest.ByName("status", "")))
	if text, err := chromedp.Run(b.Ctx, chromedp.Text("", browsertest.ByName("status", ""))); err != nil || text != "You are signed out." {
		t.Errorf("after sign-out the page says %q, %v", text, err)
	}

	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/dashboard", nil)
	req.AddCookie(&http.Cookie{Name: "dashboard_session", Value: session})
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/dashboard/sign-in" {
		t.Errorf("the old cookie after sign-out: %d %s; want 303 to sign-in", res.StatusCode, res.Header.Get("Location"))
	}
	if p := b.Problems(); len(p) > 0 {
		t.Errorf("the console:\n%s", strings.Join(p, "\n"))
	}
}

// TestWrongPassword: a wrong password shows the error, on the sign-in
// page, as an alert.
func TestWrongPassword(t *testing.T) {
	srv := browsertest.Start(t)
	srv.ConfirmOwner(t)
	b := browsertest.NewBrowser(t)
	do(t, b, "sign in with a wrong password",
		chromedp.Navigate(srv.URL+"/dashboard/sign-in"),
		chromedp.SendKeys("", browsertest.OwnerEmail, field("Email")),
		chromedp.SendKeys("", "not-the-password", field("Password")),
		chromedp.Click("", button("Sign in")),
		chromedp.WaitVisible("", browsertest.ByName("alert", "")))
	text, err := chromedp.Run(b.Ctx, chromedp.Text("", browsertest.ByName("alert", "")))
	if err != nil || text != "Wrong email or password." {
		t.Errorf("the alert says %q, %v", text, err)
	}
	if v, err := chromedp.Run(b.Ctx, chromedp.Value("", field("Email"))); err != nil || v != browsertest.OwnerEmail {
		t.Errorf("the email field holds %q, %v; want it kept", v, err)
	}
	b.Axe(t, "sign-in-error")
}

// TestContentSecurityPolicy: under the dashboard's CSP, which allows no
// inline script or style, the pages load htmx from the assets and nothing
// is refused or fails: the console has no error or warning.
func TestContentSecurityPolicy(t *testing.T) {
	srv := browsertest.Start(t)
	b := browsertest.NewBrowser(t)
	for _, path := range []string{"/dashboard/sign-in", "/dashboard/forgot-password", "/dashboard/reset-password"} {
		do(t, b, "open "+path, chromedp.Navigate(srv.URL+path), chromedp.WaitVisible("", browsertest.ByName("heading", "")))
		loaded, err := chromedp.Run(b.Ctx, chromedp.Poll[bool](`document.readyState === "complete" && typeof htmx === "object"`))
		if err != nil || !loaded {
			t.Errorf("%s: htmx did not load: %v", path, err)
		}
	}
	if p := b.Problems(); len(p) > 0 {
		t.Errorf("the console:\n%s", strings.Join(p, "\n"))
	}
	// The check can fail: an inline script, which the CSP refuses, is
	// reported on the console.
	n := len(b.Problems())
	do(t, b, "add an inline script", chromedp.Evaluate[chromedp.Void](
		`document.body.appendChild(Object.assign(document.createElement("script"), {textContent: "window.inlineRan = true"}))`))
	if p := b.WaitProblems(t, n+1); !strings.Contains(p[n], "Content Security Policy") {
		t.Errorf("the console after a refused inline script:\n%s", strings.Join(p, "\n"))
	}
	if ran, err := chromedp.Run(b.Ctx, chromedp.Evaluate[bool](`window.inlineRan === true`)); err != nil || ran {
		t.Errorf("an inline script ran (%v): the CSP did not refuse it", err)
	}
}
