package payments

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// ResumeAfter is how far past its NextPollAt a payment must be before the
// sweeper resumes it: its message was lost (a crash between commit and
// send, a queue that lost its messages, a message moved to the dead-letter
// queue).
const ResumeAfter = time.Minute

// SweepLimit bounds the payments one sweep resumes; the next sweep, a
// minute later, goes on with the rest.
const SweepLimit = 1000

// Sweep resumes, for every company, each payment whose NextPollAt passed
// more than ResumeAfter ago: it is read again (strongly consistent) and, if
// it still expects that message, the message is sent again. The message
// does what the lost one would have (submit, ask the operator, flag at the
// deadline); a copy of a message that was only late is dropped, because
// the payment no longer expects it once the first copy has run. A
// non-final payment written before payments recorded their next poll (it
// has none, and its queued messages no longer parse) is adopted: it gets
// one, now, and its message. It goes on after an error and returns the
// number resumed and the errors joined.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	refs, err := s.store.DuePayments(ctx, s.now().Add(-ResumeAfter), SweepLimit)
	if err != nil {
		return 0, fmt.Errorf("payments: list due payments: %w", err)
	}
	resumed := 0
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
		case p.NextPollAt.IsZero():
			if err := s.adopt(ctx, p); err != nil {
				errs = append(errs, err)
			} else {
				resumed++
			}
			continue
		case p.NextPollAt.After(s.now().Add(-ResumeAfter)):
			continue
		}
		if err := s.sendJob(ctx, p, p.NextPollAt); err != nil {
			errs = append(errs, err)
			continue
		}
		slog.InfoContext(ctx, "payment resumed", "company_id", p.CompanyID, "transaction_id", p.ID,
			"status", p.Status, "due", p.NextPollAt)
		resumed++
	}
	if resumed > 0 {
		slog.InfoContext(ctx, "payments swept", "resumed", resumed)
	}
	return resumed, errors.Join(errs...)
}

// adopt gives a payment from before NextPollAt its first one, now, and
// sends its message (first, as always: see toProcessing).
func (s *Service) adopt(ctx context.Context, p Payment) error {
	p.NextPollAt = s.now()
	if err := s.sendJob(ctx, p, p.NextPollAt); err != nil {
		return err
	}
	switch err := s.store.Reschedule(ctx, p, time.Time{}); {
	case errors.Is(err, ErrStatusChanged):
		return nil
	case err != nil:
		return fmt.Errorf("payments: adopt %s: %w", p.ID, err)
	}
	slog.InfoContext(ctx, "payment adopted by the sweeper", "company_id", p.CompanyID, "transaction_id", p.ID, "status", p.Status)
	return nil
}
