package payments

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"payments/pkg/ids"
	"payments/pkg/page"
)

// Query selects payment transactions (spec §4.15). Zero fields select all.
type Query struct {
	Status Status
	Type   Type
	// ExternalID matches every external_id that contains it.
	ExternalID string
	// ReconciliationRequired, when not nil, selects the payments whose
	// flag has this value.
	ReconciliationRequired *bool
	// From is inclusive, To exclusive.
	From, To time.Time
}

// Lister reads payment transactions a page at a time.
type Lister interface {
	// ListPayments reads page p of the company's payments that match q,
	// newest first, strongly consistent, with the total of those payments
	// (counted unless p continues a cursor) and the position of the page's
	// last payment when more follow. A cursor position outside the list is
	// page.ErrBadCursor.
	ListPayments(ctx context.Context, companyID string, q Query, p page.Request) (page.Result[Payment], error)
}

// List returns page p of the company's payment transactions that match q,
// newest first.
func (s *Service) List(ctx context.Context, companyID string, q Query, p page.Request) (page.Result[Payment], error) {
	res, err := s.store.ListPayments(ctx, companyID, q, p)
	if err != nil {
		return page.Result[Payment]{}, fmt.Errorf("payments: list: %w", err)
	}
	return res, nil
}

// Get returns payment id of the company, or ErrNotFound (also for an id
// that is not a UUID).
func (s *Service) Get(ctx context.Context, companyID, id string) (Payment, error) {
	if !ids.IsUUID(id) {
		return Payment{}, ErrNotFound
	}
	return s.store.GetPayment(ctx, companyID, id)
}

// DoubleCheckBudget is how long a status read with doubleCheck waits for
// the operator before answering what is stored: a client's request is not
// held for the operator's retries.
const DoubleCheckBudget = 5 * time.Second

// Status returns payment id of the company and the operator's raw answer:
// the last one stored, or, with doubleCheck, a fresh one. With doubleCheck
// a final answer is applied through the same exactly-once transition the
// worker uses; anything else (no final answer yet, an operator that cannot
// be reached within DoubleCheckBudget) leaves the payment as it is: time
// alone never fails it.
func (s *Service) Status(ctx context.Context, companyID, id string, doubleCheck bool) (Payment, json.RawMessage, error) {
	p, err := s.Get(ctx, companyID, id)
	if err != nil || !doubleCheck || p.Status.Terminal() || s.gateway == nil {
		return p, p.Upstream, err
	}
	askCtx, cancel := context.WithTimeout(ctx, DoubleCheckBudget)
	res, err := s.ask(askCtx, p)
	cancel()
	if err != nil {
		return p, p.Upstream, nil
	}
	o, ok := outcomeOf(res)
	if !ok {
		return p, upstream(res.Raw), nil
	}
	if err := s.finish(ctx, p, o); err != nil {
		return Payment{}, nil, err
	}
	if p, err = s.store.GetPayment(ctx, companyID, id); err != nil {
		return Payment{}, nil, err
	}
	return p, p.Upstream, nil
}
