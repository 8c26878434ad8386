package webhooks_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v85/webhook"

	"payments/pkg/outbox"
	"payments/pkg/vault"
	"payments/pkg/webhooks"
)

const (
	cardsURL    = "https://cards.example.com/in"
	paymentsURL = "https://payments.example.com/in"
	offURL      = "https://off.example.com/in"
	downURL     = "https://down.example.com/in"
)

// endpoint returns an enabled endpoint of co-1 at url for kinds.
func endpoint(id, url string, kinds ...string) webhooks.Endpoint {
	return webhooks.Endpoint{
		ID: id, CompanyID: "co-1", URL: url, EnabledEvents: kinds, Status: webhooks.EndpointEnabled,
		Secret: webhooks.EndpointSecretPrefix + id,
	}
}

func TestWorkerEndpointsReceiveTheirKinds(t *testing.T) {
	// The event is a card.fund; the console's endpoint has no URL.
	e := newWorkerEnv(t, "", "", map[string][]int{cardsURL: {200}, paymentsURL: {200}, offURL: {200}, downURL: {503}})
	off := endpoint("ep-off", offURL, webhooks.AllEvents)
	off.Status = webhooks.EndpointDisabled
	e.store.endpoints = append(e.store.endpoints,
		endpoint("ep-cards", cardsURL, "card.fund", "card.withdraw"),
		endpoint("ep-payments", paymentsURL, "payment.payout.status_updated"),
		off,
		endpoint("ep-down", downURL, webhooks.AllEvents),
	)
	e.handle(t, outbox.Message{CompanyID: "co-1", EventID: e.event.ID})

	// The first handling made attempt 1 of both subscribed endpoints: the
	// failing one did not hold up the other.
	cards := e.store.deliveries[webhooks.DeliveryID(e.event.ID, webhooks.DestinationWebhook, "ep-cards", 0)]
	if cards.Status != webhooks.StatusDelivered || cards.EndpointID != "ep-cards" {
		t.Fatalf("cards endpoint's delivery: %+v", cards)
	}
	for _, m := range e.queue.take() {
		e.handle(t, m.msg)
		for _, m := range e.queue.take() {
			e.handle(t, m.msg)
			for _, m := range e.queue.take() {
				e.handle(t, m.msg)
			}
		}
	}
	sends := map[string]int{}
	for _, s := range e.sender.sent {
		sends[s.url]++
		id := map[string]string{cardsURL: "ep-cards", downURL: "ep-down"}[s.url]
		if err := webhooks.Verify(s.header.Get(webhooks.SignatureHeader), s.body, webhooks.EndpointSecretPrefix+id, time.Minute, time.Now()); err != nil {
			t.Errorf("%s: not signed with its endpoint's secret: %v", s.url, err)
		}
	}
	if want := map[string]int{cardsURL: 1, downURL: webhooks.MaxAttempts}; !equalCounts(sends, want) {
		t.Fatalf("sends %v, want %v", sends, want)
	}
	down := e.store.deliveries[webhooks.DeliveryID(e.event.ID, webhooks.DestinationWebhook, "ep-down", 0)]
	if down.Status != webhooks.StatusFailed {
		t.Fatalf("failing endpoint's delivery %s", down.Status)
	}
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestWorkerStopsAtAnEndpointDisabledOrDeleted(t *testing.T) {
	for _, change := range []string{"disabled", "deleted"} {
		t.Run(change, func(t *testing.T) {
			e := newWorkerEnv(t, "", "", map[string][]int{downURL: {503}})
			e.store.endpoints = append(e.store.endpoints, endpoint("ep-down", downURL, webhooks.AllEvents))
			e.handle(t, outbox.Message{CompanyID: "co-1", EventID: e.event.ID})
			if change == "disabled" {
				e.store.endpoints[1].Status = webhooks.EndpointDisabled
			} else {
				e.store.endpoints = e.store.endpoints[:1]
			}
			for _, m := range e.queue.take() {
				e.handle(t, m.msg)
			}
			d := e.store.deliveries[webhooks.DeliveryID(e.event.ID, webhooks.DestinationWebhook, "ep-down", 0)]
			if len(e.sender.sent) != 1 || d.Status != webhooks.StatusCanceled || len(e.queue.take()) != 0 {
				t.Fatalf("%d sends, delivery %s", len(e.sender.sent), d.Status)
			}
			if got := (webhooks.Record{Dispatched: true, Deliveries: []webhooks.Delivery{d}}).Status(); got != webhooks.StatusSkipped {
				t.Fatalf("event status %s", got)
			}
		})
	}
}

func TestWorkerResendToOneEndpoint(t *testing.T) {
	e := newWorkerEnv(t, hookURL, notifyURL, map[string][]int{hookURL: {200}, notifyURL: {200}, cardsURL: {200}})
	e.store.endpoints = append(e.store.endpoints, endpoint("ep-cards", cardsURL, "card.fund"))
	e.run(t)
	e.handle(t, webhooks.Message{Kind: webhooks.KindResend, CompanyID: "co-1", EventID: e.event.ID, Round: 1, EndpointID: "ep-cards"})
	if len(e.sender.sent) != 4 || e.sender.sent[3].url != cardsURL {
		t.Fatalf("%d sends, the last to %s", len(e.sender.sent), e.sender.sent[len(e.sender.sent)-1].url)
	}
	if d := e.store.deliveries[e.event.ID+"#webhook#ep-cards#r1"]; d.Status != webhooks.StatusDelivered {
		t.Fatalf("round 1 delivery %+v", d)
	}
}

func TestWorkerRotationOverlap(t *testing.T) {
	const oldSecret, newSecret = "whsec_old", "whsec_new"
	rotatedAt := time.Now()
	tests := []struct {
		name        string
		at          time.Time
		oldVerifies bool
		// sealed stores the secrets sealed; otherwise in clear, as
		// before secrets were sealed.
		sealed bool
	}{
		{"during the overlap", rotatedAt.Add(time.Hour), true, true},
		{"after the overlap", rotatedAt.Add(25 * time.Hour), false, true},
		{"during the overlap, stored in clear", rotatedAt.Add(time.Hour), true, false},
		{"after the overlap, stored in clear", rotatedAt.Add(25 * time.Hour), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newWorkerEnv(t, "", "", map[string][]int{cardsURL: {200}})
			ep := endpoint("ep-cards", cardsURL, webhooks.AllEvents)
			ep.Secret, ep.PreviousSecret, ep.PreviousExpiresAt = newSecret, oldSecret, rotatedAt.Add(webhooks.DefaultOverlap)
			if tt.sealed {
				if sealed, err := webhooks.SealSecrets(context.Background(), e.vault, &ep); err != nil || !sealed {
					t.Fatalf("sealed %v, %v", sealed, err)
				}
				if ep.Secret != "" || ep.PreviousSecret != "" || ep.SealedSecret.IsZero() || ep.SealedPrevious.IsZero() {
					t.Fatalf("sealed endpoint %+v", ep)
				}
			}
			e.store.endpoints = append(e.store.endpoints, ep)
			e.withClock(func() time.Time { return tt.at })
			e.run(t)
			s := e.sender.sent[0]
			header := s.header.Get(webhooks.SignatureHeader)
			if err := webhooks.Verify(header, s.body, newSecret, time.Minute, tt.at); err != nil {
				t.Fatalf("new secret: %v (%s)", err, header)
			}
			err := webhooks.Verify(header, s.body, oldSecret, time.Minute, tt.at)
			if (err == nil) != tt.oldVerifies {
				t.Fatalf("old secret verifies: %v, want %v (%s)", err == nil, tt.oldVerifies, header)
			}
			// stripe-go's verifier, an independent one, agrees.
			for secret, want := range map[string]bool{newSecret: true, oldSecret: tt.oldVerifies} {
				err := webhook.ValidatePayloadWithTolerance(s.body, header, secret, time.Since(tt.at)+time.Minute)
				if (err == nil) != want {
					t.Errorf("stripe-go with %s: %v, want ok=%v", secret, err, want)
				}
			}
		})
	}
}

// TestWorkerRefusesASecretSealedForAnotherEndpoint: a secret sealed under
// one endpoint's context does not open as another's: the delivery is not
// made (the message comes back), nothing unsigned or wrongly signed goes.
func TestWorkerRefusesASecretSealedForAnotherEndpoint(t *testing.T) {
	e := newWorkerEnv(t, "", "", map[string][]int{cardsURL: {200}})
	other := endpoint("ep-other", cardsURL, webhooks.AllEvents)
	if _, err := webhooks.SealSecrets(context.Background(), e.vault, &other); err != nil {
		t.Fatal(err)
	}
	ep := endpoint("ep-cards", cardsURL, webhooks.AllEvents)
	ep.Secret, ep.SealedSecret = "", other.SealedSecret
	e.store.endpoints = append(e.store.endpoints, ep)
	b, _ := json.Marshal(outbox.Message{CompanyID: "co-1", EventID: e.event.ID})
	if err := e.worker.Handle(context.Background(), b); !errors.Is(err, vault.ErrOpen) {
		t.Fatalf("error %v, want vault.ErrOpen", err)
	}
	if len(e.sender.sent) != 0 {
		t.Fatalf("%d sends", len(e.sender.sent))
	}
}
