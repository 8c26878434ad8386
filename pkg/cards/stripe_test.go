package cards_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	stripe "github.com/stripe/stripe-go/v85"
	"github.com/stripe/stripe-go/v85/webhook"

	"payments/pkg/app/apptest"
	"payments/pkg/cards"
	"payments/pkg/function"
	"payments/pkg/function/stripewebhooks"
	"payments/pkg/providers/issuer/stripeissuing"
	"payments/pkg/queue/queuetest"
	"payments/pkg/store/moneystore"
	"payments/pkg/waittest"
)

// stripeEvent posts a Stripe event of type typ about object to POST
// /issuer/stripe/webhooks of h, signed as Stripe signs it with secret.
func (e *networkEnv) stripeEvent(h function.HTTPHandler, id, typ string, object any, secret string) apptest.Result {
	e.T.Helper()
	raw, err := json.Marshal(object)
	if err != nil {
		e.T.Fatal(err)
	}
	body, err := json.Marshal(map[string]any{"id": id, "object": "event", "type": typ, "api_version": stripe.APIVersion,
		"created": time.Now().Unix(), "data": map[string]json.RawMessage{"object": raw}})
	if err != nil {
		e.T.Fatal(err)
	}
	sig := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: secret}).Header
	return e.Call(h, "", "POST", "/issuer/stripe/webhooks", string(body), stripeissuing.SignatureHeader, sig)
}

// stripeAuthorization is Stripe's authorization id on card for amount
// cents, as an issuing_authorization.request carries it.
func stripeAuthorization(id string, card cards.Card, amount int64) *stripe.IssuingAuthorization {
	return &stripe.IssuingAuthorization{
		ID: id, Object: "issuing.authorization", Status: "pending", Currency: "usd",
		Card:           &stripe.IssuingCard{ID: card.IssuerCardID, Metadata: map[string]string{stripeissuing.Reference: card.ID}},
		MerchantData:   &stripe.IssuingAuthorizationMerchantData{Name: "Book Shop", City: "Austin", Country: "US"},
		PendingRequest: &stripe.IssuingAuthorizationPendingRequest{Amount: amount, Currency: "usd"},
	}
}

// TestStripeDecidesInTheResponse: through the stripe-webhooks function, an
// issuing_authorization.request is decided by the same code as POST
// /issuer/authorizations and answered in the response, in Stripe's form;
// sent again, it is answered the same and holds once; a decline's fee the
// card cannot pay is taken from the wallet; a verification holds nothing;
// more asked on an approved authorization is declined; Stripe's advice of the
// decision is queued for the card-worker, which applies it once; an event
// not signed with the issuer's secret changes nothing.
func TestStripeDecidesInTheResponse(t *testing.T) {
	t.Parallel()
	e := newNetworkEnv(t)
	companyID, _, _, cardID := e.fundedCard(20, 10)
	ctx := context.Background()
	cs := moneystore.NewCards(e.DB)
	card, err := cs.Card(ctx, companyID, cardID)
	if err != nil {
		t.Fatal(err)
	}
	h, err := stripewebhooks.New(ctx, apptest.Recording(e.Cfg, "stripe-webhooks"))
	if err != nil {
		t.Fatal(err)
	}
	secret := string(apptest.IssuerTestSecret)
	type answer struct {
		Approved bool
		Metadata map[string]string
	}
	ask := func(req *stripe.IssuingAuthorization) answer {
		t.Helper()
		r := e.stripeEvent(h, "evt_"+req.ID, stripeissuing.EventAuthorizationRequest, req, secret)
		var a answer
		if err := json.Unmarshal([]byte(r.Raw), &a); err != nil || r.Status != 200 || r.Headers["Stripe-Version"] != stripe.APIVersion {
			t.Fatalf("%s: %d %s %v (%v)", req.ID, r.Status, r.Raw, r.Headers, err)
		}
		return a
	}
	decide := func(id string, amount int64) answer {
		t.Helper()
		return ask(stripeAuthorization(id, card, amount))
	}
	first := decide("iauth_1", 1500)
	if !first.Approved || first.Metadata[stripeissuing.MetadataTransactionID] == "" {
		t.Fatalf("approval: %+v", first)
	}
	for range 3 {
		if again := decide("iauth_1", 1500); again.Approved != first.Approved || again.Metadata[stripeissuing.MetadataTransactionID] != first.Metadata[stripeissuing.MetadataTransactionID] {
			t.Fatalf("sent again: %+v, first %+v", again, first)
		}
	}
	if a := decide("iauth_2", 490); !a.Approved {
		t.Fatalf("approval of all but 0.10: %+v", a)
	}
	// The failed-payment fee is more than the 0.10 left: the rest is taken
	// from the wallet.
	if a := decide("iauth_3", 100); a.Approved || a.Metadata[stripeissuing.MetadataDeclineReason] != "insufficient_funds" {
		t.Fatalf("decline: %+v", a)
	}
	// A verification ($0) is approved, holding nothing.
	if a := decide("iauth_verify", 0); !a.Approved {
		t.Fatalf("verification: %+v", a)
	}
	// More asked on iauth_1 (an increment): declined, not decided again.
	more := stripeAuthorization("iauth_1", card, 500)
	more.Approved, more.Amount = true, 1500
	more.RequestHistory = []*stripe.IssuingAuthorizationRequestHistory{{Amount: 1500, Approved: true, Reason: "webhook_approved"}}
	if a := ask(more); a.Approved || a.Metadata[stripeissuing.MetadataDeclineReason] != stripeissuing.DeclineIncrement {
		t.Fatalf("increment: %+v", a)
	}
	c, err := cs.Card(ctx, companyID, cardID)
	if err != nil {
		t.Fatal(err)
	}
	if c.Held != 1990 {
		t.Fatalf("held %d, want 1990 (each approval once, no increment)", c.Held)
	}

	// Stripe's advice of the approval: queued, applied once by the
	// card-worker, which publishes the decision's events.
	created := stripeAuthorization("iauth_1", card, 0)
	created.Approved, created.Amount, created.PendingRequest = true, 1500, nil
	created.RequestHistory = []*stripe.IssuingAuthorizationRequestHistory{{Amount: 1500, Approved: true, Reason: "webhook_approved"}}
	for range 2 {
		if r := e.stripeEvent(h, "evt_created_1", stripeissuing.EventAuthorizationCreated, created, secret); r.Status != 200 || r.Str("data", "id") != "evt_created_1" {
			t.Fatalf("created: %d %s", r.Status, r.Raw)
		}
	}
	e.drained(t)
	if c, err := cs.Card(ctx, companyID, cardID); err != nil || c.Held != 1990 {
		t.Fatalf("after the advice: held %d (%v), want 1990", c.Held, err)
	}

	// Not signed with the issuer's secret: 401, nothing decided.
	if r := e.stripeEvent(h, "evt_forged", stripeissuing.EventAuthorizationRequest, stripeAuthorization("iauth_4", card, 100), "whsec_forged"); r.Status != 401 || r.Str("code") != "INVALID_SIGNATURE" {
		t.Fatalf("forged: %d %s", r.Status, r.Raw)
	}
	if _, err := cs.NetworkTransaction(ctx, companyID, "iauth_4"); err == nil {
		t.Error("a forged request was decided")
	}
	e.VerifyCards(companyID)
}

// drained waits until the card-workers have taken every message off the
// issuer-events queue: a message whose application failed is made visible
// again at once, so the queue drains only when each was applied.
func (e *networkEnv) drained(t *testing.T) {
	t.Helper()
	client := queuetest.Client(t)
	waittest.Until(t, 30*time.Second, "the issuer-events queue drained", func() bool {
		out, err := client.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{
			QueueUrl: aws.String(e.Cfg.IssuerEventsQueueURL),
			AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages,
				sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible},
		})
		return err == nil && out.Attributes["ApproximateNumberOfMessages"] == "0" && out.Attributes["ApproximateNumberOfMessagesNotVisible"] == "0"
	})
}
