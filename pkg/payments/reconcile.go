package payments

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"payments/pkg/contention"
	"payments/pkg/field"
	"payments/pkg/ids"
)

// MaxNoteLength bounds the note of a console resolution, in characters.
const MaxNoteLength = 1000

// ResolvedFailedMessage is the error_message of a payment the operator
// console resolved as FAILED; the console's note is kept for operators, not
// shown to the company.
const ResolvedFailedMessage = "the operator reported the payment failed (resolved by reconciliation)"

// ResolveInput is the operator console's decision about a payment flagged
// for reconciliation, after checking with the operator.
type ResolveInput struct {
	Status Status
	Note   string
	// By names who decided (the console's caller).
	By string
}

// Resolve settles (SUCCESS) or refunds (FAILED) a payment flagged for
// reconciliation, exactly once, recording who decided, why and when, and
// emits the status update. A payment that is final is ErrFinal; one that is
// not flagged (the worker still handles it) is ErrNotFlagged.
func (s *Service) Resolve(ctx context.Context, id string, in ResolveInput) (Payment, error) {
	in.Note = strings.TrimSpace(in.Note)
	switch {
	case in.Status != StatusSuccess && in.Status != StatusFailed:
		return Payment{}, field.Invalid("status", "must be SUCCESS or FAILED")
	case in.Note == "":
		return Payment{}, field.Invalid("note", "is required: say how the outcome was established")
	case utf8.RuneCountInString(in.Note) > MaxNoteLength:
		return Payment{}, field.Invalid("note", fmt.Sprintf("must be at most %d characters", MaxNoteLength))
	case !ids.IsUUID(id):
		return Payment{}, ErrNotFound
	}
	var t Transition
	_, err := contention.Retry.Do(ctx, func(ctx context.Context) (bool, error) {
		p, err := s.store.PaymentByID(ctx, id)
		switch {
		case err != nil:
			return false, err
		case p.Status.Terminal():
			return false, ErrFinal
		case !p.ReconciliationRequired:
			return false, ErrNotFlagged
		}
		o := outcome{status: in.Status, resolution: &Resolution{Status: in.Status, Note: in.Note, By: in.By, At: s.now()}}
		if in.Status == StatusFailed {
			o.reason = ResolvedFailedMessage
		}
		if t, err = s.transition(p, o); err != nil {
			return false, err
		}
		if err := s.store.ApplyTransition(ctx, t); err != nil {
			// A poll moved it (or finished it) meanwhile: look again.
			return errors.Is(err, ErrStatusChanged), fmt.Errorf("payments: resolve %s: %w", id, err)
		}
		return false, nil
	})
	if err != nil {
		return Payment{}, err
	}
	countFinal(ctx, t.Payment)
	s.publish(ctx, t.Event)
	return t.Payment, nil
}

// Flagged returns a page of the payments of every company that are flagged
// for reconciliation, oldest first, and the after of the next page ("" on
// the last).
func (s *Service) Flagged(ctx context.Context, after string, limit int) ([]Payment, string, error) {
	if after != "" && !ids.IsUUID(after) {
		return nil, "", field.Invalid("cursor", "is not a cursor of this list")
	}
	ps, next, err := s.store.FlaggedPayments(ctx, after, limit)
	if err != nil {
		return nil, "", fmt.Errorf("payments: list flagged: %w", err)
	}
	return ps, next, nil
}

// FlaggedBefore returns the number of payments of every company flagged
// for reconciliation and written before cutoff (Written: a bulk item's
// window counts from its writing), counting at most max: the list is read
// oldest first, up to the first payment accepted after cutoff (written
// after it, then, too).
func (s *Service) FlaggedBefore(ctx context.Context, cutoff time.Time, max int) (int, error) {
	n, after := 0, ""
	for n < max {
		ps, next, err := s.Flagged(ctx, after, min(max-n, 100))
		if err != nil {
			return n, err
		}
		for _, p := range ps {
			if !p.CreatedAt.Before(cutoff) {
				return n, nil
			}
			if p.Written().Before(cutoff) {
				n++
			}
		}
		if next == "" {
			break
		}
		after = next
	}
	return n, nil
}

// CountFlagged returns the number of payments of every company flagged
// for reconciliation: the total of the console's list.
func (s *Service) CountFlagged(ctx context.Context) (int, error) {
	n, err := s.store.CountFlaggedPayments(ctx)
	if err != nil {
		return 0, fmt.Errorf("payments: count flagged: %w", err)
	}
	return n, nil
}
