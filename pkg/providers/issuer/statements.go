package issuer

import (
	"context"
	"time"
)

// StatementTransaction is a transaction as the issuer's statement lists
// it: money it moved on one of its cards.
type StatementTransaction struct {
	// ID is the issuer's id (Stripe's ipi_…), the claim of its movement.
	ID string
	// Type is NotifySettlement or NotifyRefund.
	Type string
	// CardID is the issuer's card, Reference ours ("" when the issuer
	// does not know it).
	CardID, Reference string
	// AuthorizationID is the authorization it follows, "" for none.
	AuthorizationID string
	// Amount is what it moved, USD cents, above 0.
	Amount    int64
	Merchant  *Merchant
	CreatedAt time.Time
}

// Authorization statuses of a statement.
const (
	AuthorizationPending  = "PENDING"
	AuthorizationClosed   = "CLOSED"
	AuthorizationReversed = "REVERSED"
	AuthorizationExpired  = "EXPIRED"
)

// StatementAuthorization is an authorization as the issuer's statement
// lists it.
type StatementAuthorization struct {
	ID                string
	CardID, Reference string
	Kind              string
	Approved          bool
	// Status is one of the Authorization… statuses; Held is what it holds
	// while PENDING, USD cents.
	Status    string
	Held      int64
	Merchant  *Merchant
	CreatedAt time.Time
}

// Statements is an issuer whose records can be listed, for the
// reconciliation: what it moved since a time, and what it holds.
type Statements interface {
	// Transactions returns up to limit transactions created at or after
	// since, oldest first, after the transaction id after ("" for the
	// first page), and the id to ask the next page after ("" at the end).
	Transactions(ctx context.Context, since time.Time, after string, limit int) ([]StatementTransaction, string, error)
	// Authorizations is Transactions for authorizations.
	Authorizations(ctx context.Context, since time.Time, after string, limit int) ([]StatementAuthorization, string, error)
	// Balance is what the issuer holds for the cards to spend (Stripe: the
	// Issuing balance available), USD cents.
	Balance(ctx context.Context) (int64, error)
}
