package issuer

import (
	"context"
	"errors"
)

// ErrNone is every answer of None.
var ErrNone = errors.New("issuer: none configured")

// None is the card issuer of a function that calls none (in production
// mode, those that do not link Stripe Issuing's adapter): it refuses every
// request with ErrNone. A cards service given None refuses every change
// (cards.ErrNoIssuer) and serves the reads; a customers service given None
// defers the registration of verified customers as cardholders and refuses
// syncs (customers.ErrNoProviders).
var None Issuer = none{}

type none struct{}

func (none) EnrollCardholder(context.Context, CardholderRequest) (Cardholder, error) {
	return Cardholder{}, ErrNone
}
func (none) Cardholder(context.Context, string) (Cardholder, error) { return Cardholder{}, ErrNone }
func (none) IssueCard(context.Context, CardRequest) (Card, Secrets, error) {
	return Card{}, Secrets{}, ErrNone
}
func (none) Card(context.Context, string) (Card, error)           { return Card{}, ErrNone }
func (none) FundCard(context.Context, Movement) (Card, error)     { return Card{}, ErrNone }
func (none) WithdrawCard(context.Context, Movement) (Card, error) { return Card{}, ErrNone }
func (none) FreezeCard(context.Context, string) (Card, error)     { return Card{}, ErrNone }
func (none) UnfreezeCard(context.Context, string) (Card, error)   { return Card{}, ErrNone }
func (none) PostCard(context.Context, Posting) (Card, error)      { return Card{}, ErrNone }
func (none) TerminateCard(context.Context, string) (Card, int64, error) {
	return Card{}, 0, ErrNone
}
func (none) Acknowledge(context.Context, string) error { return ErrNone }

// Reported is the issuer as the card-worker sees it when the issuer's
// notifications are its own record of what moved (Stripe Issuing's
// events): PostCard and Acknowledge have nothing to tell it and succeed
// (the card's balance is our ledger's: BalanceUnknown); every other call
// is ErrNone, the card-worker making none.
var Reported Issuer = reported{}

type reported struct{ none }

func (reported) PostCard(_ context.Context, p Posting) (Card, error) {
	return Card{ID: p.CardID, BalanceUnknown: true}, nil
}
func (reported) Acknowledge(context.Context, string) error { return nil }
