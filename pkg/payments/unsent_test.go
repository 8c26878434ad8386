package payments_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"payments/pkg/payments"
	"payments/pkg/wallets"
)

// TestUnsentPaymentsAreSentOrFailed: a payment whose submit message comes
// late (a backlog, or a message lost and resent by the sweeper) is sent
// when the message comes before the deadline; after it, a payment never
// sent to the operator is failed with NotSentMessage and a payout's
// reservation released, once, while one the operator may have (the worker
// recorded a submission: the operator was down) waits for reconciliation
// with its funds reserved.
func TestUnsentPaymentsAreSentOrFailed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		collection bool
		// late is how long after acceptance the submit message is handled.
		late time.Duration
		// downFirst: the first submission meets an operator that cannot be
		// reached, so the payment is recorded as submitted.
		downFirst bool
		// lost: the submit message is never sent; the sweeper resends it.
		lost    bool
		status  payments.Status
		flagged bool
		// balances: payout_balance, payout_reserved, payout_available,
		// payin_balance once handled.
		balances [4]int64
		submits  int
		events   []string
	}{
		{
			name: "payout late, before the deadline: sent", late: payments.DefaultDeadline - time.Minute,
			status: payments.StatusSuccess, balances: [4]int64{985, 0, 985, 0}, submits: 1,
			events: []string{"PENDING", "PROCESSING", "SUCCESS"},
		},
		{
			name: "payout after the deadline, never sent: failed and refunded", late: payments.DefaultDeadline + time.Second,
			status: payments.StatusFailed, balances: [4]int64{1000, 0, 1000, 0},
			events: []string{"PENDING", "FAILED"},
		},
		{
			name: "collection after the deadline, never sent: failed", collection: true, late: payments.DefaultDeadline + time.Second,
			status: payments.StatusFailed, balances: [4]int64{1000, 0, 1000, 0},
			events: []string{"PENDING", "FAILED"},
		},
		{
			// The acceptance's event rode the lost message: the outbox
			// sweep publishes it, not this service.
			name: "payout message lost, resent by the sweeper after the deadline: failed", lost: true, late: payments.DefaultDeadline,
			status: payments.StatusFailed, balances: [4]int64{1000, 0, 1000, 0},
			events: []string{"FAILED"},
		},
		{
			name: "payout the operator may have (submission recorded): flagged, reserved", downFirst: true, late: payments.DefaultDeadline + time.Second,
			status: payments.StatusPending, flagged: true, balances: [4]int64{1000, 15, 985, 0}, submits: 1,
			events: []string{"PENDING"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.fund(wallets.Payout, "1000")
			h.setFees(5, 5)
			accept := h.svc.Payout
			if tt.collection {
				accept = h.svc.Collect
			}
			h.jobs.setFail(tt.lost)
			p, err := accept(h.ctx, h.company, request("237670000001", "10"))
			if err != nil {
				t.Fatal(err)
			}
			h.jobs.setFail(false)
			if got := h.get(p.ID); got.Submission != payments.NotSubmitted {
				t.Fatalf("accepted as %q, want %q", got.Submission, payments.NotSubmitted)
			}
			if tt.downFirst {
				h.gateway.set(true, false)
				h.drainFor(0) // the first try meets the operator down
				h.gateway.set(false, false)
				if got := h.get(p.ID); got.Submission != payments.Submitting || got.Status != payments.StatusPending {
					t.Fatalf("after a submission that failed: %+v", got)
				}
			}
			h.clock.Advance(tt.late)
			if tt.lost {
				if n, err := h.svc.Sweep(h.ctx); err != nil || n != 1 {
					t.Fatalf("Sweep = %d, %v", n, err)
				}
			}
			h.drainFor(time.Minute)
			got := h.get(p.ID)
			if got.Status != tt.status || got.ReconciliationRequired != tt.flagged {
				t.Fatalf("handled %v after acceptance: %+v", tt.late, got)
			}
			if tt.status == payments.StatusFailed && (got.ErrorMessage != payments.NotSentMessage || got.Submission != payments.NotSubmitted) {
				t.Fatalf("failed with %q, submission %q", got.ErrorMessage, got.Submission)
			}
			if h.gateway.submits != tt.submits {
				t.Fatalf("%d submissions to the operator, want %d", h.gateway.submits, tt.submits)
			}
			want := tt.balances
			if tt.collection {
				want = [4]int64{1000, 0, 1000, 0}
			}
			if b := h.balances(); b != want {
				t.Fatalf("balances %v, want %v", b, want)
			}
			refunds := h.entries(p.ID)[wallets.TypeRefund]
			if wantRefunds := tt.status == payments.StatusFailed && !tt.collection; wantRefunds != (len(refunds) == 1) || len(refunds) > 1 {
				t.Fatalf("refunds %+v", refunds)
			}
			var statuses []string
			for _, e := range h.events.statuses(t, p.ID) {
				_, status, _ := strings.Cut(e, ":")
				statuses = append(statuses, status)
			}
			if !slices.Equal(statuses, tt.events) {
				t.Fatalf("events %v, want %v", statuses, tt.events)
			}
			// The next poll, the sweeper or another copy change nothing.
			if _, err := h.svc.Sweep(h.ctx); err != nil {
				t.Fatal(err)
			}
			h.drainFor(payments.MaxPollDelay + time.Minute)
			if again := h.get(p.ID); again.Status != got.Status || h.balances() != want {
				t.Fatalf("changed again: %+v, %v", again, h.balances())
			}
			h.verify()
		})
	}
}
