package stripesim_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v85"
)

// TestCardLifecycle creates a cardholder and a card, reads its number,
// freezes it, sees a purchase on it declined without a request, and
// cancels it for good.
func TestCardLifecycle(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	c := h.card(t)
	if !strings.HasPrefix(c.ID, "ic_") || !strings.HasPrefix(c.Cardholder.ID, "ich_") || c.Brand != "Visa" ||
		c.Status != "active" || c.Metadata["reference"] != "card-1" || c.Cardholder.Metadata["reference"] != "holder-1" {
		t.Fatalf("card %+v", c)
	}
	if c.Number != "" || c.CVC != "" {
		t.Errorf("created card shows number %q, cvc %q unexpanded", c.Number, c.CVC)
	}
	got, err := h.sc.V1IssuingCards.Retrieve(ctx, c.ID, &stripe.IssuingCardRetrieveParams{Expand: []*string{stripe.String("number"), stripe.String("cvc")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Number) != 16 || !luhnValid(got.Number) || got.Last4 != got.Number[12:] || len(got.CVC) != 3 || got.ExpYear < 2000 {
		t.Errorf("expanded card: number %q, last4 %q, cvc %q, exp %d/%d", got.Number, got.Last4, got.CVC, got.ExpMonth, got.ExpYear)
	}
	if plain, err := h.sc.V1IssuingCards.Retrieve(ctx, c.ID, nil); err != nil || plain.Number != "" || plain.CVC != "" {
		t.Errorf("plain retrieve: %v, number %q, cvc %q", err, plain.Number, plain.CVC)
	}

	_, err = h.sc.V1IssuingCards.Update(ctx, c.ID, &stripe.IssuingCardUpdateParams{
		Status: stripe.String("inactive"), Metadata: map[string]string{strings.Repeat("k", 41): "v"},
	})
	if se := stripeErr(err); se == nil || se.HTTPStatusCode != http.StatusBadRequest {
		t.Errorf("update with a metadata key of 41 characters: %v, want 400", err)
	}
	frozen, err := h.sc.V1IssuingCards.Update(ctx, c.ID, &stripe.IssuingCardUpdateParams{Status: stripe.String("inactive")})
	if err != nil || frozen.Status != "inactive" {
		t.Fatalf("freeze: %v, %v", frozen, err)
	}
	a := h.authorize(t, c.ID, 1500)
	if a.Approved || a.Status != "closed" || a.Amount != 0 || len(a.RequestHistory) != 1 || a.RequestHistory[0].Reason != "card_inactive" {
		t.Errorf("authorization on a frozen card: %+v", a)
	}
	if requests, _ := h.rc.got(); len(requests) != 0 {
		t.Errorf("%d issuing_authorization.request sent for a frozen card, want none", len(requests))
	}

	if _, err := h.sc.V1IssuingCards.Update(ctx, c.ID, &stripe.IssuingCardUpdateParams{Status: stripe.String("canceled"), CancellationReason: stripe.String("lost")}); err != nil {
		t.Fatal(err)
	}
	_, err = h.sc.V1IssuingCards.Update(ctx, c.ID, &stripe.IssuingCardUpdateParams{Status: stripe.String("active")})
	if se := stripeErr(err); se == nil || se.HTTPStatusCode != http.StatusBadRequest || se.Type != stripe.ErrorTypeInvalidRequest {
		t.Errorf("update of a canceled card: %v, want 400 invalid_request_error", err)
	}
	_, err = h.sc.V1IssuingCards.Retrieve(ctx, "ic_unknown", nil)
	if se := stripeErr(err); se == nil || se.HTTPStatusCode != http.StatusNotFound || se.Code != stripe.ErrorCodeResourceMissing {
		t.Errorf("unknown card: %v, want 404 resource_missing", err)
	}

	h.deliver(t)
	var updates []stripe.Event
	_, events := h.rc.got()
	for _, e := range events {
		if e.Type == "issuing_card.updated" {
			updates = append(updates, e)
		}
	}
	if len(updates) != 2 || updates[0].GetPreviousValue("status") != "active" || updates[1].GetPreviousValue("status") != "inactive" {
		t.Errorf("issuing_card.updated events: %d, previous statuses %q", len(updates), previousStatuses(updates))
	}
}

// TestAuthorizationDecisions drives a purchase answered each way the
// receiver can answer.
func TestAuthorizationDecisions(t *testing.T) {
	for _, tc := range []struct {
		name      string
		amount    int64
		approved  bool
		status    stripe.IssuingAuthorizationStatus
		reason    stripe.IssuingAuthorizationRequestHistoryReason
		violation string
	}{
		{"approved", 2500, true, "pending", "webhook_approved", ""},
		{"declined", amountDecline, false, "closed", "webhook_declined", ""},
		{"too late", amountLate, false, "closed", "webhook_timeout", ""},
		{"no Stripe-Version", amountNoVersion, false, "closed", "webhook_error", "Stripe-Version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			c := h.card(t)
			a := h.authorize(t, c.ID, tc.amount)
			held := int64(0)
			if tc.approved {
				held = tc.amount
			}
			if a.Approved != tc.approved || a.Status != tc.status || a.Amount != held || len(a.RequestHistory) != 1 ||
				a.RequestHistory[0].Reason != tc.reason || a.PendingRequest != nil || !strings.HasPrefix(a.ID, "iauth_") {
				t.Errorf("authorization: approved %v, status %s, amount %d, history %+v", a.Approved, a.Status, a.Amount, a.RequestHistory)
			}
			if tc.reason == "webhook_approved" || tc.reason == "webhook_declined" {
				if a.Metadata["decided_by"] != "receiver" {
					t.Errorf("metadata %v, want the answer's", a.Metadata)
				}
			}
			requests, _ := h.rc.got()
			if len(requests) != 1 {
				t.Fatalf("%d requests, want 1", len(requests))
			}
			var asked stripe.IssuingAuthorization
			if err := json.Unmarshal(requests[0].Data.Raw, &asked); err != nil {
				t.Fatal(err)
			}
			if asked.ID != a.ID || asked.Status != "pending" || asked.Approved || asked.Amount != 0 || asked.Currency != "usd" ||
				asked.PendingRequest.Amount != tc.amount || asked.PendingRequest.Currency != "usd" ||
				asked.Card.ID != c.ID || asked.Card.Metadata["reference"] != "card-1" || asked.Cardholder.ID != c.Cardholder.ID ||
				asked.MerchantData.Name != "Corner Shop" {
				t.Errorf("the request asked %+v", asked)
			}
			v := h.sim.Violations()
			if tc.violation == "" && len(v) > 0 || tc.violation != "" && (len(v) != 1 || !strings.Contains(v[0], tc.violation)) {
				t.Errorf("violations %q, want one about %q", v, tc.violation)
			}
		})
	}
}

// TestCaptureRefund captures an approved purchase, refunds part of it,
// and reverses and expires two others, checking the events delivered.
func TestCaptureRefund(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	c := h.card(t)
	a := h.authorize(t, c.ID, 4000)
	captured, err := h.sc.V1TestHelpersIssuingAuthorizations.Capture(ctx, a.ID, &stripe.TestHelpersIssuingAuthorizationCaptureParams{CaptureAmount: stripe.Int64(3500)})
	if err != nil {
		t.Fatal(err)
	}
	if captured.Status != "closed" || captured.Amount != 0 || len(captured.Transactions) != 1 {
		t.Fatalf("captured: status %s, amount %d, %d transactions", captured.Status, captured.Amount, len(captured.Transactions))
	}
	tx := captured.Transactions[0]
	if !strings.HasPrefix(tx.ID, "ipi_") || tx.Type != "capture" || tx.Amount != -3500 || tx.Authorization.ID != a.ID || tx.Card.ID != c.ID || tx.Currency != "usd" {
		t.Errorf("capture transaction %+v", tx)
	}
	refund, err := h.sc.V1TestHelpersIssuingTransactions.Refund(ctx, tx.ID, &stripe.TestHelpersIssuingTransactionRefundParams{RefundAmount: stripe.Int64(1000)})
	if err != nil {
		t.Fatal(err)
	}
	if refund.Type != "refund" || refund.Amount != 1000 || refund.Authorization.ID != a.ID || refund.Card.ID != c.ID {
		t.Errorf("refund %+v", refund)
	}
	rest, err := h.sc.V1TestHelpersIssuingTransactions.Refund(ctx, tx.ID, nil)
	if err != nil || rest.Amount != 2500 {
		t.Errorf("refund of the rest: %v, %v; want 2500", rest, err)
	}

	b := h.authorize(t, c.ID, 700)
	if r, err := h.sc.V1TestHelpersIssuingAuthorizations.Reverse(ctx, b.ID, nil); err != nil || r.Status != "reversed" || r.Amount != 0 {
		t.Errorf("reverse: %v, %v", r, err)
	}
	if _, err := h.sc.V1TestHelpersIssuingAuthorizations.Expire(ctx, b.ID, nil); stripeErr(err) == nil {
		t.Error("expire of a reversed authorization succeeded")
	}
	e := h.authorize(t, c.ID, 800)
	if x, err := h.sc.V1TestHelpersIssuingAuthorizations.Expire(ctx, e.ID, nil); err != nil || x.Status != "expired" || x.Amount != 0 {
		t.Errorf("expire: %v, %v", x, err)
	}

	h.deliver(t)
	want := []string{
		"issuing_cardholder.created", "issuing_card.created",
		"issuing_authorization.created", "issuing_transaction.created", "issuing_authorization.updated",
		"issuing_transaction.created", "issuing_transaction.created",
		"issuing_authorization.created", "issuing_authorization.updated",
		"issuing_authorization.created", "issuing_authorization.updated",
	}
	if got := h.rc.received(); !slices.Equal(got, want) {
		t.Errorf("events delivered:\n got %q\nwant %q", got, want)
	}
	_, events := h.rc.got()
	for _, ev := range events {
		if ev.APIVersion != stripe.APIVersion || ev.Livemode || !strings.HasPrefix(ev.ID, "evt_") || ev.Created == 0 {
			t.Errorf("event %s %s: api_version %s, livemode %v, created %d", ev.ID, ev.Type, ev.APIVersion, ev.Livemode, ev.Created)
		}
	}
	if ev := events[4]; ev.GetPreviousValue("status") != "pending" || ev.GetObjectValue("status") != "closed" {
		t.Errorf("capture's issuing_authorization.updated: previous %v, object status %s", ev.Data.PreviousAttributes, ev.GetObjectValue("status"))
	}
}

// TestIdempotentCreate sends one create twice with an Idempotency-Key and
// gets the first card twice; the key with other parameters is refused.
func TestIdempotentCreate(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	c := h.card(t)
	params := func(ref string) *stripe.IssuingCardCreateParams {
		p := &stripe.IssuingCardCreateParams{Cardholder: stripe.String(c.Cardholder.ID), Type: stripe.String("virtual"), Currency: stripe.String("usd"),
			Metadata: map[string]string{"reference": ref}}
		p.SetIdempotencyKey("create-card-2")
		return p
	}
	first, err := h.sc.V1IssuingCards.Create(ctx, params("card-2"))
	if err != nil {
		t.Fatal(err)
	}
	again, err := h.sc.V1IssuingCards.Create(ctx, params("card-2"))
	if err != nil || again.ID != first.ID {
		t.Errorf("second create: %v, %v; want card %s", again, err, first.ID)
	}
	_, err = h.sc.V1IssuingCards.Create(ctx, params("card-3"))
	if se := stripeErr(err); se == nil || se.HTTPStatusCode != http.StatusBadRequest || se.Type != "idempotency_error" {
		t.Errorf("the key with other parameters: %v, want 400 idempotency_error", err)
	}
	h.deliver(t)
	if n := strings.Count(strings.Join(h.rc.received(), " "), "issuing_card.created"); n != 2 {
		t.Errorf("%d issuing_card.created, want 2 (one per card)", n)
	}
}

// TestStripeMockRefuses sends requests off Stripe's API: stripe-mock's
// refusal is the answer, and a violation. A wrong key is refused first.
func TestStripeMockRefuses(t *testing.T) {
	h := newHarness(t)
	c := h.card(t)
	for _, tc := range []struct {
		name, key, path string
		form            url.Values
		status          int
	}{
		{"unknown parameter", apiKey, "/v1/issuing/cards/" + c.ID, url.Values{"nonsense": {"1"}}, http.StatusBadRequest},
		{"wrong type", apiKey, "/v1/test_helpers/issuing/authorizations", url.Values{"card": {c.ID}, "amount": {"ten"}}, http.StatusBadRequest},
		{"wrong key", "sk_test_wrong", "/v1/issuing/cards/" + c.ID, url.Values{"status": {"inactive"}}, http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(h.sim.Violations())
			req, _ := http.NewRequest(http.MethodPost, h.url+tc.path, strings.NewReader(tc.form.Encode()))
			req.Header.Set("Authorization", "Bearer "+tc.key)
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var e struct {
				Error struct{ Type, Message string }
			}
			if resp.StatusCode != tc.status || json.Unmarshal(body, &e) != nil || e.Error.Type != "invalid_request_error" || e.Error.Message == "" {
				t.Errorf("status %d, body %s; want %d and Stripe's error", resp.StatusCode, body, tc.status)
			}
			wantNew := 1
			if tc.status == http.StatusUnauthorized {
				wantNew = 0
			}
			if got := len(h.sim.Violations()) - before; got != wantNew {
				t.Errorf("%d new violations, want %d: %q", got, wantNew, h.sim.Violations())
			}
		})
	}
	if got, err := h.sc.V1IssuingCards.Retrieve(context.Background(), c.ID, nil); err != nil || got.Status != "active" {
		t.Errorf("card after refused requests: %v, %v; want it unchanged", got, err)
	}
}

// TestDeliverAgain has the receiver refuse a delivery: the next Deliver
// sends it again, after which nothing is pending.
func TestDeliverAgain(t *testing.T) {
	h := newHarness(t)
	h.card(t)
	h.rc.mu.Lock()
	h.rc.failNext = 1
	h.rc.mu.Unlock()
	if err := h.sim.Deliver(context.Background()); err == nil || !strings.Contains(err.Error(), "issuing_cardholder.created") {
		t.Fatalf("first Deliver: %v, want the cardholder event's failure", err)
	}
	if got := h.rc.received(); !slices.Equal(got, []string{"issuing_card.created"}) {
		t.Errorf("after the failure: %q", got)
	}
	h.deliver(t)
	h.deliver(t) // nothing left to send
	if got := h.rc.received(); !slices.Equal(got, []string{"issuing_card.created", "issuing_cardholder.created"}) {
		t.Errorf("after the retry: %q", got)
	}
}

func stripeErr(err error) *stripe.Error {
	var se *stripe.Error
	if errors.As(err, &se) {
		return se
	}
	return nil
}

func previousStatuses(events []stripe.Event) []string {
	var s []string
	for _, e := range events {
		s = append(s, e.GetPreviousValue("status"))
	}
	return s
}

func luhnValid(number string) bool {
	sum := 0
	for i := range len(number) {
		d := int(number[len(number)-1-i] - '0')
		if i%2 == 1 {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}

// TestPostWithoutParameters: a test helper that takes no parameters,
// posted with no body and no Content-Type as Stripe's API reference's curl
// does (`curl -X POST …/expire -u sk_test_…:`), is served as Stripe serves
// it, not refused as stripe-mock would: the authorization expires, and the
// harness finds no violation.
func TestPostWithoutParameters(t *testing.T) {
	h := newHarness(t)
	a := h.authorize(t, h.card(t).ID, 500)
	req, err := http.NewRequest(http.MethodPost, h.url+"/v1/test_helpers/issuing/authorizations/"+a.ID+"/expire", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(apiKey, "")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got stripe.IssuingAuthorization
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != http.StatusOK || got.Status != "expired" {
		t.Fatalf("expire with no body: status %d, %+v, %v; want 200, expired", resp.StatusCode, got.Status, err)
	}
}

// TestEphemeralKeys: POST /v1/ephemeral_keys for an Issuing card answers an
// ephemeral key (a fresh secret, an expiry) when the request names the card
// and the nonce and carries a Stripe-Version, as Stripe requires of
// ephemeral keys; without one of them, or for a card it does not have, it
// is 400.
func TestEphemeralKeys(t *testing.T) {
	h := newHarness(t)
	card := h.card(t).ID
	post := func(form url.Values, version string) (int, map[string]any) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, h.url+"/v1/ephemeral_keys", strings.NewReader(form.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth(apiKey, "")
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if version != "" {
			req.Header.Set("Stripe-Version", version)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode, body
	}
	tests := []struct {
		name    string
		form    url.Values
		version string
		want    int
	}{
		{"a key", url.Values{"issuing_card": {card}, "nonce": {"ephkn_pub_1"}}, "2020-03-02", http.StatusOK},
		{"no Stripe-Version", url.Values{"issuing_card": {card}, "nonce": {"ephkn_pub_1"}}, "", http.StatusBadRequest},
		{"no nonce", url.Values{"issuing_card": {card}}, "2020-03-02", http.StatusBadRequest},
		{"no card", url.Values{"nonce": {"ephkn_pub_1"}}, "2020-03-02", http.StatusBadRequest},
		{"an unknown card", url.Values{"issuing_card": {"ic_unknown"}, "nonce": {"ephkn_pub_1"}}, "2020-03-02", http.StatusBadRequest},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := post(tt.form, tt.version)
			if status != tt.want {
				t.Fatalf("status %d %v, want %d", status, body, tt.want)
			}
			if status != http.StatusOK {
				return
			}
			secret, _ := body["secret"].(string)
			expires, _ := body["expires"].(float64)
			if !strings.HasPrefix(secret, "ek_test_") || seen[secret] || body["object"] != "ephemeral_key" || int64(expires) <= time.Now().Unix() {
				t.Errorf("key %v", body)
			}
			seen[secret] = true
		})
	}
}
