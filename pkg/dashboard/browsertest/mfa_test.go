package browsertest_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"payments/pkg/dashboard/browsertest"
	"payments/pkg/dashboard/dashboardtest"
)

// TestMFAEnforced: once the owner has an authenticator app (under make
// test, set up in cognito-local, which checks TOTP codes), their password
// alone does not sign them in: the dashboard asks for the app's code,
// refuses a wrong one, and signs them in with the app's.
func TestMFAEnforced(t *testing.T) {
	srv := browsertest.Start(t)
	srv.ConfirmOwner(t)
	secret := srv.AddAuthenticator(t, browsertest.OwnerEmail, browsertest.NewPassword)
	b := browsertest.NewBrowser(t)
	do(t, b, "sign in with the password",
		chromedp.Navigate(srv.URL+"/dashboard/sign-in"),
		chromedp.SendKeys("", browsertest.OwnerEmail, field("Email")),
		chromedp.SendKeys("", browsertest.NewPassword, field("Password")),
		chromedp.Click("", button("Sign in")),
		chromedp.WaitVisible("", heading("Two-factor code")))
	checkPage(t, b, "mfa")
	do(t, b, "a wrong code", chromedp.SendKeys("", "000000", field("Code")), chromedp.Click("", button("Verify")),
		chromedp.WaitVisible("", browsertest.ByName("alert", "")))
	if text := alertText(t, b); text == "" {
		t.Error("a wrong code: no alert")
	}
	if loc, err := chromedp.Run(b.Ctx, chromedp.Location()); err != nil || loc != srv.URL+"/dashboard/mfa" {
		t.Errorf("after a wrong code: %q, %v; want still the code's page", loc, err)
	}
	do(t, b, "the app's code", chromedp.SetValue("", dashboardtest.TOTP(secret, time.Now()), field("Code")),
		chromedp.Click("", button("Verify")), chromedp.WaitVisible("", heading("Home")))
}
