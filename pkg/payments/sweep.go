package payments

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// ResubmitAfter is how long a payment may stay PENDING before the sweeper
// sends its submit message again (the process that accepted it may have
// died before sending it, or the message was lost).
const ResubmitAfter = 60 * time.Second

// SweepLimit bounds the open payments one sweep looks at; the next sweep,
// a minute later, goes on with the rest.
const SweepLimit = 1000

// SweepResult counts what one sweep did.
type SweepResult struct {
	// Resubmitted is the number of PENDING payments whose submit message
	// was sent again.
	Resubmitted int
	// Expired is the number of payments past their deadline that the sweep
	// finished: with the operator's final answer when it had one, else
	// FAILED with TimeoutMessage (and a payout's reservation released).
	Expired int
}

// Sweep resolves what the worker left behind, for every company: each open
// payment created more than ResubmitAfter ago is read again (strongly
// consistent); past its deadline it is expired, and if still PENDING its
// submit message is sent again (Submit and the transitions are idempotent,
// so a payment that was merely slow loses nothing). It goes on after an
// error and returns them all.
func (s *Service) Sweep(ctx context.Context) (SweepResult, error) {
	var res SweepResult
	now := s.now()
	refs, err := s.store.OpenPayments(ctx, now.Add(-ResubmitAfter), SweepLimit)
	if err != nil {
		return res, fmt.Errorf("payments: list open payments: %w", err)
	}
	var errs []error
	for _, ref := range refs {
		p, err := s.store.GetPayment(ctx, ref.CompanyID, ref.ID)
		switch {
		case errors.Is(err, ErrNotFound):
			continue
		case err != nil:
			errs = append(errs, err)
			continue
		case p.Status.Terminal():
			continue
		case !now.Before(p.Deadline()):
			if err := s.expire(ctx, p); err != nil {
				errs = append(errs, err)
				continue
			}
			res.Expired++
		case p.Status == StatusPending:
			if err := s.sendJob(ctx, Job{Kind: JobSubmit, CompanyID: p.CompanyID, TransactionID: p.ID}, 0); err != nil {
				errs = append(errs, fmt.Errorf("payments: resubmit %s: %w", p.ID, err))
				continue
			}
			slog.InfoContext(ctx, "payment resubmitted", "company_id", p.CompanyID, "transaction_id", p.ID)
			res.Resubmitted++
		}
	}
	if res.Resubmitted+res.Expired > 0 {
		slog.InfoContext(ctx, "payments swept", "resubmitted", res.Resubmitted, "expired", res.Expired)
	}
	return res, errors.Join(errs...)
}

// expire finishes a payment past its deadline. A PROCESSING payment's
// operator is asked one last time, so that a disbursement it did make is
// settled rather than refunded; without a final answer the payment fails
// with TimeoutMessage.
func (s *Service) expire(ctx context.Context, p Payment) error {
	if p.Status == StatusProcessing && p.OrderID != "" && s.gateway != nil {
		res, err := s.gateway.Status(ctx, p.OrderID)
		if err == nil {
			if o, ok := outcomeOf(res); ok {
				return s.finish(ctx, p, o)
			}
			return s.finish(ctx, p, timedOut(res.Raw))
		}
		slog.WarnContext(ctx, "operator status at the deadline", "company_id", p.CompanyID, "transaction_id", p.ID, "error", err)
	}
	return s.finish(ctx, p, timedOut(nil))
}
