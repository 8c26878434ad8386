package payments

import (
	"context"
	"errors"
)

// Admin is what the operator console does with payments: it lists the
// payments flagged for reconciliation and resolves them. It needs only the
// payments' store and a publisher of their events: it never asks the
// operator, moves no new payment and sends no job.
type Admin struct{ svc *Service }

// NewAdmin returns the Admin over store, publishing the events of the
// payments it resolves with events, or an error naming the one missing.
func NewAdmin(store Store, events Publisher) (*Admin, error) {
	switch {
	case store == nil:
		return nil, errors.New("payments: no Store to build the console's service")
	case events == nil:
		return nil, errors.New("payments: no Events publisher to build the console's service")
	}
	return &Admin{newService(Deps{Store: store, Events: events})}, nil
}

// Resolve is Service.Resolve.
func (a *Admin) Resolve(ctx context.Context, id string, in ResolveInput) (Payment, error) {
	return a.svc.Resolve(ctx, id, in)
}

// Flagged is Service.Flagged.
func (a *Admin) Flagged(ctx context.Context, after string, limit int) ([]Payment, string, error) {
	return a.svc.Flagged(ctx, after, limit)
}

// CountFlagged is Service.CountFlagged.
func (a *Admin) CountFlagged(ctx context.Context) (int, error) {
	return a.svc.CountFlagged(ctx)
}
