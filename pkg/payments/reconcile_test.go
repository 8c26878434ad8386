package payments_test

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/field"
	"payments/pkg/metrics"
	"payments/pkg/payments"
	"payments/pkg/store/moneystore"
	"payments/pkg/store/schema"
	"payments/pkg/timestamp"
	"payments/pkg/wallets"
)

// TestNoRefundWithoutADefinitiveAnswer: a payout the operator has not
// finished by the deadline, or that cannot be asked, is never failed for
// it. It stays non-final with its funds reserved, flagged for
// reconciliation, and is polled at the longest delay; a definitive answer
// that comes later is applied: a late SUCCESS settles, never refunds.
func TestNoRefundWithoutADefinitiveAnswer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		phone string // decides the sandbox operator's answer
		// down: the operator cannot be reached from acceptance on;
		// downAfterSubmit: from right after the submission; lostAnswer:
		// submissions reach it but their answers are lost.
		down, downAfterSubmit, lostAnswer bool
		// status is the payment's while flagged ("" when the deadline's
		// lookup finds a final answer); final is the status once the
		// operator is reachable again ("" when it never answers).
		status, final payments.Status
	}{
		{"operator keeps processing (999)", "237670000999", false, false, false, payments.StatusProcessing, ""},
		{"operator unreachable after accepting (998)", "237670000998", false, false, false, payments.StatusProcessing, ""},
		{"operator down at the deadline, then reports SUCCESS", "237670000001", false, true, false, payments.StatusProcessing, payments.StatusSuccess},
		{"operator down until after the deadline, never submitted", "237670000001", true, false, false, payments.StatusPending, ""},
		{"submission's answer lost, found by our reference", "237670000001", false, false, true, "", payments.StatusSuccess},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			var emf bytes.Buffer
			h.ctx = metrics.NewContext(h.ctx, metrics.New(&emf, "payments/test", "payout-worker"))
			h.fund(wallets.Payout, "1000")
			h.setFees(5, 0)
			p, err := h.svc.Payout(h.ctx, h.company, request(tt.phone, "10"))
			if err != nil {
				t.Fatal(err)
			}
			h.gateway.set(tt.down, tt.lostAnswer)
			if tt.downAfterSubmit {
				h.drainFor(time.Second) // submitted: PROCESSING
				h.gateway.set(true, false)
			}
			h.drain() // past the deadline
			got := h.get(p.ID)
			if tt.status == "" { // found by the lookup at the deadline
				if got.Status != tt.final || got.ReconciliationRequired {
					t.Fatalf("after the deadline %+v", got)
				}
				if b := h.balances(); b != [4]int64{985, 0, 985, 0} {
					t.Fatalf("balances %v", b)
				}
				h.verify()
				return
			}
			if got.Status != tt.status || !got.ReconciliationRequired || got.ErrorMessage != "" {
				t.Fatalf("after the deadline %+v", got)
			}
			// Counted once when flagged; counted by the sweeper's measure once
			// accepted over an hour before.
			if n := strings.Count(emf.String(), `"PayoutsToReconciliation":1`); n != 1 {
				t.Fatalf("PayoutsToReconciliation counted %d times, want once", n)
			}
			for _, c := range []struct {
				cutoff time.Time
				want   int
			}{{p.CreatedAt, 0}, {p.CreatedAt.Add(time.Millisecond), 1}} {
				if n, err := h.svc.FlaggedBefore(h.ctx, c.cutoff, 10); err != nil || n != c.want {
					t.Fatalf("FlaggedBefore(accepted at %v, cutoff %v) = %d, %v; want %d", p.CreatedAt, c.cutoff, n, err, c.want)
				}
			}
			if b := h.balances(); b != [4]int64{1000, 15, 985, 0} {
				t.Fatalf("balances after the deadline %v: the funds must stay reserved", b)
			}
			if refunds := h.entries(p.ID)[wallets.TypeRefund]; len(refunds) != 0 {
				t.Fatalf("refunded without a definitive answer: %+v", refunds)
			}
			if d := got.NextPollAt.Sub(h.clock.Now()); d > payments.MaxPollDelay || d < payments.MaxPollDelay-time.Minute {
				t.Fatalf("next poll in %v, want about %v", d, payments.MaxPollDelay)
			}
			h.verify()
			h.gateway.set(false, false) // the operator is reachable again
			submits := h.gateway.submits
			if tt.final != "" {
				h.drainFor(payments.MaxPollDelay)
				got := h.get(p.ID)
				if got.Status != tt.final || got.ReconciliationRequired {
					t.Fatalf("after the late answer %+v", got)
				}
				if b := h.balances(); b != [4]int64{985, 0, 985, 0} {
					t.Fatalf("balances after the late SUCCESS %v", b)
				}
				if refunds := h.entries(p.ID)[wallets.TypeRefund]; len(refunds) != 0 {
					t.Fatalf("a late SUCCESS refunded: %+v", refunds)
				}
				h.verify()
				return
			}
			// Polled until ReconcileWindow after acceptance (the clock jumps
			// over most of the polls), then left to the console, still
			// reserved.
			h.drainFor(2 * time.Hour)
			h.clock.Advance(payments.ReconcileWindow - 4*time.Hour)
			h.drainFor(payments.ReconcileWindow)
			got = h.get(p.ID)
			if got.Status != tt.status || !got.ReconciliationRequired || !got.NextPollAt.IsZero() || len(h.jobs.all()) != 0 {
				t.Fatalf("after the window %+v, %d jobs", got, len(h.jobs.all()))
			}
			if h.clock.Now().Sub(p.CreatedAt) > payments.ReconcileWindow+time.Second {
				t.Fatalf("polled until %v after acceptance", h.clock.Now().Sub(p.CreatedAt))
			}
			if h.gateway.submits != submits {
				t.Fatalf("submitted after the deadline")
			}
			if b := h.balances(); b != [4]int64{1000, 15, 985, 0} {
				t.Fatalf("balances after the window %v", b)
			}
			h.verify()
		})
	}
}

// TestDoubleCheckNeverFailsByTime asks for the status with doubleCheck long
// after the deadline of a payout the operator has not finished: nothing
// changes.
func TestDoubleCheckNeverFailsByTime(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fund(wallets.Payout, "1000")
	p, err := h.svc.Payout(h.ctx, h.company, request("237670000999", "100"))
	if err != nil {
		t.Fatal(err)
	}
	h.drainFor(time.Second)
	h.jobs.jobs = nil // whatever the worker would do
	h.clock.Advance(2 * time.Hour)
	got, raw, err := h.svc.Status(h.ctx, h.company, p.ID, true)
	if err != nil || got.Status != payments.StatusProcessing || len(raw) == 0 {
		t.Fatalf("Status = %+v, %s, %v", got, raw, err)
	}
	if b := h.balances(); b != [4]int64{1000, 102, 898, 0} {
		t.Fatalf("balances %v", b)
	}
	h.verify()
}

// TestSweeperResumesLostMessages drops every message the worker sends:
// the sweeper resumes each payment whose message is more than a minute
// late, and a payout whose polls are all lost still settles within two
// sweeper runs of each loss; copies of a message that was only late are
// dropped.
func TestSweeperResumesLostMessages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		phone  string
		status payments.Status
		payout int64
	}{
		{"settles", "237670000001", payments.StatusSuccess, 898},
		{"fails, refunds once", "237670000000", payments.StatusFailed, 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.fund(wallets.Payout, "1000")
			h.jobs.setFail(true) // the submit message is never sent
			p, err := h.svc.Payout(h.ctx, h.company, request(tt.phone, "100"))
			if err != nil {
				t.Fatalf("acceptance must not depend on the queue: %v", err)
			}
			h.jobs.setFail(false)
			if n, err := h.svc.Sweep(h.ctx); err != nil || n != 0 {
				t.Fatalf("a fresh payment is resumed: %d %v", n, err)
			}
			sweeps := 0
			for !h.get(p.ID).Status.Terminal() {
				if sweeps == 4 {
					t.Fatalf("not final after %d sweeper runs: %+v", sweeps, h.get(p.ID))
				}
				h.clock.Advance(time.Minute) // the sweeper runs every minute
				n, err := h.svc.Sweep(h.ctx)
				if err != nil {
					t.Fatal(err)
				}
				sweeps++
				if n > 0 {
					// The resumed message runs; what it sends is lost.
					j, _ := h.jobs.take()
					if err := h.svc.HandleJob(h.ctx, j.body); err != nil {
						t.Fatal(err)
					}
					h.jobs.jobs = nil
					h.clock.Advance(payments.PollInterval)
				}
			}
			if sweeps > 4 {
				t.Fatalf("%d sweeper runs: each lost message must be resumed by the next two", sweeps)
			}
			got := h.get(p.ID)
			if got.Status != tt.status {
				t.Fatalf("final %+v", got)
			}
			if b := h.balances(); b != [4]int64{tt.payout, 0, tt.payout, 0} {
				t.Fatalf("balances %v", b)
			}
			if n, err := h.svc.Sweep(h.ctx); err != nil || n != 0 {
				t.Fatalf("sweep after the end: %d %v", n, err)
			}
			if refunds := h.entries(p.ID)[wallets.TypeRefund]; (tt.status == payments.StatusFailed) != (len(refunds) == 1) || len(refunds) > 1 {
				t.Fatalf("refunds %+v", refunds)
			}
			h.verify()
		})
	}
}

// TestStaleMessageIsDropped: a message the payment no longer expects (a
// late copy, or one the sweeper replaced) does nothing, not even ask the
// operator.
func TestStaleMessageIsDropped(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fund(wallets.Payout, "1000")
	if _, err := h.svc.Payout(h.ctx, h.company, request("237670000999", "100")); err != nil {
		t.Fatal(err)
	}
	submit, _ := h.jobs.take()
	if err := h.svc.HandleJob(h.ctx, submit.body); err != nil {
		t.Fatal(err)
	}
	poll, _ := h.jobs.take()
	h.clock.Advance(poll.delay)
	if err := h.svc.HandleJob(h.ctx, poll.body); err != nil {
		t.Fatal(err)
	}
	queries, submits := h.gateway.queries, h.gateway.submits
	for _, stale := range [][]byte{submit.body, poll.body} {
		if err := h.svc.HandleJob(h.ctx, stale); err != nil {
			t.Fatal(err)
		}
	}
	if h.gateway.queries != queries || h.gateway.submits != submits || len(h.jobs.all()) != 1 {
		t.Fatalf("stale messages asked the operator (%d→%d queries, %d→%d submits) or queued %d",
			queries, h.gateway.queries, submits, h.gateway.submits, len(h.jobs.all()))
	}
}

// flagged returns a payout of 100 (fee 2) to phone, accepted and run past
// its deadline so that it is flagged for reconciliation.
func flagged(t *testing.T, h *harness, phone string) payments.Payment {
	t.Helper()
	p, err := h.svc.Payout(h.ctx, h.company, request(phone, "100"))
	if err != nil {
		t.Fatal(err)
	}
	h.drain()
	if got := h.get(p.ID); !got.ReconciliationRequired {
		t.Fatalf("not flagged: %+v", got)
	}
	return h.get(p.ID)
}

// TestConsoleResolve settles or refunds a flagged payout exactly once,
// records who and why, and emits the status update; anything else is
// refused.
func TestConsoleResolve(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status   payments.Status
		balances [4]int64
		entry    wallets.Status
		refunds  int
		message  string
	}{
		{payments.StatusFailed, [4]int64{1000, 0, 1000, 0}, wallets.StatusFailed, 1, payments.ResolvedFailedMessage},
		{payments.StatusSuccess, [4]int64{898, 0, 898, 0}, wallets.StatusSuccess, 0, ""},
	}
	for _, tt := range tests {
		t.Run(string(tt.status), func(t *testing.T) {
			h := newHarness(t)
			h.fund(wallets.Payout, "1000")
			p := flagged(t, h, "237670000998")
			list, next, err := h.svc.Flagged(h.ctx, "", 10)
			if err != nil || len(list) != 1 || list[0].ID != p.ID || next != "" {
				t.Fatalf("Flagged = %v, %q, %v", list, next, err)
			}
			in := payments.ResolveInput{Status: tt.status, Note: "operator statement of 2026-11-23", By: "arn:aws:iam::1:user/ops"}
			var emf bytes.Buffer
			ctx := metrics.NewContext(h.ctx, metrics.New(metrics.SyncWriter(&emf), "payments/test", "admin"))
			var wg sync.WaitGroup
			errs := make([]error, 5)
			for i := range errs {
				wg.Go(func() { _, errs[i] = h.svc.Resolve(ctx, p.ID, in) })
			}
			wg.Wait()
			final := map[payments.Status]string{payments.StatusSuccess: `"PayoutsSettled":1`, payments.StatusFailed: `"PayoutsFailed":1`}
			// Once, whatever the races between the five (ConflictsRetried).
			if n, all := strings.Count(emf.String(), final[tt.status]), strings.Count(emf.String(), "Payouts"); n != 1 || all != 2 {
				t.Errorf("the resolution counted %d times as %s, %d payout metrics in all (want 1, named twice in its line): %s", n, tt.status, all, emf.String())
			}
			ok := 0
			for _, err := range errs {
				switch {
				case err == nil:
					ok++
				case !errors.Is(err, payments.ErrFinal):
					t.Fatalf("Resolve: %v", err)
				}
			}
			if ok != 1 {
				t.Fatalf("%d resolutions succeeded, want 1", ok)
			}
			got := h.get(p.ID)
			r := got.Resolution
			if got.Status != tt.status || got.ReconciliationRequired || got.ErrorMessage != tt.message ||
				r == nil || r.By != in.By || r.Note != in.Note || r.Status != tt.status || !r.At.Equal(h.clock.Now()) {
				t.Fatalf("resolved %+v, resolution %+v", got, r)
			}
			if b := h.balances(); b != tt.balances {
				t.Fatalf("balances %v, want %v", b, tt.balances)
			}
			es := h.entries(p.ID)
			if len(es[wallets.TypeRefund]) != tt.refunds || es[wallets.TypeWithdraw][0].Status != tt.entry {
				t.Fatalf("entries %+v", es)
			}
			want := []string{"payment.payout.status_updated:PENDING", "payment.payout.status_updated:PROCESSING",
				"payment.payout.status_updated:" + string(tt.status)}
			if evs := h.events.statuses(t, p.ID); !slices.Equal(evs, want) {
				t.Fatalf("events %v, want %v", evs, want)
			}
			if _, err := h.svc.Resolve(h.ctx, p.ID, in); !errors.Is(err, payments.ErrFinal) {
				t.Fatalf("resolving again: %v", err)
			}
			if list, _, _ := h.svc.Flagged(h.ctx, "", 10); len(list) != 0 {
				t.Fatalf("still listed: %v", list)
			}
			h.verify()
		})
	}
}

func TestConsoleResolveRefusals(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fund(wallets.Payout, "1000")
	f := flagged(t, h, "237670000998")
	running, err := h.svc.Payout(h.ctx, h.company, request("237670000999", "100"))
	if err != nil {
		t.Fatal(err)
	}
	ok := payments.ResolveInput{Status: payments.StatusFailed, Note: "checked with the operator"}
	tests := []struct {
		name  string
		id    string
		in    payments.ResolveInput
		want  error
		field string
	}{
		{"bad status", f.ID, payments.ResolveInput{Status: "PENDING", Note: "x"}, nil, "status"},
		{"no note", f.ID, payments.ResolveInput{Status: payments.StatusFailed, Note: "  "}, nil, "note"},
		{"unknown", "0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b", ok, payments.ErrNotFound, ""},
		{"not an id", schema.PaymentSK("x"), ok, payments.ErrNotFound, ""},
		{"not flagged: the worker is on it", running.ID, ok, payments.ErrNotFlagged, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := h.svc.Resolve(h.ctx, tt.id, tt.in)
			var fe *field.Error
			if tt.field != "" && (!errors.As(err, &fe) || fe.Field != tt.field) || tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("err %v, want %v / field %q", err, tt.want, tt.field)
			}
		})
	}
	if b := h.balances(); b[1] != 204 {
		t.Fatalf("reserved %d: nothing may move", b[1])
	}
	h.verify()
}

// TestWindowEndsFlagged: with a deadline as long as the reconciliation
// window (a longer one is cut to it), a payout the operator never finishes
// is flagged when the worker stops, so the console lists and resolves it.
func TestWindowEndsFlagged(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fund(wallets.Payout, "1000")
	svc, err := payments.NewService(payments.Deps{
		Store: h.store, Wallets: moneystore.NewWallets(h.db), Fees: h.fees, Gateway: h.gateway, Jobs: h.jobs, BulkJobs: h.jobs, Events: h.events,
		Deadline: 80 * time.Hour, Batches: noBatches{}, Now: h.clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	h.svc = svc
	p, err := h.svc.Payout(h.ctx, h.company, request("237670000999", "100"))
	if err != nil {
		t.Fatal(err)
	}
	h.drainFor(time.Hour)
	if got := h.get(p.ID); got.ReconciliationRequired {
		t.Fatalf("flagged an hour in: %+v", got)
	}
	h.clock.Advance(payments.ReconcileWindow - 2*time.Hour)
	h.drainFor(payments.ReconcileWindow)
	got := h.get(p.ID)
	if got.Status != payments.StatusProcessing || !got.ReconciliationRequired || !got.NextPollAt.IsZero() || len(h.jobs.all()) != 0 {
		t.Fatalf("after the window %+v, %d jobs", got, len(h.jobs.all()))
	}
	if list, _, _ := h.svc.Flagged(h.ctx, "", 10); len(list) != 1 {
		t.Fatalf("the console lists %d", len(list))
	}
	h.verify()
}

// TestSweeperAdoptsPaymentsFromBeforeNextPollAt: a payout written before
// payments recorded their next poll (no next_poll_at, in the unsharded
// OPEN_PAYMENT partition, no id lookup) whose queued message no longer
// parses is adopted by the sweeper and settles; the console can find it.
func TestSweeperAdoptsPaymentsFromBeforeNextPollAt(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fund(wallets.Payout, "1000")
	p, err := h.svc.Payout(h.ctx, h.company, request("237670000001", "100"))
	if err != nil {
		t.Fatal(err)
	}
	h.jobs.jobs = nil
	key := func(pk, sk string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: sk}}
	}
	if _, err := h.db.Client.UpdateItem(h.ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(h.db.Table), Key: key(schema.CompanyPK(h.company), schema.PaymentSK(p.ID)),
		UpdateExpression: aws.String("SET GSI2PK = :pk, GSI2SK = :sk REMOVE next_poll_at"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: schema.OpenPaymentIndex},
			":sk": &types.AttributeValueMemberS{Value: timestamp.Format(p.CreatedAt) + "#" + h.company + "#" + p.ID},
		},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.db.Client.DeleteItem(h.ctx, &dynamodb.DeleteItemInput{TableName: aws.String(h.db.Table), Key: key(schema.PaymentRefPK(p.ID), schema.PaymentRefSK)}); err != nil {
		t.Fatal(err)
	}
	if err := h.svc.HandleJob(h.ctx, []byte(`{"kind":"submit","company_id":"`+h.company+`","transaction_id":"`+p.ID+`"}`)); err != nil {
		t.Fatal(err) // the old message is dropped
	}
	h.clock.Advance(2 * time.Minute)
	if n, err := h.svc.Sweep(h.ctx); err != nil || n != 1 {
		t.Fatalf("Sweep = %d, %v; want the payment adopted", n, err)
	}
	h.drain()
	if got := h.get(p.ID); got.Status != payments.StatusSuccess {
		t.Fatalf("final %+v", got)
	}
	if _, err := h.store.PaymentByID(h.ctx, p.ID); err != nil {
		t.Fatalf("PaymentByID after the adoption: %v", err)
	}
	h.verify()
}
