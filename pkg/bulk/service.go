package bulk

import (
	"context"
	"errors"
	"time"

	"payments/pkg/events"
	"payments/pkg/payments"
	"payments/pkg/wallets"
)

// Payouts is what a batch asks of the payments service: the single
// payout's checks, its wallets, and the submission of an accepted payout.
type Payouts interface {
	PreparePayout(ctx context.Context, companyID string, r payments.Request, walletOf payments.WalletLookup) (payments.Payment, error)
	Wallet(ctx context.Context, companyID, currency, country string) (wallets.Wallet, error)
	EnqueueAll(ctx context.Context, ps []payments.Payment, evs []events.Event) error
}

// Jobs is the bulk payouts queue, which carries the chunk jobs.
type Jobs interface {
	Send(ctx context.Context, body []byte, delay time.Duration) error
}

// Publisher publishes committed events (outbox.Publisher).
type Publisher interface {
	Publish(ctx context.Context, evs ...events.Event) error
}

// Describe returns the rejection of an item refused with err, as the single
// payout's error answer would give it, and whether err is a refusal at
// all (an unknown error is a failure of the service, not of the item).
type Describe func(err error) (Rejection, bool)

// Deps are what a Service works with; every one is required.
type Deps struct {
	Store    Store
	Payouts  Payouts
	Jobs     Jobs
	Events   Publisher
	Describe Describe
}

// Service accepts, writes, completes and reads bulk payout batches.
type Service struct {
	store    Store
	payouts  Payouts
	jobs     Jobs
	events   Publisher
	describe Describe
	// Now returns the current time; tests may replace it.
	Now func() time.Time
}

// NewService returns a Service over d, or an error naming what d lacks.
func NewService(d Deps) (*Service, error) {
	switch {
	case d.Store == nil:
		return nil, errors.New("bulk: no Store to build the service")
	case d.Payouts == nil:
		return nil, errors.New("bulk: no Payouts to build the service")
	case d.Jobs == nil:
		return nil, errors.New("bulk: no Jobs to build the service")
	case d.Events == nil:
		return nil, errors.New("bulk: no Events to build the service")
	case d.Describe == nil:
		return nil, errors.New("bulk: no Describe to build the service")
	}
	return &Service{store: d.Store, payouts: d.Payouts, jobs: d.Jobs, events: d.Events, describe: d.Describe}, nil
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}
