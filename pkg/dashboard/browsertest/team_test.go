package browsertest_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"payments/pkg/dashboard/browsertest"
)

// The invited viewer's email, the temporary password the test gives them
// (as the pool's email would) and the one they choose.
const (
	viewerEmail       = "viewer@example.com"
	viewerTemporary   = "Viewer-temporary-1"
	viewerNewPassword = "Viewer-chosen-pass-2"
)

// alertText returns the text of the page's alert, once there is one.
func alertText(t *testing.T, b *browsertest.Browser) string {
	t.Helper()
	text, err := chromedp.Run(b.Ctx, chromedp.Text("", browsertest.ByName("alert", "")))
	if err != nil {
		t.Fatalf("the alert: %v", err)
	}
	return text
}

// TestTeamInviteAViewer: the owner invites viewer@example.com as a viewer
// on the Team page; as the company's last owner, they cannot remove
// themselves (the page says why); Activity lists the invitation. The
// viewer signs in with a temporary password (the test sets it through the
// pool, as the pool's email would give it), chooses their own, sees Home
// and the team, no form to change it, and the server refuses their
// invitation posted all the same (403); nor can they make a payout: no
// form on Payouts, and their payout posted all the same is 403, nothing
// paid.
func TestTeamInviteAViewer(t *testing.T) {
	srv := browsertest.Start(t)
	b := browsertest.NewBrowser(t)
	signInOwner(t, b, srv)
	do(t, b, "open Team", chromedp.WaitVisible("", heading("Home")), chromedp.Click("", link("Team")), chromedp.WaitVisible("", heading("Team")))
	do(t, b, "invite a viewer",
		chromedp.SendKeys("", viewerEmail, field("Email")),
		chromedp.SetValue("", "viewer", browsertest.ByName("combobox", "Role")),
		chromedp.Click("", button("Invite")),
		chromedp.WaitVisible("", browsertest.ByName("rowheader", viewerEmail)),
		chromedp.WaitVisible("", browsertest.ByName("combobox", "Role of "+viewerEmail)))
	if role, err := chromedp.Run(b.Ctx, chromedp.Value("", browsertest.ByName("combobox", "Role of "+viewerEmail))); err != nil || role != "viewer" {
		t.Errorf("the invited member's role: %q, %v", role, err)
	}
	checkPage(t, b, "team")

	do(t, b, "remove themselves, the last owner",
		chromedp.Click("", button("Remove "+browsertest.OwnerEmail)),
		chromedp.WaitVisible("", browsertest.ByName("alert", "")))
	const lastOwner = "This is the last owner of your company: invite or promote another owner first, so that the company keeps one."
	if text := alertText(t, b); text != lastOwner {
		t.Errorf("removing the last owner: the page says %q", text)
	}
	b.Axe(t, "team-last-owner")

	do(t, b, "open Activity", chromedp.Click("", link("Activity")), chromedp.WaitVisible("", heading("Activity")),
		chromedp.WaitVisible("", cell("Member invited as viewer")), chromedp.WaitVisible("", cell(viewerEmail)),
		chromedp.WaitVisible("", cell(browsertest.OwnerEmail)))
	checkPage(t, b, "activity")
	do(t, b, "sign out", chromedp.Click("", button("Sign out")), chromedp.WaitVisible("", heading("Sign in")))

	srv.SetTemporaryPassword(t, viewerEmail, viewerTemporary)
	signIn(t, b, srv, viewerEmail, viewerTemporary)
	do(t, b, "the viewer chooses a password",
		chromedp.WaitVisible("", heading("Choose a new password")),
		chromedp.SendKeys("", viewerNewPassword, field("New password")),
		chromedp.Click("", button("Set password")),
		chromedp.WaitVisible("", heading("Home")),
		chromedp.WaitVisible("", cell("1,500,000 XAF")))
	do(t, b, "the viewer opens Team", chromedp.Click("", link("Team")), chromedp.WaitVisible("", heading("Team")),
		chromedp.WaitVisible("", browsertest.ByName("rowheader", browsertest.OwnerEmail)))
	if n, err := chromedp.Run(b.Ctx, chromedp.Evaluate[int](`document.querySelectorAll("form[action^='/dashboard/team/']").length`)); err != nil || n != 0 {
		t.Errorf("the viewer's Team page has %d forms that change the team (%v)", n, err)
	}
	status, err := chromedp.Run(b.Ctx, chromedp.Evaluate[int](
		`fetch("/dashboard/team/invite", {method: "POST", body: new URLSearchParams({email: "eve@example.com", role: "owner"})}).then(r => r.status)`,
		chromedp.EvalAwaitPromise))
	if err != nil || status != 403 {
		t.Errorf("the viewer's invitation: %d, %v; want 403", status, err)
	}
	members, err := srv.Pool.Members(t.Context(), srv.CompanyID)
	if err != nil || len(members) != 2 {
		t.Errorf("the company's members after the viewer's attempt: %v, %v", members, err)
	}

	// The viewer reads Payouts but cannot pay: no form, and the payout
	// posted all the same is refused on the server.
	do(t, b, "the viewer opens Payouts", chromedp.Click("", link("Payouts")), chromedp.WaitVisible("", heading("Single payout")))
	if n, err := chromedp.Run(b.Ctx, chromedp.Evaluate[int](`document.querySelectorAll("form[method='post'][action^='/dashboard/payouts']").length`)); err != nil || n != 0 {
		t.Errorf("the viewer's Payouts page has %d forms that pay (%v)", n, err)
	}
	status, err = chromedp.Run(b.Ctx, chromedp.Evaluate[int](
		`fetch("/dashboard/payouts", {method: "POST", body: new URLSearchParams({form_key: "viewer-try", country: "CM", operator: "mtn",
			currency: "XAF", phone_number: "237670000009", amount: "1000"})}).then(r => r.status)`,
		chromedp.EvalAwaitPromise))
	if err != nil || status != 403 {
		t.Errorf("the viewer's payout: %d, %v; want 403", status, err)
	}
	if n := srv.Env.PayoutCount(srv.Token); n != "0" {
		t.Errorf("payouts after the viewer's attempt: %s, want 0", n)
	}
}
