package bulk_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"payments/pkg/app/apptest"
	"payments/pkg/bulk"
	"payments/pkg/function"
	"payments/pkg/function/payoutworker"
	"payments/pkg/payments"
	"payments/pkg/queue/queuetest"
	"payments/pkg/store/moneystore"
	"payments/pkg/waittest"
)

// items returns n items of 100 XAF (fee 2), each to a number of its own
// that the sandbox pays.
func items(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = item(fmt.Sprintf("23767%07d", i+1), 100, "")
	}
	return out
}

// depth returns how many messages the queue at url holds.
func (e batchEnv) depth(url string) int {
	e.T.Helper()
	return queuetest.Depth(e.T, e.Sqs, url)
}

// chunksDone returns how many chunks of the company's batch id are
// written, and how many it has.
func (e batchEnv) chunksDone(companyID, id string) (done, all int) {
	e.T.Helper()
	b, err := moneystore.NewBulk(e.DB).GetBatch(context.Background(), companyID, id)
	if err != nil {
		e.T.Fatal(err)
	}
	return b.ChunksDone, b.Chunks
}

// TestSinglePayoutNotBehindBatch: a single payout of another company, made
// while a large batch's work waits on the queue (its first chunk written,
// the chunk's 100 submissions and the next chunk's job queued), reaches
// SUCCESS through the payouts queue alone: it waits for none of the
// batch's work, which stays on the bulk payouts queue untouched.
func TestSinglePayoutNotBehindBatch(t *testing.T) {
	t.Parallel()
	e := newBatchEnv(t, "100000")
	big := e.submit(batch("partial", items(150)...))
	if big.Status != 202 || big.Str("data", "accepted_count") != "150" {
		t.Fatalf("submit: %d %.300s", big.Status, big.Raw)
	}
	bigID := big.Str("data", "batch_id")
	if n := e.DeliverFrom(e.Bulk); n != 1 {
		t.Fatalf("%d messages on the bulk payouts queue after the acceptance, want the first chunk's job", n)
	}
	const queued = bulk.ChunkSize + 1 // the first chunk's submissions, the second chunk's job
	if n := e.depth(e.Bulk); n != queued {
		t.Fatalf("%d messages on the bulk payouts queue, want %d", n, queued)
	}

	otherID, token, walletID := e.Company("10000")
	r := e.Call(e.Payments, token, "POST", "/payment/payout", item("237670000001", 1000, ""))
	if r.Status != 200 {
		t.Fatalf("payout: %s", r.Raw)
	}
	id := r.Str("data", "transaction_id")
	// The payouts queue's own consumer, as the event source mapping of
	// the payouts queue (and the local stack's pollers of it) runs it.
	waittest.Until(t, 30*time.Second, "the single payout is SUCCESS", func() bool {
		if e.Status(token, id).Str("data", "status") == "SUCCESS" {
			return true
		}
		e.DeliverFrom(e.Payouts)
		return false
	})

	if n := e.depth(e.Bulk); n != queued {
		t.Fatalf("%d messages on the bulk payouts queue once the payout is paid, want the %d waiting before it", n, queued)
	}
	if c := e.get(bigID).Str("data", "counts"); c != `{"failed":0,"pending":150,"processing":0,"rejected":0,"success":0}` {
		t.Fatalf("the batch's counts once the payout is paid: %s", c)
	}
	if w := e.Wallet(token, walletID); fmt.Sprint(w["payout_balance"], "/", w["payout_reserved"]) != "8985/0" {
		t.Fatalf("the payout's wallet: %v", w)
	}
	e.Verify(otherID)
	e.Verify(e.companyID)
}

// TestBatchesTakeTurns: a small batch of another company, sent while a
// large batch's chunk job waits on the queue, waits behind one chunk of it
// at a time, not behind the whole batch: each batch has one chunk job on
// the queue, and each chunk job queues the next behind its chunk's
// submissions. The bulk payouts queue's consumer, taking the oldest
// messages first, submits the small batch's items while the large batch
// still has a chunk to write.
func TestBatchesTakeTurns(t *testing.T) {
	t.Parallel()
	e := newBatchEnv(t, "100000")
	big := e.submit(batch("partial", items(2*bulk.ChunkSize+1)...)) // three chunks, the last of one row
	if big.Status != 202 {
		t.Fatalf("submit: %d %.300s", big.Status, big.Raw)
	}
	bigID := big.Str("data", "batch_id")
	if n := e.depth(e.Bulk); n != 1 {
		t.Fatalf("%d messages on the bulk payouts queue after the acceptance, want the first chunk's job alone", n)
	}

	otherID, token, _ := e.Company("10000")
	var csv strings.Builder
	csv.WriteString("operator,country,phone_number,amount,currency\n")
	for i := range 5 {
		fmt.Fprintf(&csv, "mtn,CM,2376799%05d,100,XAF\n", i+1)
	}
	small := e.Call(e.Payments, token, "POST", "/payment/payouts/bulk", csv.String(), "content-type", "text/csv")
	if small.Status != 202 || small.Str("data", "accepted_count") != "5" {
		t.Fatalf("small batch: %d %s", small.Status, small.Raw)
	}
	smallBatch := func() apptest.Result {
		return e.Call(e.Payments, token, "GET", "/payment/payouts/bulk/"+small.Str("data", "batch_id"), "")
	}
	// The bulk payouts queue's consumer, oldest messages first.
	waittest.Until(t, 60*time.Second, "the small batch's items are all submitted", func() bool {
		if smallBatch().Str("data", "counts", "pending") == "0" {
			return true
		}
		e.DeliverFrom(e.Bulk)
		return false
	})
	if done, all := e.chunksDone(e.companyID, bigID); done == all {
		t.Fatalf("the large batch's %d chunks were all written before the small batch's items were submitted", all)
	}
	e.Verify(otherID)
	e.Verify(e.companyID)
}

// TestItemDeadlineCountsFromWriting: an item's payment deadline counts
// from when its chunk job writes it as a payout, not from the batch's
// acceptance: an item written after the batch's acceptance plus the
// deadline (its chunk job behind other work) is still sent and paid, and
// keeps the acceptance as its created_at; an item written in time whose
// submission comes after the deadline counted from its writing is failed
// as never sent, its money given back. All its messages ride the bulk
// payouts queue.
func TestItemDeadlineCountsFromWriting(t *testing.T) {
	t.Parallel()
	const deadline = 20 * time.Second
	tests := []struct {
		name string
		// writeAt and sendAt are how long after the acceptance the
		// worker writes the chunk, then handles the items' messages.
		writeAt, sendAt time.Duration
		status, message string
		wallet          string
	}{
		{"written past the acceptance's deadline, sent at once: paid", time.Minute, time.Minute + 2*time.Second,
			"SUCCESS", "<nil>", "6955/0/6955"},
		{"written in time, sent past its own deadline: failed as never sent", 0, deadline + time.Second,
			"FAILED", payments.NotSentMessage, "10000/0/10000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newBatchEnv(t, "10000")
			r := e.submit(batch("partial", item("237670000001", 1000, ""), item("237670000002", 2000, "")))
			if r.Status != 202 {
				t.Fatalf("submit: %s", r.Raw)
			}
			id := r.Str("data", "batch_id")
			worker := func(after time.Duration) function.SQSHandler {
				cfg := e.Cfg
				cfg.PaymentDeadline = deadline
				h, err := payoutworker.NewWithClock(apptest.Recording(cfg, "payout-worker"), e.Caches, func() time.Time { return time.Now().Add(after) })
				if err != nil {
					t.Fatal(err)
				}
				return h
			}
			e.Worker = worker(tt.writeAt)
			if n := e.DeliverFrom(e.Bulk); n != 1 {
				t.Fatalf("%d messages delivered, want the chunk job", n)
			}
			e.Worker = worker(tt.sendAt)
			// The bulk payouts queue's consumer alone: the items' messages
			// are all there.
			waittest.Until(t, 30*time.Second, "the batch is COMPLETED", func() bool {
				if e.get(id).Str("data", "status") == "COMPLETED" {
					return true
				}
				e.DeliverFrom(e.Bulk)
				return false
			})
			done := e.get(id)
			items := e.Call(e.Payments, e.token, "GET", "/payment/payouts/bulk/"+id+"/items", "")
			if len(items.Items()) != 2 {
				t.Fatalf("items: %s", items.Raw)
			}
			for _, it := range items.Items() {
				tx := it.(map[string]any)["transaction_id"].(string)
				s := e.Status(e.token, tx)
				if s.Str("data", "status") != tt.status || s.Str("data", "error_message") != tt.message {
					t.Fatalf("item %s: %s", tx, s.Raw)
				}
				if got, want := s.Str("data", "created_at"), done.Str("data", "created_at"); got != want {
					t.Errorf("item created_at %s, want the batch's acceptance %s", got, want)
				}
			}
			if got := e.wallet(); got != tt.wallet {
				t.Fatalf("wallet %s, want %s", got, tt.wallet)
			}
			if n := e.depth(e.Payouts); n != 0 {
				t.Fatalf("%d messages on the payouts queue: a batch's items use the bulk payouts queue", n)
			}
			e.Verify(e.companyID)
		})
	}
}
