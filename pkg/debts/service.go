package debts

import (
	"context"

	"payments/pkg/page"
)

// Store is the persistence the service reads.
type Store interface {
	// List reads page p of the company's debts with status (any when
	// ""), newest first.
	List(ctx context.Context, companyID string, status Status, p page.Request) (page.Result[Debt], error)
}

// Service lists a company's debts.
type Service struct{ store Store }

// NewService returns the service over s.
func NewService(s Store) *Service { return &Service{store: s} }

// List returns page p of the company's debts with status (any when ""),
// newest first.
func (s *Service) List(ctx context.Context, companyID string, status Status, p page.Request) (page.Result[Debt], error) {
	return s.store.List(ctx, companyID, status, p)
}
