package bulk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"payments/pkg/correlation"
	"payments/pkg/events"
	"payments/pkg/field"
	"payments/pkg/ids"
	"payments/pkg/payments"
	"payments/pkg/wallets"
)

// ChunkJob is the body of a chunk job on the bulk payouts queue: write the
// payouts of chunk Chunk of batch BatchID.
type ChunkJob struct {
	CompanyID string `json:"company_id"`
	BatchID   string `json:"batch_id"`
	Chunk     int    `json:"chunk"`
}

// ParseChunkJob returns the chunk job body holds, and whether body is one
// (a message that names a batch); a chunk job with a bad id or chunk is an
// error.
func ParseChunkJob(body []byte) (ChunkJob, bool, error) {
	var j ChunkJob
	if err := json.Unmarshal(body, &j); err != nil || j.BatchID == "" {
		return ChunkJob{}, false, nil
	}
	if !ids.IsUUID(j.CompanyID) || !ids.IsUUID(j.BatchID) || j.Chunk < 0 || j.Chunk >= (MaxItems+ChunkSize-1)/ChunkSize {
		return ChunkJob{}, true, fmt.Errorf("bulk: bad chunk job %.200q", body)
	}
	return j, true, nil
}

// queueChunks sends the job of the first chunk of b not done, the head of
// the chain of b's chunk jobs: each chunk job queues the next once it has
// queued its own payouts' submissions (queueNext), so that a batch has one
// chunk job at a time on the queue and the work of other batches, queued
// meanwhile, waits behind one chunk of it, not the whole batch
// (docs/bulk.md, "Fairness"). A failed send is logged: the sweeper sends
// it again (Sweep).
func (s *Service) queueChunks(ctx context.Context, b Batch, chunks []Chunk) {
	for _, c := range chunks {
		if c.Done {
			continue
		}
		if err := s.sendChunk(ctx, b, c.N); err != nil {
			slog.WarnContext(ctx, "queue chunk job; the sweeper will", "company_id", b.CompanyID, "batch_id", b.ID, "chunk", c.N, "error", err)
		}
		return
	}
}

// queueNext sends the job of the first chunk of b after chunk n that is
// not done (a chunk whose rows were all rejected is done at acceptance),
// the next link of b's chain. A chunk job that finds its chunk done, or
// held by another run, queues none: the run that writes a chunk queues
// the next, so copies of a job (the sweeper's, SQS's) never make two
// chains. A failed read or send is logged: the sweeper sends the job again.
func (s *Service) queueNext(ctx context.Context, b Batch, n int) {
	for m := n + 1; m < b.Chunks; m++ {
		c, err := s.store.GetChunk(ctx, b.CompanyID, b.ID, m)
		if err == nil && c.Done {
			continue
		}
		if err == nil {
			err = s.sendChunk(ctx, b, m)
		}
		if err != nil {
			slog.WarnContext(ctx, "queue the next chunk job; the sweeper will", "company_id", b.CompanyID, "batch_id", b.ID, "chunk", m, "error", err)
		}
		return
	}
}

// sendChunk queues the job of chunk n of b.
func (s *Service) sendChunk(ctx context.Context, b Batch, n int) error {
	body, err := json.Marshal(ChunkJob{CompanyID: b.CompanyID, BatchID: b.ID, Chunk: n})
	if err != nil {
		return fmt.Errorf("bulk: encode chunk job: %w", err)
	}
	if err := s.jobs.Send(ctx, body, 0); err != nil {
		return fmt.Errorf("bulk: queue chunk %d of %s: %w", n, b.ID, err)
	}
	return nil
}

// ChunkLease is how long a chunk job's run holds its chunk: longer than
// the payout worker may run (its Lambda time-out, 60 s), so that a run
// that takes the chunk over after it finds every write of the one before
// it made.
const ChunkLease = 3 * time.Minute

// HandleChunk writes the payouts of one chunk. It takes the chunk's lease
// (a chunk done, or held by another run, is left alone: the sweeper sends
// its job again while it is not done), reads the payouts an earlier run
// wrote, which stay as they are, claims the external_id of each other
// accepted row (a row whose external_id another payment took meanwhile is
// rejected DUPLICATE_EXTERNAL_ID and its reservation released), writes
// their payouts with their acceptance events, marks the chunk done with
// what it found, then queues each payout's submission, and after them the
// job of the batch's next chunk (queueNext). The payouts are
// written without conditions, and the lease is what keeps two runs from
// writing the same chunk. An error leaves the message for redelivery; a
// job naming no batch or chunk is dropped. A run that fails gives the
// chunk back at once, unless its time ran out (a call may still land).
func (s *Service) HandleChunk(ctx context.Context, j ChunkJob) (err error) {
	b, err := s.store.GetBatch(ctx, j.CompanyID, j.BatchID)
	if errors.Is(err, ErrNotFound) || (err == nil && j.Chunk >= b.Chunks) {
		slog.WarnContext(ctx, "drop chunk job of unknown batch", "company_id", j.CompanyID, "batch_id", j.BatchID, "chunk", j.Chunk)
		return nil
	}
	if err != nil {
		return err
	}
	ctx = correlation.NewContext(ctx, b.CorrelationID)
	c, err := s.store.GetChunk(ctx, j.CompanyID, j.BatchID, j.Chunk)
	if err != nil || c.Done {
		return err
	}
	now := s.now()
	c.Lease = ids.NewV7(now)
	switch err := s.store.LeaseChunk(ctx, b.CompanyID, b.ID, c.N, c.Lease, now, now.Add(ChunkLease)); {
	case errors.Is(err, ErrChanged):
		slog.InfoContext(ctx, "bulk chunk done or held by another run", "company_id", b.CompanyID, "batch_id", b.ID, "chunk", c.N)
		return nil
	case err != nil:
		return fmt.Errorf("bulk: lease chunk %d of %s: %w", c.N, b.ID, err)
	}
	defer func() {
		if err != nil && ctx.Err() == nil {
			if rerr := s.store.ReleaseChunk(ctx, b.CompanyID, b.ID, c.N, c.Lease); rerr != nil {
				slog.WarnContext(ctx, "release chunk; its lease runs out", "batch_id", b.ID, "chunk", c.N, "error", rerr)
			}
		}
	}()
	var txIDs []string
	for _, r := range c.Rows {
		if r.Accepted != nil {
			txIDs = append(txIDs, r.Accepted.TransactionID)
		}
	}
	written, err := s.store.GetPayments(ctx, b.CompanyID, txIDs)
	if err != nil {
		return fmt.Errorf("bulk: read payouts of chunk %d of %s: %w", c.N, b.ID, err)
	}
	refused, err := s.claim(ctx, b, c, written)
	if err != nil {
		return err
	}
	var ps []payments.Payment
	var evs []events.Event
	var released []Row
	for i, r := range c.Rows {
		switch {
		case r.Accepted == nil:
		case refused[r.Accepted.TransactionID]:
			released = append(released, r)
			rej, _ := s.describe.Describe(field.On(payments.ErrDuplicateExternalID, "external_id"))
			c.Rows[i].Rejection, c.Rows[i].Accepted = &rej, nil
		case written[r.Accepted.TransactionID].ID == "":
			p := b.payout(r, now)
			ev, err := payments.AcceptedEvent(p)
			if err != nil {
				return err
			}
			ps, evs = append(ps, p), append(evs, ev)
		}
	}
	if err := s.store.PutPayouts(ctx, ps, evs); err != nil {
		return fmt.Errorf("bulk: write payouts of chunk %d of %s: %w", c.N, b.ID, err)
	}
	release, err := b.release(released, now)
	if err != nil {
		return err
	}
	switch err := s.store.FinishChunk(ctx, b, c, released, release, now); {
	case errors.Is(err, ErrChanged):
		return nil // another run finished the chunk and queued its payouts
	case err != nil:
		return fmt.Errorf("bulk: finish chunk %d of %s: %w", c.N, b.ID, err)
	}
	slog.InfoContext(ctx, "bulk chunk written", "company_id", b.CompanyID, "batch_id", b.ID, "chunk", c.N,
		"payouts", len(ps)+len(written), "released", len(released))
	s.submit(ctx, ps, evs, written)
	s.queueNext(ctx, b, c.N)
	s.completer.complete(ctx, b.CompanyID, b.ID)
	return nil
}

// claim claims the external_id of each accepted row of c not written yet
// and returns the transaction ids of the rows whose external_id another
// payment holds.
func (s *Service) claim(ctx context.Context, b Batch, c Chunk, written map[string]payments.Payment) (map[string]bool, error) {
	var claims []Claim
	for _, r := range c.Rows {
		if a := r.Accepted; a != nil && written[a.TransactionID].ID == "" {
			claims = append(claims, Claim{ExternalID: a.ExternalID, TransactionID: a.TransactionID})
		}
	}
	refused, err := s.store.ClaimExternalIDs(ctx, b.CompanyID, claims)
	if err != nil {
		return nil, fmt.Errorf("bulk: claim external_ids of chunk %d of %s: %w", c.N, b.ID, err)
	}
	return refused, nil
}

// submit queues the submission of the payouts of a chunk: those written
// now with their events, those an earlier run wrote and still PENDING
// without (the sweeper publishes their events). A failed send is the
// sweeper's to redo.
func (s *Service) submit(ctx context.Context, ps []payments.Payment, evs []events.Event, written map[string]payments.Payment) {
	for _, p := range written {
		if p.Status == payments.StatusPending {
			ps, evs = append(ps, p), append(evs, events.Event{})
		}
	}
	if err := s.payouts.EnqueueAll(ctx, ps, evs); err != nil {
		slog.WarnContext(ctx, "queue submits; the sweeper will", "payouts", len(ps), "error", err)
	}
}

// payout returns the PENDING payout of row r, accepted in b, written at
// now: its CreatedAt is the batch's acceptance (the time of its id), its
// WrittenAt now, from which its deadline counts (payments.Payment.Written).
func (b Batch) payout(r Row, now time.Time) payments.Payment {
	a := r.Accepted
	return payments.Payment{
		ID: a.TransactionID, CompanyID: b.CompanyID, ExternalID: a.ExternalID,
		Type: payments.TypePayout, Status: payments.StatusPending,
		Amount: a.Amount, Fee: a.Fee, Currency: r.Currency, Country: r.Country, Operator: r.Operator,
		PhoneNumber: r.PhoneNumber, Reason: a.Reason, NotifyURL: r.NotifyURL, WalletID: a.WalletID,
		BatchID: b.ID, BatchEntryID: b.entryOf(a.WalletID),
		Submission: payments.NotSubmitted, NextPollAt: now,
		CreatedAt: b.CreatedAt, WrittenAt: now, UpdatedAt: now, CorrelationID: b.CorrelationID,
	}
}

// entryOf returns the id of b's reservation entry on wallet walletID.
func (b Batch) entryOf(walletID string) string {
	for _, r := range b.Reservations {
		if r.WalletID == walletID {
			return r.EntryID
		}
	}
	return ""
}

// release returns the posting that gives the reservation of rows back to
// their wallets, drawn out of b's reservation entries; nil for no rows.
func (b Batch) release(rows []Row, now time.Time) (*wallets.Posting, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	byWallet := map[string]int64{}
	var order []string
	for _, r := range rows {
		a := r.Accepted
		if _, ok := byWallet[a.WalletID]; !ok {
			order = append(order, a.WalletID)
		}
		byWallet[a.WalletID] += a.Amount + a.Fee
	}
	legs := make([]wallets.Leg, 0, len(order))
	for _, w := range order {
		legs = append(legs, wallets.Leg{
			WalletID: w, Adjust: wallets.Adjustment{Reserved: -byWallet[w]},
			Draws: []wallets.EntryDraw{{ID: b.entryOf(w), Amount: byWallet[w]}},
		})
	}
	p, err := wallets.NewPosting(b.CompanyID, now, legs...)
	if err != nil {
		return nil, fmt.Errorf("bulk: release of batch %s: %w", b.ID, err)
	}
	return &p, nil
}
