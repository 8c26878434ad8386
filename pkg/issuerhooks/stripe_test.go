package issuerhooks_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	stripe "github.com/stripe/stripe-go/v85"
	"github.com/stripe/stripe-go/v85/webhook"

	"payments/pkg/field"
	"payments/pkg/issuerhooks"
	"payments/pkg/issuerhooks/issuerhookshttp"
	"payments/pkg/providers/issuer"
	"payments/pkg/providers/issuer/stripeissuing"
)

const stripeSecret = "whsec_test_issuerhooks_0123456789abcdef"

// stripeEvent returns a signed Stripe event of type typ about object.
func stripeEvent(t *testing.T, typ string, object any, secret string) (body []byte, signature string) {
	t.Helper()
	raw, err := json.Marshal(object)
	if err != nil {
		t.Fatal(err)
	}
	body, err = json.Marshal(map[string]any{"id": "evt_1", "object": "event", "type": typ, "api_version": stripe.APIVersion,
		"created": time.Now().Unix(), "data": map[string]json.RawMessage{"object": raw}})
	if err != nil {
		t.Fatal(err)
	}
	return body, webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: secret}).Header
}

// stripeCards knows Stripe's card ic_1 as our c1, and its dispute idp_1,
// which Stripe credited 500 since its event.
type stripeCards struct{ asked []string }

func (c *stripeCards) CardReference(_ context.Context, id string) (string, error) {
	c.asked = append(c.asked, id)
	if id == "ic_1" {
		return "c1", nil
	}
	return "", fmt.Errorf("%w: %s", issuer.ErrNotFound, id)
}

func (c *stripeCards) CompleteDispute(_ context.Context, n *issuer.Notification) error {
	c.asked = append(c.asked, n.Dispute.ID)
	if n.Dispute.ID != "idp_1" {
		return fmt.Errorf("%w: %s", issuer.ErrNotFound, n.Dispute.ID)
	}
	d := *n.Dispute
	d.Credited = 500
	n.Dispute, n.CardID, n.Reference = &d, "ic_1", "c1"
	return nil
}

// TestStripeEvents: an authorization request is decided and answered in
// Stripe's form; the events we follow are queued as the issuer's
// notifications, a transaction's card found by its Stripe id; the rest is
// acknowledged, doing nothing; nothing is done for what does not verify.
func TestStripeEvents(t *testing.T) {
	card := &stripe.IssuingCard{ID: "ic_1", Metadata: map[string]string{stripeissuing.Reference: "c1"}}
	merchant := &stripe.IssuingAuthorizationMerchantData{Name: "Kiosque", City: "Dakar", Country: "SN"}
	request := &stripe.IssuingAuthorization{ID: "iauth_1", Card: card, MerchantData: merchant, Currency: "usd",
		PendingRequest: &stripe.IssuingAuthorizationPendingRequest{Amount: 1250, Currency: "usd"}}
	created := &stripe.IssuingAuthorization{ID: "iauth_1", Card: card, MerchantData: merchant, Currency: "usd", Approved: true, Amount: 1250}
	closed := &stripe.IssuingAuthorization{ID: "iauth_1", Card: card, MerchantData: merchant, Currency: "usd", Approved: true, Status: "closed"}
	reversed := &stripe.IssuingAuthorization{ID: "iauth_1", Card: card, MerchantData: merchant, Currency: "usd", Approved: true, Status: "reversed"}
	capture := func(cardID string) *stripe.IssuingTransaction {
		return &stripe.IssuingTransaction{ID: "ipi_1", Type: "capture", Amount: -1250, Currency: "usd",
			Authorization: &stripe.IssuingAuthorization{ID: "iauth_1"}, Card: &stripe.IssuingCard{ID: cardID}}
	}
	refund := &stripe.IssuingTransaction{ID: "ipi_2", Type: "refund", Amount: 200, Currency: "usd",
		Authorization: &stripe.IssuingAuthorization{ID: "iauth_1"}, Card: &stripe.IssuingCard{ID: "ic_1"}}
	dispute := func(id string) map[string]any {
		return map[string]any{"id": id, "object": "issuing.dispute", "amount": 1250, "currency": "usd", "status": "won",
			"transaction": "ipi_1", "balance_transactions": nil, "metadata": map[string]string{"reference": "d1"}}
	}
	tests := []struct {
		name      string
		typ       string
		object    any
		secret    string
		wantErr   error
		decided   bool
		queued    string // the queued notification's type
		reference bool   // whether the card was looked up
	}{
		{"authorization request", stripeissuing.EventAuthorizationRequest, request, stripeSecret, nil, true, "", false},
		{"authorization created", stripeissuing.EventAuthorizationCreated, created, stripeSecret, nil, false, issuer.NotifyAdvice, false},
		{"capture", stripeissuing.EventTransactionCreated, capture("ic_1"), stripeSecret, nil, false, issuer.NotifySettlement, true},
		{"capture on a card not ours", stripeissuing.EventTransactionCreated, capture("ic_9"), stripeSecret, nil, false, "", true},
		{"refund, queued after its capture's head start", stripeissuing.EventTransactionCreated, refund, stripeSecret, nil, false, issuer.NotifyRefund, true},
		{"an authorization closed, its hold released after its capture's head start", stripeissuing.EventAuthorizationUpdated, closed, stripeSecret, nil, false, issuer.NotifyReversal, false},
		{"an authorization reversed", stripeissuing.EventAuthorizationUpdated, reversed, stripeSecret, nil, false, issuer.NotifyReversal, false},
		{"dispute, read as it is now", "issuing_dispute.funds_reinstated", dispute("idp_1"), stripeSecret, nil, false, issuer.NotifyDispute, true},
		{"dispute none of ours", "issuing_dispute.created", dispute("idp_9"), stripeSecret, nil, false, "", true},
		{"an event we do not read", "issuing_cardholder.created", map[string]string{"id": "ich_1"}, stripeSecret, nil, false, "", false},
		{"forged", stripeissuing.EventAuthorizationRequest, request, "whsec_someone_else", issuerhooks.ErrBadStripeSignature, false, "", false},
		{"signed but unreadable", stripeissuing.EventAuthorizationRequest, &stripe.IssuingAuthorization{ID: "iauth_2", Card: card},
			stripeSecret, &field.Error{}, false, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, q, cards := &decider{}, &sent{}, &stripeCards{}
			s := &issuerhooks.Stripe{Secrets: []string{"whsec_rolled_out", stripeSecret}, Decider: d, Queue: q, Lookups: cards}
			body, sig := stripeEvent(t, tt.typ, tt.object, tt.secret)
			r := httptest.NewRequest(http.MethodPost, "/api/v1/issuer/stripe/webhooks", strings.NewReader(string(body)))
			r.Header.Set(stripeissuing.SignatureHeader, sig)
			w := httptest.NewRecorder()
			err := issuerhookshttp.ReceiveStripe(s)(w, r)
			var fe *field.Error
			switch {
			case tt.wantErr == nil && err != nil:
				t.Fatal(err)
			case errors.As(tt.wantErr, &fe):
				if !errors.As(err, &fe) || fe.Field != "body" {
					t.Fatalf("err = %v, want a field error naming body", err)
				}
			case tt.wantErr != nil && !errors.Is(err, tt.wantErr):
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr == nil && w.Code != http.StatusOK {
				t.Errorf("status %d", w.Code)
			}
			if tt.decided {
				var answer struct {
					Approved bool
					Metadata map[string]string
				}
				if err := json.Unmarshal(w.Body.Bytes(), &answer); err != nil || !answer.Approved || answer.Metadata["transaction_id"] != "tx_iauth_1" {
					t.Errorf("answer %s (%v)", w.Body, err)
				}
				if v := w.Header().Get("Stripe-Version"); v != stripe.APIVersion {
					t.Errorf("Stripe-Version %q", v)
				}
			}
			if got := len(d.asked) == 1; got != tt.decided {
				t.Errorf("asked %+v", d.asked)
			}
			switch {
			case tt.queued == "" && len(q.bodies) > 0:
				t.Errorf("queued %v", q.bodies)
			case tt.queued != "":
				if len(q.bodies) != 1 {
					t.Fatalf("queued %v", q.bodies)
				}
				n, err := issuer.ParseNotification([]byte(q.bodies[0]))
				if err != nil || n.ID != "evt_1" || n.Type != tt.queued || n.Reference != "c1" || n.CardID != "ic_1" {
					t.Errorf("queued %+v, %v", n, err)
				}
				if n.Type == issuer.NotifyDispute && (n.Dispute.ID != "idp_1" || n.Dispute.Status != issuer.DisputeWon || n.Dispute.Credited != 500 ||
					n.Dispute.Reference != "d1" || n.Dispute.TransactionID != "ipi_1") {
					t.Errorf("queued the dispute %+v, want it as Stripe has it now", n.Dispute)
				}
				want := time.Duration(0)
				if tt.queued == issuer.NotifyRefund || strings.HasSuffix(tt.name, "head start") {
					want = issuerhooks.RefundDelay
				}
				if q.delays[0] != want {
					t.Errorf("queued with a delay of %v, want %v", q.delays[0], want)
				}
			}
			if (len(cards.asked) > 0) != tt.reference {
				t.Errorf("looked up %v", cards.asked)
			}
		})
	}
}

// FuzzStripeEvent signs, as Stripe would, an event whose type and
// data.object are anything: it is decided, queued or acknowledged (200),
// or refused as a bad body (400 naming it) having done nothing; it never
// panics.
func FuzzStripeEvent(f *testing.F) {
	f.Add(stripeissuing.EventAuthorizationRequest, `{"id":"iauth_1","card":{"id":"ic_1","metadata":{"reference":"c1"}},"pending_request":{"amount":100,"currency":"usd"},"merchant_data":{"name":"S"}}`)
	f.Add(stripeissuing.EventAuthorizationCreated, `{"id":"iauth_1","approved":false,"card":{"id":"ic_1","metadata":{"reference":"c1"}},"request_history":[null]}`)
	f.Add(stripeissuing.EventTransactionCreated, `{"id":"ipi_1","type":"capture","amount":-5,"currency":"usd","card":"ic_1","authorization":"iauth_1"}`)
	f.Add(stripeissuing.EventCardUpdated, `{"id":"ic_1","status":"canceled","metadata":null}`)
	f.Add(stripeissuing.EventAuthorizationUpdated, `null`)
	f.Add(stripeissuing.EventDisputeClosed, `{"id":"idp_1","amount":5,"status":"lost","transaction":"ipi_1"}`)
	f.Fuzz(func(t *testing.T, typ, object string) {
		if !json.Valid([]byte(object)) {
			object = strconv.Quote(object)
		}
		body := `{"id":"evt_1","object":"event","api_version":"` + stripe.APIVersion + `","type":` + strconv.Quote(typ) + `,"data":{"object":` + object + `}}`
		d, q, cards := &decider{}, &sent{}, &stripeCards{}
		s := &issuerhooks.Stripe{Secrets: []string{stripeSecret}, Decider: d, Queue: q, Lookups: cards}
		sig := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: []byte(body), Secret: stripeSecret}).Header
		_, answer, err := s.Handle(context.Background(), sig, []byte(body))
		var fe *field.Error
		switch {
		case err == nil:
			if answer == nil && len(d.asked) > 0 || len(q.bodies) > 1 || answer != nil && len(q.bodies) > 0 {
				t.Fatalf("answer %+v, asked %+v, queued %q", answer, d.asked, q.bodies)
			}
			for _, b := range q.bodies {
				if _, err := issuer.ParseNotification([]byte(b)); err != nil {
					t.Fatalf("queued a notification the card-worker cannot read: %v", err)
				}
			}
		case errors.As(err, &fe) && fe.Field == "body":
			if len(d.asked) > 0 || len(q.bodies) > 0 {
				t.Fatalf("refused (%v), yet asked %+v, queued %q", err, d.asked, q.bodies)
			}
		default:
			t.Fatalf("error %v: neither handled nor a bad body", err)
		}
	})
}
