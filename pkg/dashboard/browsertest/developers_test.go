package browsertest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/chromedp/chromedp"

	"payments/pkg/dashboard/browsertest"
	"payments/pkg/waittest"
	"payments/pkg/webhooks"
)

// rollKey rolls the client key from the API keys page through its
// confirmation and returns the new key, read from the field named Client
// key.
func rollKey(t *testing.T, b *browsertest.Browser, shots bool) string {
	t.Helper()
	do(t, b, "roll the key", chromedp.Click("", button("Roll key")), chromedp.WaitVisible("", heading("Roll the client key")))
	if shots {
		checkPage(t, b, "developers-roll-key")
	}
	do(t, b, "confirm", chromedp.Click("", button("Yes, roll the key")), chromedp.WaitVisible("", heading("New client key")))
	key, err := chromedp.Run(b.Ctx, chromedp.Value("", field("Client key")))
	if err != nil || !strings.HasPrefix(key, "sk_") {
		t.Fatalf("the Client key field holds %q, %v", key, err)
	}
	return key
}

// TestDevelopers: the owner opens Developers and rolls the client key
// (confirmed); the key shown gets a token on POST /auth/token. Rolled
// again, the first key and the token it got are refused and the new key
// works. The owner adds a webhook endpoint for every event; an API call
// with the new key's token makes an event, which the delivery log shows
// and resends (the resend queued on the webhooks queue); the Events pages
// show its body. Each page passes axe-core and is photographed.
func TestDevelopers(t *testing.T) {
	srv := browsertest.Start(t)
	env := srv.Env
	b := browsertest.NewBrowser(t)
	signInOwner(t, b, srv)

	do(t, b, "open Developers", chromedp.Click("", link("Developers")), chromedp.WaitVisible("", heading("API keys")))
	checkPage(t, b, "developers-keys")
	clientID := env.Admin("GET", "/admin/companies/"+srv.CompanyID, "").Str("data", "client_id")
	if text, err := chromedp.Run(b.Ctx, chromedp.Text("main")); err != nil || !strings.Contains(text, clientID) {
		t.Fatalf("the keys page does not show the client ID %s: %q, %v", clientID, text, err)
	}
	first := rollKey(t, b, true)
	checkPage(t, b, "developers-new-key")
	firstToken := env.MustToken(t, clientID, first)

	do(t, b, "back to the keys", chromedp.Click("", link("Back to API keys")), chromedp.WaitVisible("", button("Roll key")))
	second := rollKey(t, b, false)
	if second == first {
		t.Fatal("rolling gave the same key")
	}
	if res := env.Token(t, "100.64.200.1", clientID, first); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("POST /auth/token with the rolled-out key: %d %s", res.StatusCode, res.Body)
	}
	if r := env.Call(env.Wallets, firstToken, "GET", "/wallets", ""); r.Status != http.StatusUnauthorized {
		t.Errorf("a token of the rolled-out key: %d %s", r.Status, r.Raw)
	}
	token := env.MustToken(t, clientID, second)

	do(t, b, "open the webhook endpoints", chromedp.Click("", link("Webhook endpoints")), chromedp.WaitVisible("", heading("Webhook endpoints")))
	do(t, b, "add an endpoint for every event",
		chromedp.SendKeys("", "https://example.com/payments-hooks", field("Endpoint URL")),
		chromedp.Click("", browsertest.ByName("checkbox", "All events")))
	checkPage(t, b, "developers-webhooks")
	do(t, b, "add it", chromedp.Click("", button("Add endpoint")), chromedp.WaitVisible("", heading("Signing secret")))
	if secret, err := chromedp.Run(b.Ctx, chromedp.Value("", field("Signing secret"))); err != nil || !strings.HasPrefix(secret, webhooks.EndpointSecretPrefix) {
		t.Errorf("the Signing secret field holds %q, %v", secret, err)
	}
	checkPage(t, b, "developers-secret")
	do(t, b, "open the endpoint", chromedp.Click("", link("Go to the endpoint")), chromedp.WaitVisible("", button("Rotate secret")))
	checkPage(t, b, "developers-webhook")

	// An event: a transfer from the payin to the payout balance.
	if r := env.Call(env.Wallets, token, "POST", "/wallets/"+srv.WalletID+"/transfer-internal", `{"amount":1000}`); r.Status != http.StatusOK {
		t.Fatalf("transfer: %d %s", r.Status, r.Raw)
	}
	const kind = "wallet.transfer.completed"
	do(t, b, "open the delivery log", chromedp.Click("", link("Delivery log")), chromedp.WaitVisible("", link(kind)))
	checkPage(t, b, "developers-deliveries")
	do(t, b, "open the event", chromedp.Click("", link(kind)), chromedp.WaitVisible("", heading("Event deliveries")))
	checkPage(t, b, "developers-delivery")
	loc, err := chromedp.Run(b.Ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	eventID := loc[strings.LastIndex(loc, "/")+1:]
	do(t, b, "resend it", chromedp.Click("", button("Resend")), chromedp.WaitVisible("", browsertest.ByName("status", "")))
	if text, err := chromedp.Run(b.Ctx, chromedp.Text("", browsertest.ByName("status", ""))); err != nil || !strings.Contains(text, "queued for delivery again") {
		t.Errorf("after the resend the page says %q, %v", text, err)
	}
	resendQueued(t, srv, eventID)

	do(t, b, "open its body", chromedp.Click("", link("Event body")), chromedp.WaitVisible("", heading("Event "+kind)))
	body, err := chromedp.Run(b.Ctx, chromedp.Text("pre"))
	var decoded struct {
		Event string `json:"event"`
	}
	if err != nil || json.Unmarshal([]byte(body), &decoded) != nil || decoded.Event != kind || !strings.Contains(body, "\n  ") {
		t.Errorf("the event's body %q (%v): want %s, indented", body, err, kind)
	}
	checkPage(t, b, "developers-event")
	do(t, b, "open the events", chromedp.Click("", link("Events")), chromedp.WaitVisible("", link(kind)))
	checkPage(t, b, "developers-events")
	if p := b.Problems(); len(p) > 0 {
		t.Errorf("the console:\n%s", strings.Join(p, "\n"))
	}
}

// resendQueued waits for the resend of eventID on the webhooks queue.
func resendQueued(t *testing.T, srv *browsertest.Server, eventID string) {
	t.Helper()
	env := srv.Env
	waittest.Until(t, 10*time.Second, "the resend on the webhooks queue", func() bool {
		out, err := env.Sqs.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(env.Webhooks), MaxNumberOfMessages: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Messages {
			var msg webhooks.Message
			if json.Unmarshal([]byte(aws.ToString(m.Body)), &msg) == nil && msg.Kind == webhooks.KindResend && msg.EventID == eventID && msg.CompanyID == srv.CompanyID {
				return true
			}
		}
		return false
	})
}
