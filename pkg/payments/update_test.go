package payments_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"

	"payments/pkg/payments"
	"payments/pkg/providers/operator"
	"payments/pkg/wallets"
)

// update queues the operator's final answer about p on the harness's
// payouts queue, as the callbacks function does, and returns its message.
func (h *harness) update(p payments.Payment, k operator.Kind, res operator.Result) job {
	h.t.Helper()
	q := &jobQueue{}
	if err := payments.QueueUpdate(h.ctx, q, p.CompanyID, p.ID, k, res); err != nil {
		h.t.Fatal(err)
	}
	j, _ := q.take()
	return j
}

// TestOperatorUpdates applies operators' callbacks through the worker: a
// final answer pushed before the poll settles the payment at once and the
// poll's message is then dropped; pushed after the poll it changes nothing;
// pushed while polls run on the same payment it is applied once. A FAILED
// payout is refunded once. Balances, ledger and events are checked after
// each.
func TestOperatorUpdates(t *testing.T) {
	t.Parallel()
	succeeded := operator.Result{State: operator.Succeeded, OrderID: "ORD-1", Raw: json.RawMessage(`{"status":"COMPLETED"}`)}
	failed := operator.Result{State: operator.Failed, OrderID: "ORD-1", Reason: "recipient account not found", Raw: json.RawMessage(`{"status":"FAILED"}`)}
	tests := []struct {
		name  string
		phone string // the sandbox's own outcome, which the poll sees
		res   operator.Result
		order string // "callback", "poll", "race"
		want  payments.Status
	}{
		{"callback before poll", "237670000999", succeeded, "callback", payments.StatusSuccess},
		{"failure before poll", "237670000999", failed, "callback", payments.StatusFailed},
		{"poll before callback", "237670000001", succeeded, "poll", payments.StatusSuccess},
		{"failed poll before callback", "237670000000", failed, "poll", payments.StatusFailed},
		{"callback racing polls", "237670000001", succeeded, "race", payments.StatusSuccess},
		{"failure racing polls", "237670000000", failed, "race", payments.StatusFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.fund(wallets.Payout, "1000")
			h.setFees(5, 0)
			p, err := h.svc.Payout(h.ctx, h.company, request(tt.phone, "10"))
			if err != nil {
				t.Fatal(err)
			}
			submit, _ := h.jobs.take()
			if err := h.svc.HandleJob(h.ctx, submit.body); err != nil { // PROCESSING
				t.Fatal(err)
			}
			poll, _ := h.jobs.take()
			cb := h.update(p, operator.Payout, tt.res)
			handle := func(j job) {
				if err := h.svc.HandleJob(h.ctx, j.body); err != nil {
					t.Error(err)
				}
			}
			switch tt.order {
			case "callback":
				handle(cb)
				if got := h.get(p.ID); got.Status != tt.want || got.OrderID != "ORD-1" {
					t.Fatalf("after the callback %+v", got)
				}
				h.clock.Advance(poll.delay)
				handle(poll) // stale: the payment is final
			case "poll":
				h.clock.Advance(poll.delay)
				handle(poll)
				handle(cb)
			case "race":
				h.clock.Advance(poll.delay)
				var wg sync.WaitGroup
				for range 3 {
					wg.Go(func() { handle(poll) })
					wg.Go(func() { handle(cb) })
				}
				wg.Wait()
			}
			handle(cb) // a second delivery of the callback
			if n := len(h.jobs.all()); n != 0 {
				t.Fatalf("%d messages left after a final status", n)
			}
			got := h.get(p.ID)
			if got.Status != tt.want || got.CompletedAt == nil {
				t.Fatalf("final %+v", got)
			}
			want := []string{"PENDING", "PROCESSING", string(tt.want)}
			for i, s := range want {
				want[i] = "payment.payout.status_updated:" + s
			}
			if ev := h.events.statuses(t, p.ID); !slices.Equal(ev, want) {
				t.Fatalf("events %v, want %v", ev, want)
			}
			es := h.entries(p.ID)
			if tt.want == payments.StatusFailed {
				if b := h.balances(); b != [4]int64{1000, 0, 1000, 0} || len(es[wallets.TypeRefund]) != 1 {
					t.Fatalf("balances %v, refunds %v", b, es[wallets.TypeRefund])
				}
			} else if b := h.balances(); b != [4]int64{985, 0, 985, 0} || len(es[wallets.TypeRefund]) != 0 {
				t.Fatalf("balances %v, refunds %v", b, es[wallets.TypeRefund])
			}
			h.verify()
		})
	}
}

// TestOperatorUpdateOfAnotherKind drops a callback whose kind is not the
// payment's (a deposit's answer naming a payout): the payout stays
// PROCESSING, its money reserved.
func TestOperatorUpdateOfAnotherKind(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fund(wallets.Payout, "1000")
	p, err := h.svc.Payout(h.ctx, h.company, request("237670000999", "10"))
	if err != nil {
		t.Fatal(err)
	}
	submit, _ := h.jobs.take()
	if err := h.svc.HandleJob(h.ctx, submit.body); err != nil {
		t.Fatal(err)
	}
	cb := h.update(p, operator.Collection, operator.Result{State: operator.Failed, Reason: "payer not found"})
	if err := h.svc.HandleJob(h.ctx, cb.body); err != nil {
		t.Fatal(err)
	}
	if got := h.get(p.ID); got.Status != payments.StatusProcessing {
		t.Fatalf("status %s", got.Status)
	}
	if b := h.balances(); b != [4]int64{1000, 10, 990, 0} {
		t.Fatalf("balances %v", b)
	}
	h.verify()
}

// TestQueueUpdateRefusesANonFinalState: only a final answer is queued.
func TestQueueUpdateRefusesANonFinalState(t *testing.T) {
	t.Parallel()
	q := &jobQueue{}
	err := payments.QueueUpdate(t.Context(), q, "0196a0c2-7b3e-7d41-9c55-2f1e8a9b0c1d", "0196a0c2-7b3e-7d41-9c55-2f1e8a9b0c1e",
		operator.Payout, operator.Result{State: operator.Processing})
	if err == nil || len(q.all()) != 0 {
		t.Fatalf("queued a PROCESSING update: %v, %d messages", err, len(q.all()))
	}
}

// staleRead is a payments store whose first read of a payment answers a
// copy taken earlier: the read of a worker that loses its race with
// another's write.
type staleRead struct {
	payments.Store
	mu    sync.Mutex
	stale *payments.Payment
}

func (s *staleRead) GetPayment(ctx context.Context, companyID, id string) (payments.Payment, error) {
	s.mu.Lock()
	stale := s.stale
	s.stale = nil
	s.mu.Unlock()
	if stale != nil {
		return *stale, nil
	}
	return s.Store.GetPayment(ctx, companyID, id)
}

// TestOperatorUpdateRacingTheSubmission: a callback read the payment still
// PENDING while the worker's submission moved it to PROCESSING; the update
// loses that race, reads the payment again and settles it, once.
func TestOperatorUpdateRacingTheSubmission(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fund(wallets.Payout, "1000")
	p, err := h.svc.Payout(h.ctx, h.company, request("237670000999", "10"))
	if err != nil {
		t.Fatal(err)
	}
	pending := h.get(p.ID)
	submit, _ := h.jobs.take()
	if err := h.svc.HandleJob(h.ctx, submit.body); err != nil { // PROCESSING
		t.Fatal(err)
	}
	late := h.newService(&staleRead{Store: h.store, stale: &pending})
	cb := h.update(p, operator.Payout, operator.Result{State: operator.Succeeded, OrderID: "ORD-1"})
	if err := late.HandleJob(h.ctx, cb.body); err != nil {
		t.Fatal(err)
	}
	if got := h.get(p.ID); got.Status != payments.StatusSuccess {
		t.Fatalf("status %s after the update lost its race", got.Status)
	}
	want := []string{"payment.payout.status_updated:PENDING", "payment.payout.status_updated:PROCESSING", "payment.payout.status_updated:SUCCESS"}
	if ev := h.events.statuses(t, p.ID); !slices.Equal(ev, want) {
		t.Fatalf("events %v, want %v", ev, want)
	}
	h.verify()
}
