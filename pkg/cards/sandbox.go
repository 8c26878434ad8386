package cards

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"payments/pkg/countries"
	"payments/pkg/field"
	"payments/pkg/idempotency"
	"payments/pkg/money"
	"payments/pkg/providers/issuer"
)

// Network is the card network the sandbox routes drive
// (issuersandbox.Network). An authorization asks us for a decision, as a
// real network does (POST /issuer/authorizations), and then delivers its
// advice of the outcome; the other calls report a transaction to us as
// the issuer would, through POST /issuer/webhooks and the issuer-events
// queue, and return the notification's event id.
// Each acts under the id it is given (a new one when ""): the same id is
// the same authorization or notification, which we apply once.
type Network interface {
	Authorize(ctx context.Context, id, cardID, reference, kind string, amount int64, m issuer.Merchant) (issuer.Authorization, error)
	Follow(ctx context.Context, id, typ, cardID, reference string, t issuer.NetworkTransaction, reason string) (issuer.Notification, error)
	Terminated(ctx context.Context, id, cardID, reference, reason string) (string, error)
}

// Effects records the network's id of what a request has the network do
// as the effect of the Idempotency-Key the request holds, if it holds one
// (store.Idempotency).
type Effects interface {
	RecordEffect(ctx context.Context, id string) error
}

// ErrNotApplied is a notification the card-worker has not applied within
// the sandbox's wait: it is queued, and will be.
var ErrNotApplied = errors.New("cards: the network's notification is queued and not applied yet")

// NotAppliedError is ErrNotApplied for the notification EventID.
type NotAppliedError struct{ EventID string }

// Error says which notification is not applied yet.
func (e *NotAppliedError) Error() string {
	return fmt.Sprintf("%v (event %s)", ErrNotApplied, e.EventID)
}

// Unwrap returns ErrNotApplied.
func (e *NotAppliedError) Unwrap() error { return ErrNotApplied }

// Sandbox is the card-network sandbox (sandbox mode only): a company plays
// the merchant and the network on its own cards. An authorization is
// answered with the card transaction that records the network's decision,
// made in the request; a settlement, reversal, refund or termination with
// the card transaction its notification made once the card-worker has
// applied it.
//
// A request with an Idempotency-Key records the network's id of what it
// asks (an authorization's, a notification's) on the key before the
// network acts (Effects): a retry after any crash has the network act
// again under that id, which is applied once, and answers what it made.
type Sandbox struct {
	Cards   *Service
	Network Network
	// Effects records a keyed request's network id; nil records none.
	Effects Effects
	// Wait bounds the wait for the card-worker (ErrNotApplied past it).
	Wait time.Duration
}

// DefaultSandboxWait is the sandbox's wait for the card-worker.
const DefaultSandboxWait = 10 * time.Second

// AuthorizeInput is the body of POST /sandbox/cards/{id}/authorizations.
type AuthorizeInput struct {
	Amount          json.RawMessage `json:"amount"`
	MerchantName    string          `json:"merchant_name"`
	MerchantCity    string          `json:"merchant_city"`
	MerchantCountry string          `json:"merchant_country"`
	Type            string          `json:"type"`
}

// maxMerchantField bounds a merchant's name and city, in characters.
const maxMerchantField = 100

// merchant returns in's merchant: a name and a city (required, at most
// maxMerchantField characters), a country (ISO 3166-1 alpha-2; the card's
// when absent).
func (in AuthorizeInput) merchant() (issuer.Merchant, error) {
	m := issuer.Merchant{
		Name: strings.TrimSpace(in.MerchantName), City: strings.TrimSpace(in.MerchantCity),
		Country: strings.ToUpper(strings.TrimSpace(in.MerchantCountry)),
	}
	for _, f := range []struct{ name, value string }{{"merchant_name", m.Name}, {"merchant_city", m.City}} {
		switch n := len([]rune(f.value)); {
		case n == 0:
			return issuer.Merchant{}, field.Invalid(f.name, "is required")
		case n > maxMerchantField:
			return issuer.Merchant{}, field.Invalid(f.name, fmt.Sprintf("must be at most %d characters", maxMerchantField))
		}
	}
	if m.Country == "" {
		m.Country = CardCountry
	} else if !countries.IsAlpha2(m.Country) {
		return issuer.Merchant{}, field.Invalid("merchant_country", "must be an ISO 3166-1 alpha-2 country code")
	}
	return m, nil
}

// Authorize asks for an authorization on a card of the company.
func (sb *Sandbox) Authorize(ctx context.Context, companyID, cardID string, in AuthorizeInput) (Transaction, error) {
	tx, _, err := sb.AuthorizeEvent(ctx, companyID, cardID, in)
	return tx, err
}

// AuthorizeEvent is Authorize, answering also the id of the network's
// notification once it is sent.
func (sb *Sandbox) AuthorizeEvent(ctx context.Context, companyID, cardID string, in AuthorizeInput) (Transaction, string, error) {
	kind := AuthKind(strings.ToUpper(strings.TrimSpace(in.Type)))
	switch kind {
	case "":
		kind = KindAuthorization
	case KindAuthorization, KindPreauthorization, KindVerification:
	default:
		return Transaction{}, "", field.Invalid("type", "must be AUTHORIZATION, PREAUTHORIZATION or VERIFICATION")
	}
	var amount int64
	var err error
	if kind == KindVerification {
		if err := zeroAmount(in.Amount); err != nil {
			return Transaction{}, "", err
		}
	} else if amount, err = parseCents("amount", in.Amount, true); err != nil {
		return Transaction{}, "", err
	}
	m, err := in.merchant()
	if err != nil {
		return Transaction{}, "", err
	}
	card, err := sb.Cards.card(ctx, companyID, cardID)
	if err != nil {
		return Transaction{}, "", err
	}
	id, _, err := sb.networkID(ctx, issuer.NewTransactionID)
	if err != nil {
		return Transaction{}, "", err
	}
	a, err := sb.Network.Authorize(ctx, id, card.IssuerCardID, card.ID, string(kind), amount, m)
	if a.Request.ID == "" {
		return Transaction{}, "", err
	}
	if err != nil {
		slog.WarnContext(ctx, "the network's advice was not sent", "authorization_id", a.Request.ID, "error", err)
	}
	tx, err := sb.decided(ctx, card, a)
	return tx, a.Advice.ID, err
}

// decided returns the card transaction recording authorization a as the
// network decided it: the one our answer names. A decline of the
// network's own is its advice recorded here first (once, whoever is first:
// the card-worker applies it too, from the queue), which records it, or
// makes our late approval into it; the transaction returned is then that
// DECLINE, never an approval the network did not make: until the advice
// is applied, the answer is ErrNotApplied. What else the decision left to
// its advice (its events published, the issuer told) the card-worker does.
func (sb *Sandbox) decided(ctx context.Context, card Card, a issuer.Authorization) (Transaction, error) {
	var err error
	var tx Transaction
	if id := a.Answer.TransactionID; !a.StandIn && id != nil {
		tx, err = sb.Cards.Store.Transaction(ctx, card.CompanyID, *id)
	} else {
		// Recorded here, only what the answer needs; the card-worker
		// applies the advice too (once, whoever is first) and finishes it:
		// its events published, the issuer told, the network acknowledged.
		if err := sb.Cards.advise(ctx, card, a.Advice); err != nil && !errors.Is(err, ErrEventApplied) {
			slog.WarnContext(ctx, "apply the network's advice", "event_id", a.Advice.ID, "error", err)
		}
		tx, err = sb.standIn(ctx, card, a)
	}
	if err != nil {
		slog.WarnContext(ctx, "read the card transaction of a decided authorization", "authorization_id", a.Request.ID, "error", err)
		return Transaction{}, &NotAppliedError{EventID: a.Advice.ID}
	}
	return tx, nil
}

// standIn returns the card transaction recording authorization a, which
// the network declined on its own: its DECLINE or, on a card terminated
// after our late approval, the REVERSAL by which the advice released the
// hold to the wallet. An error while neither is written.
func (sb *Sandbox) standIn(ctx context.Context, card Card, a issuer.Authorization) (Transaction, error) {
	tx, err := sb.Cards.Store.NetworkTransaction(ctx, card.CompanyID, a.Request.ID)
	if err != nil || tx.Type == TxDecline {
		return tx, err
	}
	o, found, err := sb.Cards.Store.Outcome(ctx, card.CompanyID, a.Advice.ID)
	switch {
	case err != nil:
		return Transaction{}, err
	case !found || o.TxID == "" || o.TxID == tx.ID:
		return Transaction{}, fmt.Errorf("the network declined authorization %s, recorded here as %s: its advice is not applied yet", a.Request.ID, tx.Type)
	}
	return sb.Cards.Store.Transaction(ctx, card.CompanyID, o.TxID)
}

// networkID returns the network's id of what the request has it do: when
// it is the retry of a request whose Idempotency-Key holds one
// (idempotency.Replaying), that one (again is true); else a new one (made
// by newID), recorded on the key the request holds, if any, before the
// network acts.
func (sb *Sandbox) networkID(ctx context.Context, newID func(time.Time) string) (id string, again bool, err error) {
	if e, ok := idempotency.Replaying(ctx); ok {
		return e.ID, true, nil
	}
	id = newID(sb.Cards.now())
	if sb.Effects != nil {
		if err := sb.Effects.RecordEffect(ctx, id); err != nil {
			return "", false, fmt.Errorf("cards: record the network's id %s: %w", id, err)
		}
	}
	return id, false, nil
}

// Terminate has the issuer terminate a card of the company on its own (a
// risk block): the issuer closes it, then reports it; the card ends here
// when the card-worker applies that, its balance refunded. It answers the
// TERMINATION transaction.
func (sb *Sandbox) Terminate(ctx context.Context, companyID, cardID string, in TerminateInput) (Transaction, error) {
	tx, _, err := sb.TerminateEvent(ctx, companyID, cardID, in)
	return tx, err
}

// TerminateEvent is Terminate, answering also the id of the network's
// notification once it is sent.
func (sb *Sandbox) TerminateEvent(ctx context.Context, companyID, cardID string, in TerminateInput) (Transaction, string, error) {
	reason := strings.TrimSpace(in.Reason)
	if len([]rune(reason)) > maxReason {
		return Transaction{}, "", field.Invalid("reason", fmt.Sprintf("must be at most %d characters", maxReason))
	}
	var card Card
	var err error
	if _, again := idempotency.Replaying(ctx); again {
		// The first run may have ended the card: it is sent again as it
		// was, and answers what it made.
		card, err = sb.Cards.card(ctx, companyID, cardID)
	} else {
		card, err = sb.Cards.stateCheck(ctx, companyID, cardID)
	}
	if err != nil {
		return Transaction{}, "", err
	}
	if card.IssuerCardID == "" {
		return Transaction{}, "", ErrNotActive
	}
	id, _, err := sb.networkID(ctx, issuer.NewEventID)
	if err != nil {
		return Transaction{}, "", err
	}
	if _, _, err := sb.Cards.Issuer.TerminateCard(ctx, card.IssuerCardID); err != nil {
		return Transaction{}, "", fmt.Errorf("%w: %w", ErrIssuerUnavailable, err)
	}
	if _, err := sb.Network.Terminated(ctx, id, card.IssuerCardID, card.ID, reason); err != nil {
		return Transaction{}, "", err
	}
	tx, err := sb.await(ctx, card, issuer.Notification{ID: id, Type: issuer.NotifyCardTerminated})
	return tx, id, err
}

// await waits for the card-worker to apply notification n about card,
// and returns the transaction it made, or its refusal; ErrNotApplied past sb.Wait, or when the table cannot be read:
// the notification is sent, so the caller must read the card's
// transactions rather than send it again. Before it answers, it tells the
// issuer what the event moved, as the card-worker does right after it
// applies it (once, whoever is first): the answer comes when the issuer's
// card has moved as ours did.
func (sb *Sandbox) await(ctx context.Context, card Card, n issuer.Notification) (Transaction, error) {
	companyID, id, claim := card.CompanyID, n.ID, claimOf(n)
	wait := sb.Wait
	if wait <= 0 {
		wait = DefaultSandboxWait
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for pause := 10 * time.Millisecond; ; pause = min(2*pause, 200*time.Millisecond) {
		o, found, err := sb.Cards.Store.Outcome(ctx, companyID, claim)
		switch {
		case err != nil:
			// The notification is sent: whatever the table answers, it
			// is applied or will be, and is never to be sent again.
			slog.WarnContext(ctx, "read the outcome of a network notification", "event_id", id, "error", err)
			return Transaction{}, &NotAppliedError{EventID: id}
		case found && o.Refused != "":
			return Transaction{}, refusal(o.Refused)
		case found:
			if err := sb.Cards.tellIssuer(ctx, card, n); err != nil {
				// The card-worker tells it too, again until it can.
				slog.WarnContext(ctx, "tell the issuer of a network transaction", "event_id", id, "error", err)
			}
			tx, err := sb.Cards.Store.Transaction(ctx, companyID, o.TxID)
			if err != nil {
				slog.WarnContext(ctx, "read the transaction of a network notification", "event_id", id, "error", err)
				return Transaction{}, &NotAppliedError{EventID: id}
			}
			return tx, nil
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return Transaction{}, &NotAppliedError{EventID: id}
		case <-t.C:
		}
	}
}

// zeroAmount checks the amount of a verification: absent, null or 0.
func zeroAmount(raw json.RawMessage) error {
	text, err := money.Number(raw)
	if err != nil {
		return field.Invalid("amount", err.Error())
	}
	if text == "" {
		return nil
	}
	if n, err := money.ParseMajor(text, Currency); err != nil || n != 0 {
		return field.Invalid("amount", "must be 0 or absent for a VERIFICATION")
	}
	return nil
}

// parseCents reads a USD amount field: a JSON number above 0 with at most
// 2 decimals; absent is 0, unless required.
func parseCents(name string, raw json.RawMessage, required bool) (int64, error) {
	text, err := money.Number(raw)
	if err != nil {
		return 0, field.Invalid(name, err.Error())
	}
	if text == "" {
		if required {
			return 0, field.Invalid(name, "is required")
		}
		return 0, nil
	}
	n, err := money.ParseMajor(text, Currency)
	switch {
	case err != nil:
		return 0, field.Invalid(name, err.Error())
	case n <= 0:
		return 0, field.Invalid(name, "must be above 0")
	}
	return n, nil
}
