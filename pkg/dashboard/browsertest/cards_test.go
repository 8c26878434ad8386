package browsertest_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"payments/pkg/app/apptest"
	"payments/pkg/dashboard/browsertest"
)

// issueCard gives the company of token a USD wallet holding 100 USD and
// a card of 50 USD for its verified customer; it returns the card's id and
// its masked last 4 digits as the dashboard shows them.
func issueCard(t *testing.T, env *apptest.CardsTestEnv, token, customerID string) (id, masked string) {
	t.Helper()
	r := env.Call(env.Cards, token, "POST", "/cards", `{"customer_id":"`+customerID+`","amount":50}`)
	if r.Status != 201 {
		t.Fatalf("issue: %s", r.Raw)
	}
	pan := r.Str("data", "masked_pan")
	return r.Str("data", "id"), "•••• " + pan[len(pan)-4:]
}

// TestCustomersAndCards: the owner opens Customers, sees the seeded
// customer with its KYC status, opens them, follows their card's link,
// freezes the card (its status FROZEN) and unfreezes it; the Cards list
// shows the statistics; another company's card id in the URL is the 404
// page. Each page passes axe-core and is photographed.
func TestCustomersAndCards(t *testing.T) {
	env := apptest.NewCardsTestEnv(t)
	srv := browsertest.StartOn(t, env.PaymentsTestEnv)
	w := env.Call(env.Wallets, srv.Token, "POST", "/wallets", `{"currency":"USD","country":"United States","country_iso_code":"US","country_phone_code":"+1"}`)
	if w.Status != 201 {
		t.Fatalf("USD wallet: %s", w.Raw)
	}
	if r := env.Admin("POST", "/admin/wallets/"+w.Str("data", "id")+"/credit", `{"balance":"payout","amount":100,"reference":"usd-opening"}`); r.Status != 200 {
		t.Fatalf("credit: %s", r.Raw)
	}
	enrolled := env.Enroll(srv.Token, env.Identity("amina@example.com", "DASH-1"))
	if enrolled.Status != 201 {
		t.Fatalf("enrol: %s", enrolled.Raw)
	}
	_, masked := issueCard(t, env, srv.Token, enrolled.Str("data", "id"))
	_, otherToken, _, otherCustomer := env.CardCompany("100", "OTHER-1")
	otherCard, _ := issueCard(t, env, otherToken, otherCustomer)

	b := browsertest.NewBrowser(t)
	signInOwner(t, b, srv)
	do(t, b, "open Customers", chromedp.Click("", link("Customers")), chromedp.WaitVisible("", heading("Customers")),
		chromedp.WaitVisible("", cell("VERIFIED")), chromedp.WaitVisible("", cell("amina@example.com")))
	checkPage(t, b, "customers")
	do(t, b, "open the customer", chromedp.Click("", link("Amina Njoya")), chromedp.WaitVisible("", heading("Amina Njoya")))
	checkPage(t, b, "customer")

	do(t, b, "follow the card's link", chromedp.Click("", link("Card "+masked)), chromedp.WaitVisible("", heading("Card "+masked)),
		chromedp.WaitReady("", text("ACTIVE")), chromedp.WaitVisible("", cell("FUNDING")))
	do(t, b, "freeze the card", chromedp.Click("", button("Freeze")),
		chromedp.WaitReady("", text("Card frozen.")), chromedp.WaitReady("", text("FROZEN")), chromedp.WaitVisible("", button("Unfreeze")))
	checkPage(t, b, "card")
	do(t, b, "unfreeze the card", chromedp.Click("", button("Unfreeze")),
		chromedp.WaitReady("", text("Card unfrozen.")), chromedp.WaitReady("", text("ACTIVE")), chromedp.WaitVisible("", button("Freeze")))

	do(t, b, "open Cards", chromedp.Click("", link("Cards")), chromedp.WaitVisible("", heading("Statistics")),
		chromedp.WaitReady("", text("Card slots left")), chromedp.WaitReady("", text("50.00 USD")), chromedp.WaitVisible("", link("Card "+masked)))
	checkPage(t, b, "cards")
	body, err := chromedp.Run(b.Ctx, chromedp.Text("", browsertest.ByName("main", "")))
	if err != nil || !strings.Contains(body, "Active\n1") {
		t.Errorf("the statistics do not count the one active card (%v): %q", err, body)
	}

	do(t, b, "open another company's card", chromedp.Navigate(srv.URL+"/dashboard/cards/"+otherCard), chromedp.WaitVisible("", heading("Page not found")))
}

// text finds a piece of text on the page: a text node, which is never
// "visible" to chromedp (not an element), so wait for it with WaitReady.
func text(s string) chromedp.QueryOption { return browsertest.ByName("StaticText", s) }
