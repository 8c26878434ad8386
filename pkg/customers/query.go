package customers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"payments/pkg/ids"
	"payments/pkg/page"
	"payments/pkg/providers/issuer"
	"payments/pkg/providers/kyc"
	"payments/pkg/timestamp"
)

// syncParallelism bounds the issuer reads a sync makes at once.
const syncParallelism = 8

// Get returns customer id of the company, or ErrNotFound.
func (s *Service) Get(ctx context.Context, companyID, id string) (Customer, error) {
	if !ids.IsUUID(id) {
		return Customer{}, ErrNotFound
	}
	return s.store.Get(ctx, companyID, id)
}

// List returns page p of the company's customers, newest first. With sync,
// each verified customer of the page is read from the card issuer again
// (and registered there first if its registration at enrolment failed), and
// its is_active follows the issuer's where they differ (a cardholder the
// issuer no longer knows is inactive); an issuer that cannot be reached is
// ErrIssuerUnavailable, and no is_active is changed.
func (s *Service) List(ctx context.Context, companyID string, p page.Request, sync bool) (page.Result[Customer], error) {
	res, err := s.store.List(ctx, companyID, p)
	if err != nil {
		return res, fmt.Errorf("customers: list: %w", err)
	}
	if sync {
		if s.issuer == nil {
			return page.Result[Customer]{}, ErrNoProviders
		}
		if err := s.sync(ctx, res.Items); err != nil {
			return page.Result[Customer]{}, err
		}
	}
	return res, nil
}

// sync reads the cardholder of each verified customer of cs from the
// issuer, then records and applies to cs every is_active the issuer
// disagrees with.
func (s *Service) sync(ctx context.Context, cs []Customer) error {
	active := make([]bool, len(cs))
	errs := make([]error, len(cs))
	sem := make(chan struct{}, syncParallelism)
	var wg sync.WaitGroup
	for i := range cs {
		active[i] = cs[i].IsActive
		if cs[i].KYCStatus != kyc.Verified {
			continue
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			active[i], errs[i] = s.issuerActive(ctx, &cs[i])
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: %w", ErrIssuerUnavailable, err)
	}
	now := timestamp.Of(s.clock())
	for i := range cs {
		if active[i] == cs[i].IsActive {
			continue
		}
		if err := s.store.SetActive(ctx, cs[i].CompanyID, cs[i].ID, active[i], now); err != nil {
			return fmt.Errorf("customers: sync %s: %w", cs[i].ID, err)
		}
		slog.InfoContext(ctx, "customer is_active synced from the issuer", "customer_id", cs[i].ID, "is_active", active[i])
		cs[i].IsActive, cs[i].UpdatedAt = active[i], now
	}
	return nil
}

// issuerActive returns whether the issuer holds verified customer c's
// cardholder active, registering it first when c has none (and recording
// its id in c).
func (s *Service) issuerActive(ctx context.Context, c *Customer) (bool, error) {
	if c.CardholderID == "" {
		id, err := s.registerCardholder(ctx, *c)
		if err != nil {
			return false, err
		}
		c.CardholderID = id
	}
	ch, err := s.issuer.Cardholder(ctx, c.CardholderID)
	switch {
	case errors.Is(err, issuer.ErrNotFound):
		slog.WarnContext(ctx, "the issuer does not know a cardholder: the customer is inactive",
			"customer_id", c.ID, "cardholder_id", c.CardholderID)
		return false, nil
	case err != nil:
		return false, err
	}
	return ch.Active, nil
}
