package stripeissuing_test

import (
	"encoding/json"
	"errors"
	"fmt"
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
	return updateEvent(t, id, typ, object, nil, version, secret, at)
}

// updateEvent is event with the previous_attributes of an update.
func updateEvent(t *testing.T, id, typ string, object any, prev map[string]any, version, secret string, at time.Time) ([]byte, string) {
	t.Helper()
	raw, ok := object.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(object); err != nil {
			t.Fatal(err)
		}
	}
	data := map[string]any{"object": raw}
	if prev != nil {
		data["previous_attributes"] = prev
	}
	body, err := json.Marshal(map[string]any{
		"id": id, "object": "event", "type": typ, "api_version": version, "created": at.Unix(), "livemode": false,
		"data": data,
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

// transaction is Stripe's transaction id of typ and amount on card ic_1,
// of authorization auth ("" for none).
func transaction(id string, typ stripe.IssuingTransactionType, amount int64, auth string) *stripe.IssuingTransaction {
	t := &stripe.IssuingTransaction{ID: id, Object: "issuing.transaction", Type: typ, Amount: amount, Currency: "usd",
		Card: &stripe.IssuingCard{ID: "ic_1"}, MerchantData: shop}
	if auth != "" {
		t.Authorization = &stripe.IssuingAuthorization{ID: auth}
	}
	return t
}

// disputeFixture is the Issuing dispute of Stripe's API reference
// (https://docs.stripe.com/api/issuing/disputes/object), with our
// metadata, in status, its balance transactions' amounts (nil: not
// included, as in an event) and its transaction (an id, or the object
// expanded).
func disputeFixture(t *testing.T, status string, credits []int64, transaction any) json.RawMessage {
	t.Helper()
	d := map[string]any{
		"id": "idp_1MykdxFtDWhhyHE1BFAV3osZ", "object": "issuing.dispute", "amount": 1250, "created": 1681947753,
		"currency": "usd", "livemode": false, "metadata": map[string]string{"reference": "d1"}, "status": status,
		"evidence":    map[string]any{"fraudulent": map[string]any{"additional_documentation": nil, "explanation": "This transaction is fraudulent."}, "reason": "fraudulent"},
		"transaction": transaction, "balance_transactions": nil,
	}
	if credits != nil {
		var bts []map[string]any
		for i, a := range credits {
			bts = append(bts, map[string]any{"id": fmt.Sprintf("txn_%d", i), "object": "balance_transaction", "amount": a, "net": a,
				"currency": "usd", "type": "issuing_dispute", "reporting_category": "issuing_dispute", "status": "available"})
		}
		d["balance_transactions"] = bts
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestParseEvent maps each event we read onto what it asks of us.
func TestParseEvent(t *testing.T) {
	now := time.Now()
	merchant := issuer.Merchant{Name: "Kiosque", City: "Dakar", Country: "SN"}
	request := authorization(false, "pending", 0, "")
	request.PendingRequest = &stripe.IssuingAuthorizationPendingRequest{Amount: 1250, Currency: "usd"}
	declined := authorization(false, "closed", 0, "webhook_declined")
	declined.Metadata[stripeissuing.MetadataDeclineReason] = "insufficient_funds"
	unasked := authorization(true, "pending", 1250, "")
	partial := authorization(true, "pending", 900, "webhook_approved")
	partial.RequestHistory[0].Amount = 1000 // the merchant asked 1000, Stripe held 900
	canceled := &stripe.IssuingCard{ID: "ic_1", Status: "canceled", CancellationReason: "stolen", Metadata: card.Metadata}
	advice := func(amount int64, reason string) *issuer.Notification {
		return &issuer.Notification{Type: issuer.NotifyAdvice, Decision: issuer.Approved, Reason: reason,
			Transaction: &issuer.NetworkTransaction{ID: "iauth_1", Kind: issuer.KindAuthorization, Amount: amount, Currency: "USD", Merchant: &merchant}}
	}
	decline := func(reason string) *issuer.Notification {
		n := advice(1250, reason)
		n.Decision = issuer.Declined
		return n
	}
	release := func(status string) *issuer.Notification {
		return &issuer.Notification{Type: issuer.NotifyReversal, Reason: status,
			Transaction: &issuer.NetworkTransaction{ID: "iauth_1#" + status, AuthorizationID: "iauth_1", Currency: "USD"}}
	}
	moved := func(typ, id, auth string, amount int64) *issuer.Notification {
		return &issuer.Notification{Type: typ,
			Transaction: &issuer.NetworkTransaction{ID: id, AuthorizationID: auth, Amount: amount, Currency: "USD", Merchant: &merchant}}
	}
	disputed := func(status string, credited int64) *issuer.Notification {
		return &issuer.Notification{Type: issuer.NotifyDispute, Dispute: &issuer.Dispute{
			ID: "idp_1MykdxFtDWhhyHE1BFAV3osZ", Reference: "d1", TransactionID: "ipi_1MykXhFtDWhhyHE1UjsZZ3xQ",
			Status: status, Amount: 1250, Credited: credited}}
	}
	expandedTx := map[string]any{"id": "ipi_1MykXhFtDWhhyHE1UjsZZ3xQ", "object": "issuing.transaction", "type": "capture", "amount": -1250,
		"currency": "usd", "card": card}
	withCard := disputed(issuer.DisputeWon, 1250)
	withCard.CardID, withCard.Reference = "ic_1", "c1"
	tests := []struct {
		name    string
		typ     string
		object  any
		prev    map[string]any // the update's previous_attributes
		request *issuer.AuthorizationRequest
		notice  *issuer.Notification // its ID and CreatedAt are the event's; CardID ic_1, Reference c1 unless card is set
		card    bool                 // notice names the card as given
	}{
		{"authorization request", stripeissuing.EventAuthorizationRequest, request, nil,
			&issuer.AuthorizationRequest{ID: "iauth_1", CardID: "ic_1", Reference: "c1", Kind: issuer.KindAuthorization,
				Amount: 1250, Currency: "USD", Merchant: merchant}, nil, false},
		{"approved by us", stripeissuing.EventAuthorizationCreated, authorization(true, "pending", 1250, "webhook_approved"), nil, nil,
			advice(1250, ""), false},
		{"declined by us", stripeissuing.EventAuthorizationCreated, declined, nil, nil, decline("insufficient_funds"), false},
		{"our answer late, Stripe declined", stripeissuing.EventAuthorizationCreated, authorization(false, "closed", 0, "webhook_timeout"), nil, nil,
			decline(issuer.StandInReason), false},
		{"our answer failed, Stripe declined", stripeissuing.EventAuthorizationCreated, authorization(false, "closed", 0, "webhook_error"), nil, nil,
			decline(issuer.StandInReason), false},
		{"declined by Stripe unasked", stripeissuing.EventAuthorizationCreated, authorization(false, "closed", 0, "card_inactive"), nil, nil, nil, false},
		{"our answer late, Stripe approved", stripeissuing.EventAuthorizationCreated, authorization(true, "pending", 1250, "webhook_timeout"), nil, nil,
			advice(1250, issuer.ApprovedWithoutUs), false},
		{"our answer failed, Stripe approved", stripeissuing.EventAuthorizationCreated, authorization(true, "pending", 1250, "webhook_error"), nil, nil,
			advice(1250, issuer.ApprovedWithoutUs), false},
		{"the network approved while Stripe was unavailable", stripeissuing.EventAuthorizationCreated, authorization(true, "pending", 1250, "network_fallback"), nil, nil,
			advice(1250, issuer.ApprovedWithoutUs), false},
		{"approved before 2025-03-31's network_fallback", stripeissuing.EventAuthorizationCreated, authorization(true, "pending", 1250, "card_active"), nil, nil,
			advice(1250, issuer.ApprovedWithoutUs), false},
		{"approved with no request to us", stripeissuing.EventAuthorizationCreated, unasked, nil, nil, advice(1250, issuer.ApprovedWithoutUs), false},
		{"approved in part without us: what Stripe holds", stripeissuing.EventAuthorizationCreated, func() *stripe.IssuingAuthorization {
			a := authorization(true, "pending", 900, "webhook_timeout")
			a.RequestHistory[0].Amount = 1000
			return a
		}(), nil, nil, advice(900, issuer.ApprovedWithoutUs), false},
		{"approved by us, in part: our decision's amount", stripeissuing.EventAuthorizationCreated, partial, nil, nil, advice(1000, ""), false},
		{"reversed", stripeissuing.EventAuthorizationUpdated, authorization(true, "reversed", 0, "webhook_approved"),
			map[string]any{"status": "pending", "amount": 1250}, nil, release("reversed"), false},
		{"expired, still capturable", stripeissuing.EventAuthorizationUpdated, authorization(true, "expired", 0, "webhook_approved"),
			map[string]any{"status": "pending", "amount": 1250}, nil, release("expired"), false},
		{"closed by its last capture", stripeissuing.EventAuthorizationUpdated, authorization(true, "closed", 0, "webhook_approved"),
			map[string]any{"status": "pending", "amount": 1250, "transactions": []any{}}, nil, release("closed"), false},
		{"a declined authorization closed", stripeissuing.EventAuthorizationUpdated, authorization(false, "closed", 0, "webhook_declined"),
			map[string]any{"metadata": map[string]string{}}, nil, nil, false},
		{"reversed in part", stripeissuing.EventAuthorizationUpdated, authorization(true, "pending", 1000, "webhook_approved"),
			map[string]any{"amount": 1250, "merchant_amount": 1250}, nil,
			&issuer.Notification{Type: issuer.NotifyReversal, Reason: stripeissuing.ReasonPartialReversal,
				Transaction: &issuer.NetworkTransaction{ID: "iauth_1#reversal#1000", AuthorizationID: "iauth_1", Amount: 250, Currency: "USD"}}, false},
		{"finalized at 0", stripeissuing.EventAuthorizationUpdated, authorization(true, "pending", 0, "webhook_approved"),
			map[string]any{"amount": 1250}, nil,
			&issuer.Notification{Type: issuer.NotifyReversal, Reason: stripeissuing.ReasonPartialReversal,
				Transaction: &issuer.NetworkTransaction{ID: "iauth_1#reversal#0", AuthorizationID: "iauth_1", Amount: 1250, Currency: "USD"}}, false},
		{"captured in part, kept open", stripeissuing.EventAuthorizationUpdated, authorization(true, "pending", 250, "webhook_approved"),
			map[string]any{"amount": 1250, "transactions": []any{}}, nil, nil, false},
		{"incremented without us", stripeissuing.EventAuthorizationUpdated, authorization(true, "pending", 1750, "webhook_timeout"),
			map[string]any{"amount": 1250, "request_history": []any{}}, nil,
			&issuer.Notification{Type: issuer.NotifyAdvice, Decision: issuer.Approved, Reason: issuer.ApprovedWithoutUs,
				Transaction: &issuer.NetworkTransaction{ID: "iauth_1#increment#1750", AuthorizationID: "iauth_1", Kind: issuer.KindAuthorization,
					Amount: 500, Currency: "USD", Merchant: &merchant}}, false},
		{"an increment declined", stripeissuing.EventAuthorizationUpdated, authorization(true, "pending", 1250, "webhook_declined"),
			map[string]any{"request_history": []any{}}, nil, nil, false},
		{"capture", stripeissuing.EventTransactionCreated, transaction("ipi_1", "capture", -1000, "iauth_1"), nil, nil,
			moved(issuer.NotifySettlement, "ipi_1", "iauth_1", 1000), false},
		{"capture of more than held", stripeissuing.EventTransactionCreated, transaction("ipi_1", "capture", -1600, "iauth_1"), nil, nil,
			moved(issuer.NotifySettlement, "ipi_1", "iauth_1", 1600), false},
		{"force capture", stripeissuing.EventTransactionCreated, transaction("ipi_3", "capture", -700, ""), nil, nil,
			moved(issuer.NotifySettlement, "ipi_3", "", 700), false},
		{"refund", stripeissuing.EventTransactionCreated, transaction("ipi_2", "refund", 400, "iauth_1"), nil, nil,
			moved(issuer.NotifyRefund, "ipi_2", "iauth_1", 400), false},
		{"unlinked refund", stripeissuing.EventTransactionCreated, transaction("ipi_4", "refund", 300, ""), nil, nil,
			moved(issuer.NotifyRefund, "ipi_4", "", 300), false},
		{"card canceled at Stripe", stripeissuing.EventCardUpdated, canceled, nil, nil,
			&issuer.Notification{Type: issuer.NotifyCardTerminated, Reason: "canceled at Stripe (stolen)"}, false},
		{"card frozen", stripeissuing.EventCardUpdated, &stripe.IssuingCard{ID: "ic_1", Status: "inactive", Metadata: card.Metadata}, nil, nil, nil, false},
		{"dispute created", stripeissuing.EventDisputeCreated, disputeFixture(t, "unsubmitted", nil, "ipi_1MykXhFtDWhhyHE1UjsZZ3xQ"), nil, nil,
			disputed(issuer.DisputeSubmitted, 0), true},
		{"dispute updated", stripeissuing.EventDisputeUpdated, disputeFixture(t, "unsubmitted", nil, "ipi_1MykXhFtDWhhyHE1UjsZZ3xQ"), nil, nil,
			disputed(issuer.DisputeSubmitted, 0), true},
		{"dispute submitted", stripeissuing.EventDisputeSubmitted, disputeFixture(t, "submitted", nil, "ipi_1MykXhFtDWhhyHE1UjsZZ3xQ"), nil, nil,
			disputed(issuer.DisputeSubmitted, 0), true},
		{"provisional credit", stripeissuing.EventDisputeFundsReinstated, disputeFixture(t, "submitted", []int64{1250}, "ipi_1MykXhFtDWhhyHE1UjsZZ3xQ"), nil, nil,
			disputed(issuer.DisputeSubmitted, 1250), true},
		{"dispute won", stripeissuing.EventDisputeFundsReinstated, disputeFixture(t, "won", []int64{1250}, "ipi_1MykXhFtDWhhyHE1UjsZZ3xQ"), nil, nil,
			disputed(issuer.DisputeWon, 1250), true},
		{"dispute lost, its credit taken back", stripeissuing.EventDisputeFundsRescinded, disputeFixture(t, "lost", []int64{1250, -1250}, "ipi_1MykXhFtDWhhyHE1UjsZZ3xQ"), nil, nil,
			disputed(issuer.DisputeLost, 0), true},
		{"more taken back than credited", stripeissuing.EventDisputeFundsRescinded, disputeFixture(t, "lost", []int64{-300}, "ipi_1MykXhFtDWhhyHE1UjsZZ3xQ"), nil, nil,
			disputed(issuer.DisputeLost, 0), true},
		{"dispute lost", stripeissuing.EventDisputeClosed, disputeFixture(t, "lost", []int64{}, "ipi_1MykXhFtDWhhyHE1UjsZZ3xQ"), nil, nil,
			disputed(issuer.DisputeLost, 0), true},
		{"dispute expired", stripeissuing.EventDisputeClosed, disputeFixture(t, "expired", nil, "ipi_1MykXhFtDWhhyHE1UjsZZ3xQ"), nil, nil,
			disputed(issuer.DisputeLost, 0), true},
		{"dispute with its transaction's card", stripeissuing.EventDisputeClosed, disputeFixture(t, "won", []int64{1250}, expandedTx), nil, nil,
			withCard, true},
		{"another event", "issuing_cardholder.created", map[string]string{"id": "ich_1"}, nil, nil, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, sig := updateEvent(t, "evt_1", tt.typ, tt.object, tt.prev, stripe.APIVersion, testSecret, now)
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
				want.ID, want.CreatedAt = "evt_1", time.Unix(now.Unix(), 0).UTC()
				if !tt.card {
					want.CardID = "ic_1"
					if tt.typ != stripeissuing.EventTransactionCreated {
						want.Reference = "c1"
					}
				}
			}
			if !reflect.DeepEqual(got.Notification, want) {
				t.Errorf("notification %s, want %s", show(got.Notification), show(want))
			}
			if got.Answer != nil || (got.Request == nil && got.Notification == nil) != (got.Ignored != "") {
				t.Errorf("ignored %q", got.Ignored)
			}
			if want != nil && want.Reference != "" {
				if _, err := got.Body(); err != nil {
					t.Errorf("Body: %v", err)
				}
			}
		})
	}
}

// show prints a notification with what it points to.
func show(n *issuer.Notification) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestParseEventRefusesDisputes: a dispute event Stripe's shapes do not
// allow is a bad event, and a dispute's notification needs its card
// before it is queued.
func TestParseEventRefusesDisputes(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name   string
		object json.RawMessage
	}{
		{"unknown status", disputeFixture(t, "pending_review", nil, "ipi_1")},
		{"no transaction", disputeFixture(t, "won", nil, nil)},
		{"amount 0", json.RawMessage(`{"id":"idp_1","object":"issuing.dispute","amount":0,"status":"won","transaction":"ipi_1"}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body, sig := event(t, "evt_1", stripeissuing.EventDisputeClosed, tc.object, stripe.APIVersion, testSecret, now)
			if _, err := stripeissuing.ParseEvent(body, sig, []string{testSecret}); !errors.Is(err, stripeissuing.ErrBadEvent) {
				t.Errorf("err = %v, want ErrBadEvent", err)
			}
		})
	}
	body, sig := event(t, "evt_1", stripeissuing.EventDisputeCreated, disputeFixture(t, "unsubmitted", nil, "ipi_1"), stripe.APIVersion, testSecret, now)
	ev, err := stripeissuing.ParseEvent(body, sig, []string{testSecret})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ev.Body(); !errors.Is(err, stripeissuing.ErrBadEvent) {
		t.Errorf("Body of a dispute whose card is not known yet: %v, want ErrBadEvent", err)
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
