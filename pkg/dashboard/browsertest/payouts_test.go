package browsertest_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"payments/pkg/dashboard/browsertest"
)

// combobox finds a select by its label.
func combobox(name string) chromedp.QueryOption { return browsertest.ByName("combobox", name) }

// statusText returns the text of the page's status, "" while it cannot be
// read (htmx may be swapping it).
func statusText(b *browsertest.Browser) string {
	text, err := chromedp.Run(b.Ctx, chromedp.Text("", browsertest.ByName("status", "")))
	if err != nil {
		return ""
	}
	return text
}

// TestPayoutReachesSuccess: the owner opens Payouts from the navigation,
// chooses Cameroon, sees its operators, makes a payout and, on its page,
// watches it go from PENDING to SUCCESS as the payout worker settles it:
// the page follows the payment by itself (htmx). Home then shows the
// wallet's payout balance less the payout and its fee.
func TestPayoutReachesSuccess(t *testing.T) {
	srv := browsertest.Start(t)
	b := browsertest.NewBrowser(t)
	signInOwner(t, b, srv)
	do(t, b, "open Payouts", chromedp.Click("", link("Payouts")), chromedp.WaitVisible("", heading("Single payout")))
	do(t, b, "choose Cameroon",
		chromedp.SetValue("", "CM", combobox("Country")),
		chromedp.Click("", button("Choose")),
		chromedp.WaitVisible("", combobox("Operator")))
	checkPage(t, b, "payouts")
	do(t, b, "make a payout",
		chromedp.SetValue("", "mtn", combobox("Operator")),
		chromedp.SendKeys("", "237670000001", field("Phone number")),
		chromedp.SendKeys("", "5000", field("Amount")),
		chromedp.SendKeys("", "June salary", field("Reference (optional)")),
		chromedp.Click("", button("Make payout")),
		chromedp.WaitVisible("", heading("Status")))
	if s := statusText(b); !strings.HasPrefix(s, "PENDING") && !strings.HasPrefix(s, "PROCESSING") {
		t.Errorf("a new payout's status: %q", s)
	}
	checkPage(t, b, "payment")
	srv.Env.Pump(60*time.Second, func() bool { return strings.HasPrefix(statusText(b), "SUCCESS") })
	do(t, b, "the history shows the payout's events", chromedp.Reload(), chromedp.WaitVisible("", cell("payment.payout.status_updated")))
	if facts, err := chromedp.Run(b.Ctx, chromedp.Text(chromedp.CSS("dl.facts"))); err != nil || !strings.Contains(facts, "Fee\n75 XAF") {
		t.Errorf("the payment's facts: %q, %v; want its fee of 75 XAF", facts, err)
	}
	do(t, b, "back Home", chromedp.Click("", link("Home")), chromedp.WaitVisible("", heading("Wallets")))
	// 250,000 − 5,000 − the fee of 75.
	do(t, b, "Home shows the payout balance", chromedp.WaitVisible("", cell("244,925 XAF")))
	if title, err := chromedp.Run(b.Ctx, chromedp.Evaluate[string](`document.getElementById("chart-title").textContent`)); err != nil || !strings.Contains(title, ": 1 payouts and 0 collections in all") {
		t.Errorf("Home's chart says %q, %v; want the payout counted", title, err)
	}
	checkPage(t, b, "home-after-payout")
	srv.Env.Verify(srv.CompanyID)
	if p := b.Problems(); len(p) > 0 {
		t.Errorf("the console:\n%s", strings.Join(p, "\n"))
	}
}

// TestBulkPayout: the owner uploads a payroll CSV with a bad row, sees
// that row refused in the preview (nothing reserved: Home's reserved
// balance is still 0), confirms, and watches the batch complete; its
// report is offered.
func TestBulkPayout(t *testing.T) {
	srv := browsertest.Start(t)
	b := browsertest.NewBrowser(t)
	signInOwner(t, b, srv)
	file := filepath.Join(t.TempDir(), "payroll.csv")
	csv := "external_id,operator,country,phone_number,amount,currency,reason\n" +
		"june-1,mtn,CM,237670000002,3000,XAF,June salary\n" +
		"june-2,mtn,CM,12345,2000,XAF,June salary\n" +
		"june-3,orange,CM,237690000003,1000,XAF,June salary\n"
	if err := os.WriteFile(file, []byte(csv), 0o600); err != nil {
		t.Fatal(err)
	}
	do(t, b, "upload the payroll",
		chromedp.Navigate(srv.URL+"/dashboard/payouts"),
		chromedp.SetUploadFiles(chromedp.CSS(`input[type="file"]`), []string{file}),
		chromedp.SendKeys("", "June payroll", field("Description (optional)")),
		chromedp.Click("", button("Check the file")),
		chromedp.WaitVisible("", heading("Check the payroll")))
	do(t, b, "the bad row is shown", chromedp.WaitVisible("", cell("june-2")), chromedp.WaitVisible("", cell("phone_number")))
	checkPage(t, b, "bulk-preview")
	if w := srv.Env.Wallet(srv.Token, srv.WalletID); fmt.Sprint(w["payout_reserved"]) != "0" {
		t.Errorf("the preview reserved %v", w["payout_reserved"])
	}
	do(t, b, "confirm", chromedp.Click("", button("Confirm and pay 2 rows")), chromedp.WaitVisible("", heading(`Bulk payout "June payroll"`)))
	srv.Env.Pump(90*time.Second, func() bool { return strings.HasPrefix(statusText(b), "COMPLETED") })
	if s := statusText(b); !strings.Contains(s, "2 paid, 0 failed") {
		t.Errorf("the batch's status: %q", s)
	}
	checkPage(t, b, "batch")
	do(t, b, "the report is offered", chromedp.WaitVisible("", link("Download the report (CSV)")))
	srv.Env.Verify(srv.CompanyID)
}
