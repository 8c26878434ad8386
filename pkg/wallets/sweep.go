package wallets

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// FundingResumeAfter is how long after its declaration a PENDING funding
// is asked about by the sweeper: the bank's own answer (the sandbox bank's
// message, banksandbox.Delay after the declaration) was lost, or is late.
const FundingResumeAfter = time.Minute

// FundingSweepLimit bounds the fundings one sweep asks the bank about; the
// next sweep goes on with the rest.
const FundingSweepLimit = 100

// SweepFundings asks the bank about each funding declared more than
// FundingResumeAfter before now and still PENDING, and confirms or rejects
// it as CheckFunding does: what a lost bank message (a crash between the
// declaration and Bank.Expect, a queue that lost it) would have done. A
// funding the bank still awaits is asked about again at the next sweep.
// It goes on after an error and returns the number decided and the errors
// joined. Without a bank (production, where the operator console decides)
// it does nothing.
func (s *Service) SweepFundings(ctx context.Context, now time.Time) (int, error) {
	if s.Bank == nil {
		return 0, nil
	}
	open, err := s.store.OpenFundings(ctx, now.Add(-FundingResumeAfter), FundingSweepLimit)
	if err != nil {
		return 0, fmt.Errorf("wallets: list open fundings: %w", err)
	}
	decided := 0
	var errs []error
	for _, f := range open {
		switch err := s.CheckFunding(ctx, f.CompanyID, f.ID); {
		case errors.Is(err, ErrFundingAwaited):
		case err != nil:
			errs = append(errs, err)
		default:
			decided++
		}
	}
	if decided > 0 {
		slog.InfoContext(ctx, "fundings swept", "decided", decided)
	}
	return decided, errors.Join(errs...)
}
