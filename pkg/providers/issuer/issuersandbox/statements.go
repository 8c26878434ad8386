package issuersandbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"payments/pkg/providers/issuer"
)

// StatementLog is the sandbox network's record of what it moved, which the
// sandbox issuer's statements list (issuerdb.Store): each authorization with
// what it holds as the network sees it, and each transaction (a settlement,
// a refund) it reported. A remote network keeps such a record whatever
// became of its notifications; so does the sandbox's, in its own store.
type StatementLog interface {
	// LogAuthorization keeps a, unless authorization a.ID is kept already.
	LogAuthorization(ctx context.Context, a issuer.StatementAuthorization) error
	// LogTransaction keeps t, reported by notification eventID, unless
	// that notification kept one already, and returns the transaction
	// kept. A settlement takes its amount off what its authorization (when
	// kept) holds, all of it when closes, and closes it when nothing is
	// left: CLOSED.
	LogTransaction(ctx context.Context, eventID string, t issuer.StatementTransaction, closes bool) (issuer.StatementTransaction, error)
	// LogReversal releases amount (0: all) of what authorization
	// authorizationID holds, once per eventID; released in full, it is
	// ended (REVERSED, or EXPIRED). An authorization not kept changes
	// nothing.
	LogReversal(ctx context.Context, eventID, authorizationID string, amount int64, ended string) error
	// StatementTransactions and StatementAuthorizations list what is kept,
	// as Statements.Transactions and Statements.Authorizations do.
	StatementTransactions(ctx context.Context, since time.Time, after string, limit int) ([]issuer.StatementTransaction, string, error)
	StatementAuthorizations(ctx context.Context, since time.Time, after string, limit int) ([]issuer.StatementAuthorization, string, error)
}

// logStatement records in the network's statement log what notification
// no, about to be delivered, moved: an advice's authorization as decided,
// a settlement's or refund's transaction (no's transaction id becomes the
// one kept when no was sent before), a reversal's release. A network
// without a log (Statements nil) records nothing.
func (n *Network) logStatement(ctx context.Context, no *issuer.Notification) error {
	t := no.Transaction
	if n.Statements == nil || t == nil {
		return nil
	}
	var err error
	switch no.Type {
	case issuer.NotifyAdvice:
		a := issuer.StatementAuthorization{ID: t.ID, CardID: no.CardID, Reference: no.Reference, Kind: t.Kind,
			Approved: no.Decision == issuer.Approved, Status: issuer.AuthorizationClosed, Merchant: t.Merchant, CreatedAt: no.CreatedAt}
		if a.Approved && t.Kind != issuer.KindVerification {
			a.Status, a.Held = issuer.AuthorizationPending, t.Amount
		}
		err = n.Statements.LogAuthorization(ctx, a)
	case issuer.NotifySettlement, issuer.NotifyRefund:
		var kept issuer.StatementTransaction
		kept, err = n.Statements.LogTransaction(ctx, no.ID, issuer.StatementTransaction{ID: t.ID, Type: no.Type,
			CardID: no.CardID, Reference: no.Reference, AuthorizationID: t.AuthorizationID, Amount: t.Amount,
			Merchant: t.Merchant, CreatedAt: no.CreatedAt}, t.Close)
		if err == nil {
			t.ID = kept.ID
		}
	case issuer.NotifyReversal:
		ended := issuer.AuthorizationReversed
		if no.Reason == issuer.ReleaseExpired {
			ended = issuer.AuthorizationExpired // still capturable: a later capture is a transaction of its own
		}
		err = n.Statements.LogReversal(ctx, no.ID, t.AuthorizationID, t.Amount, ended)
	}
	if err != nil {
		return fmt.Errorf("issuer: log notification %s in the network's statements: %w", no.ID, err)
	}
	return nil
}

// Float is the sandbox issuer's balance (Statements.Balance): a
// fixed float of 10,000,000 USD, in cents, that the cards' balances never
// reach in a sandbox; the reconciliation's check that it covers them holds
// there unless they do.
const Float int64 = 10_000_000_00

// HoldExpiry is how long the sandbox network holds an
// authorization's amount when nothing settles or reverses it, as card
// networks expire their authorizations: past it, its statement lists it
// EXPIRED, holding nothing. It is the default of our own hold expiry
// (CARD_HOLD_EXPIRY_SECONDS).
const HoldExpiry = 7 * 24 * time.Hour

var _ issuer.Statements = (*Issuer)(nil)

// errNoStatements is a sandbox whose store keeps no statement log (a
// test's store).
var errNoStatements = errors.New("issuer: the sandbox store keeps no statements")

// statements returns the network's statement log, kept by the sandbox's
// store (issuerdb.Store keeps both).
func (s *Issuer) statements() (StatementLog, error) {
	l, ok := s.store.(StatementLog)
	if !ok {
		return nil, fmt.Errorf("%w: %w", issuer.ErrUnavailable, errNoStatements)
	}
	return l, nil
}

// Transactions lists the settlements and refunds the sandbox network
// reported, from its statement log.
func (s *Issuer) Transactions(ctx context.Context, since time.Time, after string, limit int) ([]issuer.StatementTransaction, string, error) {
	l, err := s.statements()
	if err != nil {
		return nil, "", err
	}
	txs, next, err := l.StatementTransactions(ctx, since, after, limit)
	if err != nil {
		return nil, "", sandboxErr(err)
	}
	return txs, next, nil
}

// Authorizations lists the authorizations the sandbox network decided,
// from its statement log, each as it stands: one still PENDING past
// HoldExpiry is EXPIRED, and one of a card the issuer terminated
// since is REVERSED, holding nothing (a terminated card keeps no holds).
func (s *Issuer) Authorizations(ctx context.Context, since time.Time, after string, limit int) ([]issuer.StatementAuthorization, string, error) {
	l, err := s.statements()
	if err != nil {
		return nil, "", err
	}
	as, next, err := l.StatementAuthorizations(ctx, since, after, limit)
	if err != nil {
		return nil, "", sandboxErr(err)
	}
	now := s.Now()
	terminated := map[string]bool{}
	for i := range as {
		a := &as[i]
		if a.Status != issuer.AuthorizationPending {
			continue
		}
		if now.Sub(a.CreatedAt) > HoldExpiry {
			a.Status, a.Held = issuer.AuthorizationExpired, 0
			continue
		}
		ended, read := terminated[a.CardID]
		if !read {
			c, err := s.store.Card(ctx, a.CardID)
			if err != nil && !errors.Is(err, issuer.ErrNotFound) {
				return nil, "", sandboxErr(err)
			}
			ended = err == nil && c.Status == issuer.CardTerminated
			terminated[a.CardID] = ended
		}
		if ended {
			a.Status, a.Held = issuer.AuthorizationReversed, 0
		}
	}
	return as, next, nil
}

// Balance is the sandbox issuer's float, Float.
func (s *Issuer) Balance(context.Context) (int64, error) { return Float, nil }
