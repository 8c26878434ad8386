package bulk

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"payments/pkg/contention"
	"payments/pkg/correlation"
	"payments/pkg/field"
	"payments/pkg/idempotency"
	"payments/pkg/ids"
	"payments/pkg/payments"
	"payments/pkg/wallets"
)

// Request is a batch as received.
type Request struct {
	Items       []Input
	Description string
	// Mode is ModePartial when empty.
	Mode Mode
}

// Acceptance is the answer to a batch's acceptance: the batch and its
// rejected rows (at most MaxRejectedShown).
type Acceptance struct {
	Batch    Batch
	Rejected []Row
}

// reserveAttempts bounds the tries of a partial batch whose reservation a
// concurrent movement of its wallets refused: each try reads the wallets
// again and selects again.
const reserveAttempts = 5

// Submit accepts a batch for the company. Every item is checked by the
// single payout's rules (payments.Service.PreparePayout), then against
// the batch: one currency, at most MaxWallets wallets, an external_id not
// used before nor earlier in the batch. Then the valid items are reserved,
// in row order while each wallet's payout_available covers them
// (ModePartial), or all or none (ModeAllOrNothing: any rejected item, or a
// wallet that does not cover its items, refuses the batch with a 400 naming
// the first such item or the items). The chunks are written, then the
// batch and its reservations in one transaction, then a chunk job per
// chunk with accepted rows is queued (a failed send is the sweeper's to
// redo). The retry of a request whose first run committed its batch
// (idempotency.Replaying) answers that batch.
func (s *Service) Submit(ctx context.Context, companyID string, req Request) (Acceptance, error) {
	if e, ok := idempotency.Replaying(ctx); ok {
		return s.accepted(ctx, companyID, e.ID)
	}
	if err := req.check(); err != nil {
		return Acceptance{}, err
	}
	now := s.now()
	b := Batch{
		ID: ids.NewV7(now), CompanyID: companyID, Mode: req.Mode, Description: req.Description,
		ItemCount: len(req.Items), CorrelationID: correlation.ID(ctx), CreatedAt: now, UpdatedAt: now,
	}
	if b.Mode == "" {
		b.Mode = ModePartial
	}
	rows, err := s.check(ctx, companyID, req.Items)
	if err != nil {
		return Acceptance{}, err
	}
	if b.Mode == ModeAllOrNothing {
		for _, r := range rows {
			if r.rejected != nil {
				return Acceptance{}, itemError(r)
			}
		}
	}
	for attempt := 1; ; attempt++ {
		sel, err := s.choose(ctx, companyID, b.Mode, rows)
		if err != nil {
			return Acceptance{}, err
		}
		batch, chunks, posting, err := s.assemble(b, sel)
		if err != nil {
			return Acceptance{}, err
		}
		err = s.store.CreateBatch(ctx, batch, chunks, posting)
		var short *InsufficientWallet
		switch {
		case errors.As(err, &short) && b.Mode == ModeAllOrNothing:
			return Acceptance{}, field.On(short.Err, "items")
		case errors.As(err, &short) && attempt < reserveAttempts:
			continue // a wallet moved since it was read
		case errors.As(err, &short):
			return Acceptance{}, fmt.Errorf("bulk: reserve batch %s: %w", b.ID, contention.ErrConflict)
		case err != nil:
			return Acceptance{}, err
		}
		slog.InfoContext(ctx, "bulk batch accepted", "company_id", companyID, "batch_id", batch.ID,
			"items", batch.ItemCount, "accepted", batch.AcceptedCount, "rejected", batch.RejectedCount,
			"total", batch.TotalAmount+batch.TotalFees, "currency", batch.Currency)
		countAccepted(ctx, batch, chunks)
		s.queueChunks(ctx, batch, chunks)
		if batch.Done() { // nothing accepted: complete at once, and answer it so
			s.completer.complete(ctx, companyID, batch.ID)
			if done, err := s.store.GetBatch(ctx, companyID, batch.ID); err == nil {
				batch = done
			}
		}
		return Acceptance{Batch: batch, Rejected: firstRejected(chunks)}, nil
	}
}

// check refuses a batch that is empty, too large, or has a bad mode or
// description.
func (r Request) check() error {
	switch {
	case len(r.Items) == 0:
		return field.Invalid("items", "must hold at least one item")
	case len(r.Items) > MaxItems:
		return field.Invalid("items", fmt.Sprintf("must hold at most %d items", MaxItems))
	case r.Mode != "" && r.Mode != ModePartial && r.Mode != ModeAllOrNothing:
		return field.Invalid("mode", "must be partial or all_or_nothing")
	}
	return payments.CheckText("description", r.Description)
}

// checked is a row being accepted: its input, the payout it would be (when
// valid), and its rejection with the error that caused it.
type checked struct {
	in       Input
	payout   payments.Payment
	rejected *Rejection
	err      error
}

// reject marks c rejected by err.
func (s *Service) reject(c *checked, err error) {
	rej, _ := s.describe.Describe(err)
	c.rejected, c.err = &rej, err
}

// check checks every item alone, then against the batch: the batch's
// currency (its first valid item's), its wallets, and its external_ids,
// used before (TakenExternalIDs) or earlier in the batch.
func (s *Service) check(ctx context.Context, companyID string, items []Input) ([]checked, error) {
	walletOf := memoWallets(s.payouts.Wallet)
	rows := make([]checked, len(items))
	currency, walletIDs, seen := "", map[string]bool{}, map[string]int{}
	for i, in := range items {
		c := &rows[i]
		c.in = in
		p, err := s.payouts.PreparePayout(ctx, companyID, in.request(), walletOf)
		if err != nil {
			if _, known := s.describe.Describe(err); !known {
				return nil, fmt.Errorf("bulk: check row %d: %w", in.Row, err)
			}
			s.reject(c, err)
			continue
		}
		switch {
		case currency != "" && p.Currency != currency:
			s.reject(c, field.Invalid("currency", "must be "+currency+", the batch's currency: a batch pays in one currency"))
			continue
		case !walletIDs[p.WalletID] && len(walletIDs) == MaxWallets:
			s.reject(c, field.Invalid("country", fmt.Sprintf("a batch pays from at most %d wallets (currency and country)", MaxWallets)))
			continue
		}
		if in.ExternalID != "" {
			if _, dup := seen[in.ExternalID]; dup {
				s.reject(c, field.On(payments.ErrDuplicateExternalID, "external_id"))
				continue
			}
			seen[in.ExternalID] = i
		}
		currency, walletIDs[p.WalletID] = p.Currency, true
		c.payout = p
	}
	if len(seen) > 0 {
		external := make([]string, 0, len(seen))
		for id := range seen {
			external = append(external, id)
		}
		taken, err := s.store.TakenExternalIDs(ctx, companyID, external)
		if err != nil {
			return nil, fmt.Errorf("bulk: read external_ids: %w", err)
		}
		for id := range taken {
			s.reject(&rows[seen[id]], field.On(payments.ErrDuplicateExternalID, "external_id"))
		}
	}
	return rows, nil
}

// selection is which rows are accepted: rows, with the INSUFFICIENT_BALANCE
// rejections of a partial batch added.
type selection []checked

// choose decides which valid rows the wallets cover, from wallets read
// now: in row order while each covers them (ModePartial), or all of them
// (ModeAllOrNothing: a wallet short of its rows refuses the batch).
func (s *Service) choose(ctx context.Context, companyID string, mode Mode, rows []checked) (selection, error) {
	available := map[string]int64{}
	for _, r := range rows {
		if r.rejected != nil {
			continue
		}
		if _, ok := available[r.payout.WalletID]; ok {
			continue
		}
		w, err := s.payouts.Wallet(ctx, companyID, r.payout.Currency, r.payout.Country)
		if err != nil {
			return nil, fmt.Errorf("bulk: read wallet: %w", err)
		}
		available[w.ID] = w.PayoutAvailable
	}
	sel := make(selection, len(rows))
	copy(sel, rows)
	for i := range sel {
		c := &sel[i]
		if c.rejected != nil {
			continue
		}
		total := c.payout.Total()
		if total > available[c.payout.WalletID] {
			if mode == ModeAllOrNothing {
				return nil, field.On(wallets.ErrInsufficientBalance, "items")
			}
			s.reject(c, wallets.ErrInsufficientBalance)
			continue
		}
		available[c.payout.WalletID] -= total
	}
	return sel, nil
}

// assemble returns the batch b with sel's rows: its counts and totals, its
// chunks (those with no accepted row done at once) and the posting that
// reserves each wallet's total on a reservation entry.
func (s *Service) assemble(b Batch, sel selection) (Batch, []Chunk, wallets.Posting, error) {
	totals := map[string]*Reservation{}
	var order []string
	chunks := make([]Chunk, 0, (len(sel)+ChunkSize-1)/ChunkSize)
	for i, c := range sel {
		if i%ChunkSize == 0 {
			chunks = append(chunks, Chunk{CompanyID: b.CompanyID, BatchID: b.ID, N: i / ChunkSize, Done: true})
		}
		chunk := &chunks[len(chunks)-1]
		row := Row{Input: c.in, Rejection: c.rejected}
		if c.rejected != nil {
			row.Input = c.in.clipped()
		}
		if c.rejected == nil {
			p := c.payout
			row.Accepted = &Accepted{TransactionID: p.ID, ExternalID: p.ExternalID, Reason: p.Reason,
				WalletID: p.WalletID, Amount: p.Amount, Fee: p.Fee}
			chunk.Done = false
			b.AcceptedCount++
			b.Currency = p.Currency
			b.TotalAmount += p.Amount
			b.TotalFees += p.Fee
			r, ok := totals[p.WalletID]
			if !ok {
				r = &Reservation{WalletID: p.WalletID, EntryID: ids.NewV7(b.CreatedAt)}
				totals[p.WalletID] = r
				order = append(order, p.WalletID)
			}
			r.Total += p.Total()
		} else {
			b.RejectedCount++
		}
		chunk.Rows = append(chunk.Rows, row)
	}
	b.Chunks = len(chunks)
	var legs []wallets.Leg
	for _, id := range order {
		r := *totals[id]
		b.Reservations = append(b.Reservations, r)
		legs = append(legs, wallets.Leg{
			WalletID: r.WalletID, Adjust: wallets.Adjustment{Reserved: r.Total}, ActiveOnly: true,
			Entries: []wallets.Transaction{b.reservationEntry(r)},
		})
	}
	for _, c := range chunks {
		if c.Done {
			b.ChunksDone++
		}
	}
	posting, err := wallets.NewPosting(b.CompanyID, b.CreatedAt, legs...)
	if err != nil {
		return Batch{}, nil, wallets.Posting{}, fmt.Errorf("bulk: batch %s: %w", b.ID, err)
	}
	return b, chunks, posting, nil
}

// reservationEntry returns the open entry that holds r.Total for b.
func (b Batch) reservationEntry(r Reservation) wallets.Transaction {
	return wallets.Transaction{
		ID: r.EntryID, CompanyID: b.CompanyID, WalletID: r.WalletID,
		Amount: r.Total, AmountWithFee: r.Total, NetAmount: r.Total, Currency: b.Currency,
		Status: wallets.StatusPending, Type: wallets.TypeBulkPayout, Reference: b.ID,
		Balance: wallets.Payout, Reserved: r.Total, CreatedAt: b.CreatedAt,
	}
}
