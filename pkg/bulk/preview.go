package bulk

import (
	"context"
	"errors"

	"payments/pkg/field"
	"payments/pkg/wallets"
)

// Preview is what Submit would decide of a batch now: its rows the checks
// reject (at most MaxRejectedShown) and what the rest would reserve.
type Preview struct {
	ItemCount, AcceptedCount, RejectedCount int
	// Currency is the batch's; TotalAmount and TotalFees are those of the
	// accepted rows, in its minor units.
	Currency               string
	TotalAmount, TotalFees int64
	// Refused is set when an all_or_nothing batch would be refused whole:
	// the error Submit would answer (a rejected row, or a wallet short).
	Refused  error
	Rejected []Row
}

// Preview checks a batch as Submit does, without reserving anything or
// writing anything: each item by the single payout's rules, then against
// the batch, then against the wallets' payout_available as they stand now
// (a wallet that moves before the batch is submitted may change what is
// accepted). A batch that is itself malformed (no items, a bad mode) is
// the error Submit would answer.
func (s *Service) Preview(ctx context.Context, companyID string, req Request) (Preview, error) {
	if err := req.check(); err != nil {
		return Preview{}, err
	}
	rows, err := s.check(ctx, companyID, req.Items)
	if err != nil {
		return Preview{}, err
	}
	sel, err := s.choose(ctx, companyID, ModePartial, rows)
	if err != nil {
		return Preview{}, err
	}
	p := Preview{ItemCount: len(sel)}
	for _, c := range sel {
		if c.rejected != nil {
			p.RejectedCount++
			if len(p.Rejected) < MaxRejectedShown {
				p.Rejected = append(p.Rejected, Row{Input: c.in.clipped(), Rejection: c.rejected})
			}
			if p.Refused == nil && req.Mode == ModeAllOrNothing {
				p.Refused = allOrNothingRefusal(c)
			}
			continue
		}
		p.AcceptedCount++
		p.Currency = c.payout.Currency
		p.TotalAmount += c.payout.Amount
		p.TotalFees += c.payout.Fee
	}
	return p, nil
}

// allOrNothingRefusal is the error an all_or_nothing batch is refused with
// for its rejected row c: the row's own, or the shortfall of its wallet.
func allOrNothingRefusal(c checked) error {
	if errors.Is(c.err, wallets.ErrInsufficientBalance) {
		return field.On(wallets.ErrInsufficientBalance, "items")
	}
	return itemError(c)
}
