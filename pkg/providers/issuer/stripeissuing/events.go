package stripeissuing

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	stripe "github.com/stripe/stripe-go/v85"
	"github.com/stripe/stripe-go/v85/webhook"

	"payments/pkg/providers/issuer"
)

// SignatureHeader is the request header that carries Stripe's signature.
const SignatureHeader = "Stripe-Signature"

// APIVersion is the version of Stripe's API this adapter speaks: the
// Stripe-Version of our answers to authorization requests, and the one our
// webhook endpoints at Stripe must be created with (an event of another
// version is refused, its shape unknown to stripe-go).
const APIVersion = stripe.APIVersion

// Stripe's event types we read.
const (
	EventAuthorizationRequest = "issuing_authorization.request"
	EventAuthorizationCreated = "issuing_authorization.created"
	EventAuthorizationUpdated = "issuing_authorization.updated"
	EventTransactionCreated   = "issuing_transaction.created"
	EventCardUpdated          = "issuing_card.updated"
)

// Stripe's Issuing dispute events, each carrying the dispute as it is then.
const (
	EventDisputeCreated         = "issuing_dispute.created"
	EventDisputeUpdated         = "issuing_dispute.updated"
	EventDisputeSubmitted       = "issuing_dispute.submitted"
	EventDisputeFundsReinstated = "issuing_dispute.funds_reinstated"
	EventDisputeFundsRescinded  = "issuing_dispute.funds_rescinded"
	EventDisputeClosed          = "issuing_dispute.closed"
)

// Errors of ParseEvent.
var (
	// ErrSignature is a Stripe-Signature missing, malformed, stale (more
	// than 5 minutes from now) or made with none of our secrets.
	ErrSignature = errors.New("stripeissuing: missing, malformed, stale or forged signature")
	// ErrBadEvent is a signed event that cannot be read as Stripe's.
	ErrBadEvent = errors.New("stripeissuing: malformed event")
)

// Event is what one of Stripe's events asks of us: at most one of Request,
// Answer and Notification is set; none for an event we have nothing to do
// with (a declined authorization closing, a card's freeze).
type Event struct {
	ID, Type string
	// Request is an issuing_authorization.request's authorization, to be
	// decided now and answered in the response (Answer).
	Request *issuer.AuthorizationRequest
	// Answer, set for an increment (a request for more on an authorization
	// already decided), is the answer to give without deciding: a decline.
	Answer *Answer
	// Notification is the event as the issuer's notification, for the
	// issuer-events queue. A transaction's names no card Reference (the
	// event carries Stripe's card id only): CardReference finds it. A
	// dispute's names no card, and an event leaves out what Stripe credited
	// for it: CompleteDispute reads the dispute as it is now.
	Notification *issuer.Notification
	// Ignored says why neither is set.
	Ignored string
}

// ParseEvent checks payload's Stripe-Signature with stripe-go's webhook
// package against each of secrets (an endpoint's signing secrets: more
// than one while a secret is rolled, or when the authorization endpoint
// and the events endpoint have their own), then reads the event.
func ParseEvent(payload []byte, signature string, secrets []string) (Event, error) {
	err := errors.New("no signing secret")
	secret := ""
	for _, s := range secrets {
		if err = webhook.ValidatePayload(payload, signature, s); err == nil {
			secret = s
			break
		}
	}
	if err != nil {
		return Event{}, fmt.Errorf("%w: %v", ErrSignature, err)
	}
	// Verified: what can still fail is the event itself (its API version).
	ev, err := webhook.ConstructEvent(payload, signature, secret)
	if err != nil {
		return Event{}, fmt.Errorf("%w: %v", ErrBadEvent, err)
	}
	if ev.Data == nil || len(ev.Data.Raw) == 0 {
		return Event{}, fmt.Errorf("%w: event %s has no data.object", ErrBadEvent, ev.ID)
	}
	out := Event{ID: ev.ID, Type: string(ev.Type)}
	switch out.Type {
	case EventAuthorizationRequest:
		err = out.request(ev.Data.Raw)
	case EventAuthorizationCreated, EventAuthorizationUpdated:
		err = out.authorization(ev)
	case EventTransactionCreated:
		err = out.transaction(ev)
	case EventCardUpdated:
		err = out.cardUpdated(ev)
	case EventDisputeCreated, EventDisputeUpdated, EventDisputeSubmitted,
		EventDisputeFundsReinstated, EventDisputeFundsRescinded, EventDisputeClosed:
		err = out.dispute(ev)
	default:
		out.Ignored = "an event type we do not read"
	}
	if err != nil {
		return Event{}, fmt.Errorf("%w: %s %s: %v", ErrBadEvent, out.Type, out.ID, err)
	}
	return out, nil
}

// request reads the authorization Stripe asks us to decide: its pending
// request's amount, in the card's currency.
func (e *Event) request(raw json.RawMessage) error {
	var a stripe.IssuingAuthorization
	if err := json.Unmarshal(raw, &a); err != nil {
		return err
	}
	if a.PendingRequest == nil {
		return errors.New("no pending_request")
	}
	if a.Amount > 0 || len(a.RequestHistory) > 0 {
		// The merchant asks for more on an authorization already decided
		// (an incremental authorization): declined, asked of nobody.
		// Decide, idempotent on the authorization's id, would answer its
		// first decision again and hold nothing more.
		e.Answer = &Answer{Approved: false, Metadata: map[string]string{MetadataDeclineReason: DeclineIncrement}}
		return nil
	}
	card, ref, err := authorizationCard(&a)
	if err != nil {
		return err
	}
	if ref == "" {
		// A card that is none of ours: decided as a card we do not have,
		// declined card_not_found.
		ref = card
	}
	amount := a.PendingRequest.Amount
	r := issuer.AuthorizationRequest{
		ID: a.ID, CardID: card, Reference: ref, Kind: kind(amount), Amount: amount,
		Currency: strings.ToUpper(string(a.PendingRequest.Currency)), Merchant: merchant(a.MerchantData),
	}
	if err := r.Check(); err != nil {
		return err
	}
	e.Request = &r
	return nil
}

// transaction maps a capture (a settlement: Stripe's amount is negative,
// money out) and a refund (positive). A capture names the authorization it
// settles, or none when the merchant forced it (a force capture); a
// refund's authorization is Stripe's guess, or none (an unlinked refund).
// A capture never closes its authorization here: Stripe closes it with an
// issuing_authorization.updated of its own (a reversal of what is left).
func (e *Event) transaction(ev stripe.Event) error {
	var t stripe.IssuingTransaction
	if err := json.Unmarshal(ev.Data.Raw, &t); err != nil {
		return err
	}
	if t.Card == nil || t.Card.ID == "" {
		return errors.New("no card")
	}
	n := issuer.Notification{ID: e.ID, CardID: t.Card.ID, Reference: t.Card.Metadata[Reference], CreatedAt: created(ev)}
	tx := &issuer.NetworkTransaction{ID: t.ID, Currency: strings.ToUpper(string(t.Currency))}
	if t.Authorization != nil {
		tx.AuthorizationID = t.Authorization.ID
	}
	switch t.Type {
	case stripe.IssuingTransactionTypeCapture:
		n.Type, tx.Amount = issuer.NotifySettlement, -t.Amount
	case stripe.IssuingTransactionTypeRefund:
		n.Type, tx.Amount = issuer.NotifyRefund, t.Amount
	default:
		e.Ignored = "a transaction of type " + string(t.Type)
		return nil
	}
	if t.MerchantData != nil {
		m := merchant(t.MerchantData)
		tx.Merchant = &m
	}
	n.Transaction = tx
	e.Notification = &n
	return nil // checked by Body once its Reference is known
}

// cardUpdated maps a card Stripe canceled (from its dashboard, or for
// fraud) onto card.terminated. A freeze or an unfreeze is ours, or is
// followed on the card's next read with sync.
func (e *Event) cardUpdated(ev stripe.Event) error {
	var c stripe.IssuingCard
	if err := json.Unmarshal(ev.Data.Raw, &c); err != nil {
		return err
	}
	switch {
	case c.Metadata[Reference] == "":
		e.Ignored = "a card that is none of ours"
		return nil
	case c.Status != stripe.IssuingCardStatusCanceled:
		e.Ignored = "a card now " + string(c.Status) + ": followed on its next read"
		return nil
	}
	n := issuer.Notification{
		ID: e.ID, Type: issuer.NotifyCardTerminated, CardID: c.ID, Reference: c.Metadata[Reference],
		Reason: "canceled at Stripe", CreatedAt: created(ev),
	}
	if c.CancellationReason != "" {
		n.Reason += " (" + string(c.CancellationReason) + ")"
	}
	return e.notify(n)
}

// notify sets n, checked as the card-worker will read it.
func (e *Event) notify(n issuer.Notification) error {
	e.Notification = &n
	return n.Check()
}

// authorizationCard returns an authorization's card: Stripe's id and ours,
// from the card's metadata, which the event carries.
func authorizationCard(a *stripe.IssuingAuthorization) (id, ref string, err error) {
	if a.Card == nil || a.Card.ID == "" {
		return "", "", errors.New("no card")
	}
	return a.Card.ID, a.Card.Metadata[Reference], nil
}

// last is an authorization's latest request, nil for none.
func last(h []*stripe.IssuingAuthorizationRequestHistory) *stripe.IssuingAuthorizationRequestHistory {
	if len(h) == 0 {
		return nil
	}
	return h[len(h)-1]
}

// kind is an authorization's kind: a $0 one verifies the card.
func kind(amount int64) string {
	if amount == 0 {
		return issuer.KindVerification
	}
	return issuer.KindAuthorization
}

func merchant(m *stripe.IssuingAuthorizationMerchantData) issuer.Merchant {
	if m == nil {
		return issuer.Merchant{}
	}
	return issuer.Merchant{Name: m.Name, City: m.City, Country: m.Country}
}

// created is when Stripe made ev.
func created(ev stripe.Event) time.Time { return time.Unix(ev.Created, 0).UTC() }

// Body returns e.Notification as the issuer-events queue carries it,
// checked as the card-worker reads it: a transaction's needs its Reference
// set first (CardReference), a dispute's its card (CompleteDispute).
func (e Event) Body() ([]byte, error) {
	if e.Notification == nil {
		return nil, fmt.Errorf("%w: %s %s is no notification", ErrBadEvent, e.Type, e.ID)
	}
	if err := e.Notification.Check(); err != nil {
		return nil, fmt.Errorf("%w: %s %s: %v", ErrBadEvent, e.Type, e.ID, err)
	}
	return json.Marshal(e.Notification)
}

// DeclineIncrement is the decline reason of an increment of an
// authorization, which we do not hold.
const DeclineIncrement = "increment_not_supported"

// Metadata keys of our answer to an authorization request: Stripe copies
// them onto the authorization, so that its issuing_authorization.created
// says why we declined, and the dashboard shows our transaction.
const (
	MetadataDeclineReason = "decline_reason"
	MetadataTransactionID = "transaction_id"
)

// Answer is our answer to an issuing_authorization.request, the JSON body
// of the response Stripe reads it from (with the Stripe-Version header).
type Answer struct {
	Approved bool              `json:"approved"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

// NewAnswer is a's decision as Stripe's answer.
func NewAnswer(a issuer.AuthorizationAnswer) Answer {
	out := Answer{Approved: a.Decision == issuer.Approved, Metadata: map[string]string{}}
	if a.DeclineReason != nil {
		out.Metadata[MetadataDeclineReason] = *a.DeclineReason
	}
	if a.TransactionID != nil {
		out.Metadata[MetadataTransactionID] = *a.TransactionID
	}
	if len(out.Metadata) == 0 {
		out.Metadata = nil
	}
	return out
}
