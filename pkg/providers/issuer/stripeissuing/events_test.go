package stripeissuing_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	stripe "github.com/stripe/stripe-go/v85"
	"github.com/stripe/stripe-go/v85/webhook"

	"payments/pkg/providers/issuer"
	"payments/pkg/providers/issuer/stripeissuing"
)

const testSecret = "whsec_test_0123456789abcdef0123456789abcdef"

// event returns a Stripe event of type typ about object, as Stripe sends
// it, and its Stripe-Signature made with secret at t.
func event(t *testing.T, id, typ string, object any, version, secret string, at time.Time) ([]byte, string) {
	t.Helper()
	raw, err := json.Marshal(object)
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(map[string]any{
		"id": id, "object": "event", "type": typ, "api_version": version, "created": at.Unix(), "livemode": false,
		"data": map[string]json.RawMessage{"object": raw},
	})
	if err != nil {
		t.Fatal(err)
	}
	sp := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: secret, Timestamp: at})
	return body, sp.Header
}

// card is Stripe's card ic_1, ours c1.
var card = &stripe.IssuingCard{ID: "ic_1", Object: "issuing.card", Metadata: map[string]string{stripeissuing.Reference: "c1"}, Status: "active"}

var shop = &stripe.IssuingAuthorizationMerchantData{Name: "Kiosque", City: "Dakar", Country: "SN"}

func authorization(approved bool, status stripe.IssuingAuthorizationStatus, amount int64, reason stripe.IssuingAuthorizationRequestHistoryReason) *stripe.IssuingAuthorization {
	a := &stripe.IssuingAuthorization{
		ID: "iauth_1", Object: "issuing.authorization", Approved: approved, Status: status, Amount: amount,
		Currency: "usd", Card: card, MerchantData: shop, Metadata: map[string]string{},
	}
	if reason != "" {
		a.RequestHistory = []*stripe.IssuingAuthorizationRequestHistory{{Amount: 1250, Approved: approved, Reason: reason}}
	}
	return a
}

// TestParseEvent maps each event we read onto what it asks of us.
func TestParseEvent(t *testing.T) {
	now := time.Now()
	merchant := issuer.Merchant{Name: "Kiosque", City: "Dakar", Country: "SN"}
	request := authorization(false, "pending", 0, "")
	request.PendingRequest = &stripe.IssuingAuthorizationPendingRequest{Amount: 1250, Currency: "usd"}
	declined := authorization(false, "closed", 0, "webhook_declined")
	declined.Metadata[stripeissuing.MetadataDeclineReason] = "insufficient_funds"
	capture := &stripe.IssuingTransaction{ID: "ipi_1", Type: "capture", Amount: -1000, Currency: "usd",
		Authorization: &stripe.IssuingAuthorization{ID: "iauth_1"}, Card: &stripe.IssuingCard{ID: "ic_1"}}
	refund := &stripe.IssuingTransaction{ID: "ipi_2", Type: "refund", Amount: 400, Currency: "usd",
		Authorization: &stripe.IssuingAuthorization{ID: "iauth_1"}, Card: &stripe.IssuingCard{ID: "ic_1"}}
	canceled := &stripe.IssuingCard{ID: "ic_1", Status: "canceled", CancellationReason: "stolen", Metadata: card.Metadata}
	tests := []struct {
		name    string
		typ     string
		object  any
		request *issuer.AuthorizationRequest
		notice  *issuer.Notification
	}{
		{"authorization request", stripeissuing.EventAuthorizationRequest, request,
			&issuer.AuthorizationRequest{ID: "iauth_1", CardID: "ic_1", Reference: "c1", Kind: issuer.KindAuthorization,
				Amount: 1250, Currency: "USD", Merchant: merchant}, nil},
		{"approved", stripeissuing.EventAuthorizationCreated, authorization(true, "pending", 1250, "webhook_approved"), nil,
			&issuer.Notification{Type: issuer.NotifyAdvice, Decision: issuer.Approved,
				Transaction: &issuer.NetworkTransaction{ID: "iauth_1", Kind: issuer.KindAuthorization, Amount: 1250, Currency: "USD", Merchant: &merchant}}},
		{"declined by us", stripeissuing.EventAuthorizationCreated, declined, nil,
			&issuer.Notification{Type: issuer.NotifyAdvice, Decision: issuer.Declined, Reason: "insufficient_funds",
				Transaction: &issuer.NetworkTransaction{ID: "iauth_1", Kind: issuer.KindAuthorization, Amount: 1250, Currency: "USD", Merchant: &merchant}}},
		{"our answer late", stripeissuing.EventAuthorizationCreated, authorization(false, "closed", 0, "webhook_timeout"), nil,
			&issuer.Notification{Type: issuer.NotifyAdvice, Decision: issuer.Declined, Reason: issuer.StandInReason,
				Transaction: &issuer.NetworkTransaction{ID: "iauth_1", Kind: issuer.KindAuthorization, Amount: 1250, Currency: "USD", Merchant: &merchant}}},
		{"our answer failed", stripeissuing.EventAuthorizationCreated, authorization(false, "closed", 0, "webhook_error"), nil,
			&issuer.Notification{Type: issuer.NotifyAdvice, Decision: issuer.Declined, Reason: issuer.StandInReason,
				Transaction: &issuer.NetworkTransaction{ID: "iauth_1", Kind: issuer.KindAuthorization, Amount: 1250, Currency: "USD", Merchant: &merchant}}},
		{"declined by Stripe unasked", stripeissuing.EventAuthorizationCreated, authorization(false, "closed", 0, "card_inactive"), nil, nil},
		{"reversed", stripeissuing.EventAuthorizationUpdated, authorization(true, "reversed", 0, "webhook_approved"), nil,
			&issuer.Notification{Type: issuer.NotifyReversal, Transaction: &issuer.NetworkTransaction{ID: "iauth_1", AuthorizationID: "iauth_1", Currency: "USD"}}},
		{"expired", stripeissuing.EventAuthorizationUpdated, authorization(true, "expired", 0, "webhook_approved"), nil,
			&issuer.Notification{Type: issuer.NotifyReversal, Transaction: &issuer.NetworkTransaction{ID: "iauth_1", AuthorizationID: "iauth_1", Currency: "USD"}}},
		{"closed by its capture", stripeissuing.EventAuthorizationUpdated, authorization(true, "closed", 0, "webhook_approved"), nil, nil},
		{"capture", stripeissuing.EventTransactionCreated, capture, nil,
			&issuer.Notification{Type: issuer.NotifySettlement, Reference: "",
				Transaction: &issuer.NetworkTransaction{ID: "ipi_1", AuthorizationID: "iauth_1", Amount: 1000, Currency: "USD"}}},
		{"refund", stripeissuing.EventTransactionCreated, refund, nil,
			&issuer.Notification{Type: issuer.NotifyRefund, Reference: "",
				Transaction: &issuer.NetworkTransaction{ID: "ipi_2", AuthorizationID: "iauth_1", Amount: 400, Currency: "USD"}}},
		{"card canceled at Stripe", stripeissuing.EventCardUpdated, canceled, nil,
			&issuer.Notification{Type: issuer.NotifyCardTerminated, Reason: "canceled at Stripe (stolen)"}},
		{"card frozen", stripeissuing.EventCardUpdated, &stripe.IssuingCard{ID: "ic_1", Status: "inactive", Metadata: card.Metadata}, nil, nil},
		{"another event", "issuing_dispute.created", map[string]string{"id": "idp_1"}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, sig := event(t, "evt_1", tt.typ, tt.object, stripe.APIVersion, testSecret, now)
			got, err := stripeissuing.ParseEvent(body, sig, []string{"whsec_another", testSecret})
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != "evt_1" || got.Type != tt.typ {
				t.Errorf("event %s %s", got.ID, got.Type)
			}
			if !reflect.DeepEqual(got.Request, tt.request) {
				t.Errorf("request %+v, want %+v", got.Request, tt.request)
			}
			want := tt.notice
			if want != nil {
				want.ID, want.CardID, want.CreatedAt = "evt_1", "ic_1", time.Unix(now.Unix(), 0).UTC()
				if tt.typ != stripeissuing.EventTransactionCreated {
					want.Reference = "c1"
				}
			}
			if !reflect.DeepEqual(got.Notification, want) {
				t.Errorf("notification %+v, want %+v", got.Notification, want)
			}
			if got.Answer != nil || (got.Request == nil && got.Notification == nil) != (got.Ignored != "") {
				t.Errorf("ignored %q", got.Ignored)
			}
		})
	}
}

// TestParseEventIncrement: a request for more on an authorization already
// approved (an incremental authorization) is answered with a decline, not
// decided: Decide would answer the first decision again, holding nothing
// more.
func TestParseEventIncrement(t *testing.T) {
	increment := authorization(true, "pending", 1250, "webhook_approved")
	increment.PendingRequest = &stripe.IssuingAuthorizationPendingRequest{Amount: 500, Currency: "usd"}
	body, sig := event(t, "evt_2", stripeissuing.EventAuthorizationRequest, increment, stripe.APIVersion, testSecret, time.Now())
	got, err := stripeissuing.ParseEvent(body, sig, []string{testSecret})
	if err != nil {
		t.Fatal(err)
	}
	want := &stripeissuing.Answer{Metadata: map[string]string{stripeissuing.MetadataDeclineReason: stripeissuing.DeclineIncrement}}
	if got.Request != nil || got.Notification != nil || !reflect.DeepEqual(got.Answer, want) {
		t.Errorf("event %+v, want the answer %+v alone", got, want)
	}
}

// TestParseEventRefuses what is not a verified event of ours.
func TestParseEventRefuses(t *testing.T) {
	now := time.Now()
	a := authorization(true, "pending", 1250, "webhook_approved")
	good, sig := event(t, "evt_1", stripeissuing.EventAuthorizationCreated, a, stripe.APIVersion, testSecret, now)
	_, stale := event(t, "evt_1", stripeissuing.EventAuthorizationCreated, a, stripe.APIVersion, testSecret, now.Add(-6*time.Minute))
	_, forged := event(t, "evt_1", stripeissuing.EventAuthorizationCreated, a, stripe.APIVersion, "whsec_not_ours", now)
	other, otherSig := event(t, "evt_1", stripeissuing.EventAuthorizationCreated, a, "2020-08-27", testSecret, now)
	noCard := authorization(true, "pending", 1250, "webhook_approved")
	noCard.Card = nil
	broken, brokenSig := event(t, "evt_1", stripeissuing.EventAuthorizationCreated, noCard, stripe.APIVersion, testSecret, now)
	tests := []struct {
		name      string
		body      []byte
		signature string
		secrets   []string
		want      error
	}{
		{"no signature", good, "", []string{testSecret}, stripeissuing.ErrSignature},
		{"stale", good, stale, []string{testSecret}, stripeissuing.ErrSignature},
		{"forged", good, forged, []string{testSecret}, stripeissuing.ErrSignature},
		{"body changed", append([]byte(" "), good...), sig, []string{testSecret}, stripeissuing.ErrSignature},
		{"no secret", good, sig, nil, stripeissuing.ErrSignature},
		{"another API version", other, otherSig, []string{testSecret}, stripeissuing.ErrBadEvent},
		{"another API version, the second secret not ours", other, otherSig, []string{testSecret, "whsec_rolled_out"}, stripeissuing.ErrBadEvent},
		{"no card", broken, brokenSig, []string{testSecret}, stripeissuing.ErrBadEvent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := stripeissuing.ParseEvent(tt.body, tt.signature, tt.secrets); !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

// TestNewAnswer: our decision as Stripe reads it.
func TestNewAnswer(t *testing.T) {
	reason, tx := "insufficient_funds", "0193-tx"
	tests := []struct {
		in   issuer.AuthorizationAnswer
		want string
	}{
		{issuer.AuthorizationAnswer{Decision: issuer.Approved, TransactionID: &tx}, `{"approved":true,"metadata":{"transaction_id":"0193-tx"}}`},
		{issuer.AuthorizationAnswer{Decision: issuer.Declined, DeclineReason: &reason, TransactionID: &tx},
			`{"approved":false,"metadata":{"decline_reason":"insufficient_funds","transaction_id":"0193-tx"}}`},
		{issuer.AuthorizationAnswer{Decision: issuer.Declined, DeclineReason: &reason}, `{"approved":false,"metadata":{"decline_reason":"insufficient_funds"}}`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(stripeissuing.NewAnswer(tt.in))
		if err != nil || string(b) != tt.want {
			t.Errorf("%+v: %s, %v; want %s", tt.in, b, err, tt.want)
		}
	}
}
