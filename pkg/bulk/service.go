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

// Describer describes the error an item was refused with as the single
// payout's error answer would (its field, code and message), and says
// whether it is a refusal at all (an unknown error is a failure of the
// service, not of the item): the wiring gives one over the function's error
// catalogue.
type Describer interface {
	Describe(err error) (Rejection, bool)
}

// Deps are what a Service works with; every one but Now is required.
type Deps struct {
	Store     Store
	Payouts   Payouts
	Jobs      Jobs
	Events    Publisher
	Describer Describer
	// Now is the clock (default time.Now); tests give one they move.
	Now func() time.Time
}

// Service accepts, writes, completes and reads bulk payout batches.
type Service struct {
	store    Store
	payouts  Payouts
	jobs     Jobs
	events   Publisher
	describe Describer
	clock    func() time.Time
	// completer completes batches, as the payments service's Batches does.
	completer *Completer
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
	case d.Describer == nil:
		return nil, errors.New("bulk: no Describer to build the service")
	}
	c, err := NewCompleter(d.Store, d.Events, d.Now)
	if err != nil {
		return nil, err
	}
	return &Service{store: d.Store, payouts: d.Payouts, jobs: d.Jobs, events: d.Events, describe: d.Describer,
		clock: c.clock, completer: c}, nil
}

func (s *Service) now() time.Time { return s.clock().UTC() }
