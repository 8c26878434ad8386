// Package issuer is the gateway to the card issuer: it registers our
// customers as cardholders and issues, funds, withdraws from, freezes,
// unfreezes and terminates their USD virtual cards.
//
// This package is the contract alone: the interfaces, their requests,
// results and errors, the card network's notifications, and None. Issuer
// is what an issuer adapter implements: Stripe Issuing's (stripeissuing),
// and the simulated issuer and card network of sandbox stages and tests
// (issuersandbox), which keep their own cardholders and cards apart from
// our records, as a remote issuer would, and decide deterministically from
// documented magic values (the README's table).
//
// Every call that creates or moves something carries our reference (our
// customer id, card id or transaction id) and is idempotent on it: asking
// again with the same reference returns the first answer, so a call whose
// answer was lost can be repeated safely.
package issuer

import (
	"context"
	"errors"
	"time"
)

// Errors an issuer returns.
var (
	// ErrUnavailable is an issuer that could not be reached or answered with
	// a transient error; it says nothing about the outcome of the call.
	ErrUnavailable = errors.New("issuer: unavailable")
	// ErrNotFound is a cardholder or card the issuer does not know.
	ErrNotFound = errors.New("issuer: not found")
	// ErrDeclined is a definitive refusal of a request (a card the issuer
	// will not issue); nothing was done.
	ErrDeclined = errors.New("issuer: declined")
	// ErrInsufficientFunds is a withdrawal larger than the card's balance.
	ErrInsufficientFunds = errors.New("issuer: insufficient card balance")
	// ErrCardState is a change the card's state does not allow (freezing a
	// frozen card, anything on a terminated card).
	ErrCardState = errors.New("issuer: card state does not allow this")
)

// Address is a cardholder's billing address.
type Address struct {
	Street, City, State, PostalCode string
	// CountryISOCode is the ISO 3166-1 alpha-2 code.
	CountryISOCode string
}

// CardholderRequest registers one of our customers with the issuer.
type CardholderRequest struct {
	// Reference is our customer id; enrolment is idempotent on it.
	Reference            string
	FirstName, LastName  string
	Email                string
	PhoneCountryCode     string
	PhoneNumber          string
	DateOfBirth          time.Time
	Address              Address
	IdentificationNumber string
	DocumentType         string
}

// Cardholder is the issuer's record of one of our customers.
type Cardholder struct {
	ID        string // the issuer's id
	Reference string // our customer id
	// Active is false once the issuer has blocked the cardholder.
	Active    bool
	CreatedAt time.Time
}

// Brand is a card network.
type Brand string

// Brands the issuer issues.
const (
	Visa       Brand = "VISA"
	Mastercard Brand = "MASTERCARD"
)

// CardStatus is the issuer's view of a card.
type CardStatus string

// Card statuses an issuer reports.
const (
	CardActive     CardStatus = "ACTIVE"
	CardFrozen     CardStatus = "FROZEN"
	CardTerminated CardStatus = "TERMINATED"
)

// CardRequest issues a card to a cardholder with an initial balance.
type CardRequest struct {
	// Reference is our card id; issuance is idempotent on it.
	Reference    string
	CardholderID string
	Brand        Brand
	// Amount is the initial funding in USD cents.
	Amount int64
}

// Card is the issuer's record of a card. The full number and the CVV never
// travel in this type: they are Secrets.
type Card struct {
	ID           string // the issuer's id
	Reference    string // our card id
	CardholderID string
	Brand        Brand
	Last4        string
	ExpiryMonth  int
	ExpiryYear   int
	// Balance is in USD cents; Available is what can be spent of it: the
	// balance less the open authorization holds.
	Balance   int64
	Available int64
	// BalanceUnknown is an issuer that keeps no balance per card (Stripe
	// Issuing): our ledger is the card's balance, and Balance and
	// Available are 0.
	BalanceUnknown bool
	Status         CardStatus
	CreatedAt      time.Time
}

// Secrets are a card's full number (16 digits) and CVV (3 digits). The
// simulated issuer gives them with the answer to an issuance (and to its
// repeats); they are sealed at once (pkg/vault) and never logged. An
// issuer that keeps them to itself (a Revealer: Stripe) gives none: the
// zero Secrets, and nothing is sealed.
type Secrets struct {
	Number, CVV string
}

// String hides the secrets from any print.
func (Secrets) String() string { return "issuer.Secrets{redacted}" }

// GoString hides the secrets from %#v.
func (Secrets) GoString() string { return "issuer.Secrets{redacted}" }

// MarshalJSON hides the secrets from encoding/json, and so from a JSON log
// (slog.JSONHandler encodes an attribute's value with it).
func (Secrets) MarshalJSON() ([]byte, error) { return []byte(`"issuer.Secrets{redacted}"`), nil }

// Movement moves money onto a card (fund) or off it (withdraw).
type Movement struct {
	// Reference is our transaction id; a movement is idempotent on it.
	Reference string
	CardID    string
	// Amount is in USD cents, > 0.
	Amount int64
}

// Posting is a movement of a card's money made by the card network or by
// our fees, as we recorded it on our card from one of the issuer's
// notifications: an authorization we approved holds its amount, a
// settlement takes its amount and releases the hold, a reversal releases
// it, a refund gives back, a fee we take from the card takes it. The issuer
// is told of each, so that its card moves as ours did.
type Posting struct {
	// Reference names the posting, which is applied once per Reference:
	// the issuer's event id it answers, or, for the second write of a
	// notification written in two (a settlement, then its cross-border
	// fee), that id with a suffix.
	Reference string
	CardID    string
	// BalanceDelta is added to the card's balance and HeldDelta to its
	// open holds, in USD cents; at least one is not 0.
	BalanceDelta, HeldDelta int64
}

// Cardholders is the cardholder side of an issuer.
type Cardholders interface {
	// EnrollCardholder registers a cardholder, or returns the one
	// registered with r.Reference.
	EnrollCardholder(ctx context.Context, r CardholderRequest) (Cardholder, error)
	// Cardholder reads a cardholder by the issuer's id.
	Cardholder(ctx context.Context, id string) (Cardholder, error)
}

// Issuer is what the service asks of a card issuer.
type Issuer interface {
	Cardholders
	// IssueCard issues a card, or returns the one issued with r.Reference,
	// with its secrets (none from a Revealer); ErrDeclined when the issuer
	// refuses it.
	IssueCard(ctx context.Context, r CardRequest) (Card, Secrets, error)
	// Card reads a card by the issuer's id.
	Card(ctx context.Context, id string) (Card, error)
	// FundCard adds m.Amount to the card's balance once per m.Reference.
	FundCard(ctx context.Context, m Movement) (Card, error)
	// WithdrawCard takes m.Amount off the card's balance once per
	// m.Reference; ErrInsufficientFunds when the balance is smaller.
	WithdrawCard(ctx context.Context, m Movement) (Card, error)
	// FreezeCard stops an active card from being used.
	FreezeCard(ctx context.Context, id string) (Card, error)
	// UnfreezeCard makes a frozen card usable again.
	UnfreezeCard(ctx context.Context, id string) (Card, error)
	// PostCard applies p to its card once per p.Reference and returns the
	// card afterwards. A posting reports what was done: the issuer does
	// not refuse it for the card's balance or status, but a TERMINATED
	// card takes none (ErrCardState), its balance paid out.
	PostCard(ctx context.Context, p Posting) (Card, error)
	// TerminateCard closes a card for good: it returns the card, now
	// TERMINATED with balance 0 and no holds, and the balance it held,
	// which is owed back to the company. Terminating a terminated card
	// returns the same answer again.
	TerminateCard(ctx context.Context, id string) (Card, int64, error)
	// Acknowledge tells the issuer that its notification eventID is
	// applied, so that it stops delivering it again: a card network keeps
	// what it reports until acknowledged (store and forward). An issuer
	// whose deliveries the answer of POST /issuer/webhooks acknowledges
	// does nothing.
	Acknowledge(ctx context.Context, eventID string) error
}

// RevealSession is a short-lived key with which the cardholder's browser
// reads a card's number and CVC from the issuer itself (Stripe's Issuing
// Elements): neither ever reaches us.
type RevealSession struct {
	// Issuer names the issuer that answers the key ("stripe").
	Issuer string
	// IssuerCardID is the issuer's card the key may read.
	IssuerCardID string
	// EphemeralKeySecret is the key's secret, for the browser alone.
	EphemeralKeySecret string
	ExpiresAt          time.Time
}

// String hides the key's secret from any print.
func (s RevealSession) String() string {
	return "issuer.RevealSession{" + s.Issuer + " " + s.IssuerCardID + " redacted}"
}

// GoString hides the key's secret from %#v.
func (s RevealSession) GoString() string { return s.String() }

// Revealer is an issuer that keeps its cards' numbers and CVCs to itself
// and shows them to the cardholder only through a RevealSession: it gives
// no Secrets with an issuance.
type Revealer interface {
	// RevealSession creates a session for the issuer's card id, bound to
	// the nonce the cardholder's browser made (Stripe.js).
	RevealSession(ctx context.Context, cardID, nonce string) (RevealSession, error)
}
