package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"payments/infra/local/samtemplate"
)

// The bulk scenario's targets (docs/performance.md): the batch is
// accepted, every item's money reserved, within BulkAcceptTarget; every
// item is written as a payout within BulkWrittenTarget; and the batch
// does at least BulkRatioTarget times the single payout path's accepted
// payouts per second on one wallet.
const (
	BulkAcceptTarget  = 5 * time.Second
	BulkWrittenTarget = 60 * time.Second
	BulkRatioTarget   = 10.0
)

// bulkPoll is the pause between two reads of the batch's status;
// singleDuration is how long the single payout path runs on one wallet
// when the run has no scenario (a) to compare with.
const (
	bulkPoll       = 250 * time.Millisecond
	singleDuration = 15 * time.Second
)

// The batch's statuses (pkg/bulk).
const (
	batchAccepted  = "ACCEPTED"
	batchCompleted = "COMPLETED"
)

// BulkResult is what the bulk scenario measured, each duration from the
// moment the batch's request was sent.
type BulkResult struct {
	// Items is the number of items of the batch.
	Items int
	// Accepted is the time to the 202: every item's money is reserved.
	Accepted time.Duration
	// Written is the time until the batch left ACCEPTED: every item is a
	// payout.
	Written time.Duration
	// Completed is the time until the batch was COMPLETED: every item is
	// final; 0 when it was not within the wait.
	Completed time.Duration
	// Single is the single payout path's scenario on one wallet through
	// the dev server, against which the batch is compared, and Clients
	// the number of its clients.
	Single  Result
	Clients int
	// Last is the batch as last read, and Waited how long after the
	// request it was read.
	Last   batchView
	Waited time.Duration
}

// Rate returns the items per second of a phase of d, 0 when d is not
// positive.
func (b BulkResult) Rate(d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(b.Items) / d.Seconds()
}

// Times returns rate over the single path's accepted payouts per second,
// 0 when the single path accepted nothing.
func (b BulkResult) Times(rate float64) float64 {
	if s := b.Single.PerSecond(); s > 0 {
		return rate / s
	}
	return 0
}

// writeBulkTable prints the bulk scenario's table as Markdown and the
// lines saying whether its targets are met.
func writeBulkTable(w io.Writer, b BulkResult) {
	single := b.Single.PerSecond()
	fmt.Fprintf(w, "| %d items, one wallet | seconds | items/s | single payouts/s | ratio |\n", b.Items)
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
	row := func(name string, d time.Duration) {
		if d <= 0 {
			fmt.Fprintf(w, "| %s | not within %.0f s | - | %.0f | - |\n", name, b.Waited.Seconds(), single)
			return
		}
		r := b.Rate(d)
		fmt.Fprintf(w, "| %s | %.2f | %.0f | %.0f | %.1f× |\n", name, d.Seconds(), r, single, b.Times(r))
	}
	row("202: all reserved (reservations)", b.Accepted)
	row("all reserved as payouts (payouts written)", b.Written)
	row("COMPLETED (every item final)", b.Completed)
	c := b.Last.Counts
	fmt.Fprintf(w, "\n(single payouts/s: %s, %d clients. The batch after %.0f s: %s; pending %d, processing %d, success %d, failed %d.)\n\n",
		b.Single.Name, b.Clients, b.Waited.Seconds(), b.Last.Status, c["pending"], c["processing"], c["success"], c["failed"])
	fmt.Fprintf(w, "Target 202 <= %s: %s (%.2f s).\n", secs(BulkAcceptTarget), verdict(b.Accepted > 0 && b.Accepted <= BulkAcceptTarget), b.Accepted.Seconds())
	fmt.Fprintf(w, "Target all reserved as payouts <= %s: %s (%.2f s).\n", secs(BulkWrittenTarget), verdict(b.Written > 0 && b.Written <= BulkWrittenTarget), b.Written.Seconds())
	for _, p := range []struct {
		name string
		d    time.Duration
	}{{"reservations/s", b.Accepted}, {"payouts written/s", b.Written}} {
		t := b.Times(b.Rate(p.d))
		fmt.Fprintf(w, "Target %s >= %.0f× the single path: %s (%.1f×).\n", p.name, BulkRatioTarget, verdict(t >= BulkRatioTarget), t)
	}
}

// secs formats d in whole seconds.
func secs(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
}

// bulkScenario sends one batch of o.bulkItems payouts on one wallet to a
// fresh deployment whose payout worker runs, measures how long the
// batch takes to be accepted, written and completed, and prints the table
// against single, the single payout path's scenario on one wallet
// (measured here when single accepted nothing).
func bulkScenario(ctx context.Context, tpl *samtemplate.Template, ep endpoints, o options, single Result, out io.Writer) error {
	if single.Accepted == 0 {
		d, err := deploy(ctx, tpl, ep)
		if err != nil {
			return err
		}
		ws, err := d.setUp(ctx, 1)
		if err != nil {
			d.stop()
			return err
		}
		fmt.Fprintf(os.Stderr, "loadtest: bulk: the single payout path on 1 wallet, %d clients, %s…\n", o.clients, singleDuration)
		single = d.viaServer(ctx, ws, o.clients, singleDuration)
		single.Name = "(a) dev server, 1 wallet"
		d.stop()
	}
	d, err := deploy(ctx, tpl, ep, "payout-worker")
	if err != nil {
		return err
	}
	defer d.stop()
	ws, err := d.setUp(ctx, 1)
	if err != nil {
		return err
	}
	b, err := d.runBatch(ctx, ws[0], o.bulkItems, o.bulkWait)
	if err != nil {
		return err
	}
	b.Single, b.Clients = single, o.clients
	fmt.Fprintf(out, "\nBulk payouts: one batch of %d items of %d %s on one wallet, the payout worker running:\n\n", b.Items, payoutAmount, payoutCurrency)
	writeBulkTable(out, b)
	return nil
}

// bulkBody returns a JSON batch of n payouts of payoutAmount to numbers
// the sandbox pays (none ends in 000, 998 or 999), with external_ids
// unique to tag.
func bulkBody(n int, tag string) ([]byte, error) {
	type item struct {
		Operator    string `json:"operator"`
		Country     string `json:"country"`
		PhoneNumber string `json:"phone_number"`
		Amount      int    `json:"amount"`
		Currency    string `json:"currency"`
		ExternalID  string `json:"external_id"`
	}
	items := make([]item, n)
	for i := range items {
		items[i] = item{
			Operator: payoutOperator, Country: payoutCountry, PhoneNumber: fmt.Sprintf("23767%07d", 10*i+1),
			Amount: payoutAmount, Currency: payoutCurrency, ExternalID: fmt.Sprintf("loadtest-%s-%05d", tag, i),
		}
	}
	return json.Marshal(map[string]any{"items": items, "mode": "partial"})
}

// batchView is what the scenario reads of a batch.
type batchView struct {
	BatchID       string         `json:"batch_id"`
	Status        string         `json:"status"`
	AcceptedCount int            `json:"accepted_count"`
	RejectedCount int            `json:"rejected_count"`
	Counts        map[string]int `json:"counts"`
}

// runBatch sends the batch of n items from w, then reads its status every
// bulkPoll until it is COMPLETED or wait has passed since it was sent.
func (d *deployment) runBatch(ctx context.Context, w wallet, n int, wait time.Duration) (BulkResult, error) {
	body, err := bulkBody(n, strconv.FormatInt(time.Now().UnixNano(), 36))
	if err != nil {
		return BulkResult{}, err
	}
	fmt.Fprintf(os.Stderr, "loadtest: bulk: sending %d items (%d KB)…\n", n, len(body)>>10)
	r := BulkResult{Items: n}
	var bv batchView
	start := time.Now()
	if err := d.send(ctx, "POST", "/payment/payouts/bulk", bearer(w.token), "application/json", body, http.StatusAccepted, &bv); err != nil {
		return r, err
	}
	r.Accepted = time.Since(start)
	if bv.AcceptedCount != n {
		return r, fmt.Errorf("bulk: %d of %d items accepted, %d rejected", bv.AcceptedCount, n, bv.RejectedCount)
	}
	fmt.Fprintf(os.Stderr, "loadtest: bulk: 202 after %.2f s; waiting for the payouts (at most %s)…\n", r.Accepted.Seconds(), wait)
	path := "/payment/payouts/bulk/" + bv.BatchID
	last := time.Now()
	for bv.Status != batchCompleted {
		if time.Since(start) > wait {
			fmt.Fprintf(os.Stderr, "loadtest: bulk: still %s after %s: %v\n", bv.Status, wait, bv.Counts)
			break
		}
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case <-time.After(bulkPoll):
		}
		if err := d.send(ctx, "GET", path, bearer(w.token), "application/json", nil, http.StatusOK, &bv); err != nil {
			return r, err
		}
		now := time.Since(start)
		if bv.Status != batchAccepted && r.Written == 0 {
			r.Written = now
			fmt.Fprintf(os.Stderr, "loadtest: bulk: %s after %.2f s: %v\n", bv.Status, now.Seconds(), bv.Counts)
		}
		if bv.Status == batchCompleted {
			r.Completed = now
			fmt.Fprintf(os.Stderr, "loadtest: bulk: COMPLETED after %.2f s: %v\n", now.Seconds(), bv.Counts)
		} else if time.Since(last) >= 5*time.Second {
			last = time.Now()
			fmt.Fprintf(os.Stderr, "loadtest: bulk: %s after %.0f s: %v\n", bv.Status, now.Seconds(), bv.Counts)
		}
	}
	r.Last, r.Waited = bv, time.Since(start)
	return r, nil
}
