package payments_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"payments/pkg/fees"
	"payments/pkg/field"
	"payments/pkg/page"
	"payments/pkg/payments"
	"payments/pkg/providers/operator"
	"payments/pkg/providers/operator/operatorsandbox"
	"payments/pkg/store/moneystore"
	"payments/pkg/wallets"
)

// TestPayoutLifecycle runs one payout per sandbox outcome through the
// worker and checks the end state, the balances, the ledger and the events.
func TestPayoutLifecycle(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		phone    string
		status   payments.Status
		errMsg   string
		balances [4]int64 // payout, reserved, available, payin after
		events   []string
	}{
		{"success", "237670000001", payments.StatusSuccess, "", [4]int64{985, 0, 985, 0},
			[]string{"PENDING", "PROCESSING", "SUCCESS"}},
		{"recipient not found", "237670000000", payments.StatusFailed, operatorsandbox.NotFoundReason, [4]int64{1000, 0, 1000, 0},
			[]string{"PENDING", "PROCESSING", "FAILED"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.fund(wallets.Payout, "1000")
			h.setFees(5, 0)
			r := request(tt.phone, "10")
			r.NotifyURL = "https://merchant.example.com/notify"
			p, err := h.svc.Payout(h.ctx, h.company, r)
			if err != nil {
				t.Fatal(err)
			}
			if p.Status != payments.StatusPending || p.Amount != 10 || p.Fee != 5 || p.ExternalID != p.ID {
				t.Fatalf("accepted %+v", p)
			}
			if got := h.balances(); got != [4]int64{1000, 15, 985, 0} {
				t.Fatalf("balances while PENDING %v: reserved, not deducted", got)
			}
			h.verify()
			h.drain()
			got := h.get(p.ID)
			if got.Status != tt.status || got.ErrorMessage != tt.errMsg || got.CompletedAt == nil || got.OrderID == "" ||
				!got.NextPollAt.IsZero() || got.ReconciliationRequired {
				t.Fatalf("final %+v", got)
			}
			if b := h.balances(); b != tt.balances {
				t.Fatalf("balances %v, want %v", b, tt.balances)
			}
			es := h.entries(p.ID)
			withdraw := es[wallets.TypeWithdraw]
			if len(withdraw) != 1 || withdraw[0].Status != wallets.Status(tt.status) || withdraw[0].Reserved != 0 {
				t.Fatalf("WITHDRAW entries %+v", withdraw)
			}
			if tt.status == payments.StatusSuccess {
				w := withdraw[0]
				if w.Delta != -15 || *w.BalanceBefore != 1000 || *w.BalanceAfter != 985 || w.AmountWithFee != 15 || len(es[wallets.TypeRefund]) != 0 {
					t.Fatalf("settled entry %+v, refunds %v", w, es[wallets.TypeRefund])
				}
			} else if refunds := es[wallets.TypeRefund]; len(refunds) != 1 || refunds[0].Delta != 0 || refunds[0].AmountWithFee != 15 || refunds[0].Status != wallets.StatusSuccess {
				t.Fatalf("REFUND entries %+v", refunds)
			}
			var want []string
			for _, s := range tt.events {
				want = append(want, "payment.payout.status_updated:"+s)
			}
			if got := h.events.statuses(t, p.ID); !slices.Equal(got, want) {
				t.Fatalf("events %v, want %v", got, want)
			}
			if due, err := h.store.DuePayments(h.ctx, h.clock.Now().Add(time.Hour), 10); err != nil || len(due) != 0 {
				t.Fatalf("still due: %v %v", due, err)
			}
			h.verify()
		})
	}
}

// TestConcurrentPayoutsNeverOverspend sends 200 payouts of 10 (8 plus a
// fee of 2) at once against 500 available: exactly 50 are accepted, the
// other 150 are refused for the balance, and nothing goes negative.
func TestConcurrentPayoutsNeverOverspend(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fund(wallets.Payout, "500")
	h.setFees(2, 0)
	const n = 200
	var wg sync.WaitGroup
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			_, errs[i] = h.svc.Payout(h.ctx, h.company, request("237670000001", "8"))
		})
	}
	close(start)
	wg.Wait()
	accepted, refused := 0, 0
	for _, err := range errs {
		switch {
		case err == nil:
			accepted++
		case errors.Is(err, wallets.ErrInsufficientBalance):
			refused++
		default:
			t.Errorf("unexpected error: %v", err)
		}
	}
	if accepted != 50 || refused != 150 {
		t.Fatalf("accepted %d, refused %d; want 50 and 150", accepted, refused)
	}
	if b := h.balances(); b != [4]int64{500, 500, 0, 0} {
		t.Fatalf("balances %v", b)
	}
	h.verify()
	h.drainConcurrently(10)
	if b := h.balances(); b != [4]int64{0, 0, 0, 0} {
		t.Fatalf("balances after settling %v", b)
	}
	ps, err := h.svc.List(h.ctx, h.company, payments.Query{Status: payments.StatusSuccess}, page.Request{Page: 1, Limit: 100})
	if err != nil || len(ps.Items) != 50 || ps.Total != 50 {
		t.Fatalf("%d settled (total %d), %v", len(ps.Items), ps.Total, err)
	}
	h.verify()
}

// TestWorkerCannotQueueThePoll: the worker submits a payout but cannot
// queue its first poll, so it does not move it to PROCESSING (the poll is
// queued before the transition); SQS delivers the submit message again, the
// operator answers the retried submission with the same order, and the
// payout settles once.
func TestWorkerCannotQueueThePoll(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fund(wallets.Payout, "1000")
	p, err := h.svc.Payout(h.ctx, h.company, request("237670000001", "100"))
	if err != nil {
		t.Fatal(err)
	}
	submit, _ := h.jobs.take()
	h.jobs.setFail(true)
	if err := h.svc.HandleJob(h.ctx, submit.body); err == nil {
		t.Fatal("a lost poll was acknowledged")
	}
	if got := h.get(p.ID); got.Status != payments.StatusPending {
		t.Fatalf("status %s", got.Status)
	}
	h.jobs.setFail(false)
	if err := h.svc.HandleJob(h.ctx, submit.body); err != nil { // SQS delivers it again
		t.Fatal(err)
	}
	h.drain()
	got := h.get(p.ID)
	if got.Status != payments.StatusSuccess || got.OrderID != "SBX-"+p.ID {
		t.Fatalf("final %+v", got)
	}
	if b := h.balances(); b != [4]int64{898, 0, 898, 0} {
		t.Fatalf("balances %v", b)
	}
	// The submit message ran twice, so it published the acceptance's event
	// twice (harmless: the webhook worker delivers an event once per
	// destination); every transition happened, and emitted its event, once.
	want := []string{"payment.payout.status_updated:PENDING", "payment.payout.status_updated:PROCESSING", "payment.payout.status_updated:SUCCESS"}
	if evs := h.events.statuses(t, p.ID); !slices.Equal(slices.Compact(evs), want) || len(evs) != 4 {
		t.Fatalf("events %v", evs)
	}
	h.verify()
}

// TestConcurrentDuplicateExternalID sends 50 payouts with one external_id
// at once: exactly one is accepted.
func TestConcurrentDuplicateExternalID(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fund(wallets.Payout, "100000")
	var wg sync.WaitGroup
	errs := make([]error, 50)
	for i := range errs {
		wg.Go(func() {
			r := request("237670000001", "100")
			r.ExternalID = "order-42"
			_, errs[i] = h.svc.Payout(h.ctx, h.company, r)
		})
	}
	wg.Wait()
	accepted := 0
	for _, err := range errs {
		switch {
		case err == nil:
			accepted++
		case !errors.Is(err, payments.ErrDuplicateExternalID):
			t.Errorf("unexpected error: %v", err)
		}
	}
	if accepted != 1 {
		t.Fatalf("%d accepted, want 1", accepted)
	}
	if b := h.balances(); b[1] != 102 { // 100 + 1.5 % rounded half away from zero
		t.Fatalf("reserved %d, want one reservation of 102", b[1])
	}
	// The namespace is shared with collections.
	r := request("237670000001", "100")
	r.ExternalID = "order-42"
	if _, err := h.svc.Collect(h.ctx, h.company, r); !errors.Is(err, payments.ErrDuplicateExternalID) {
		t.Fatalf("collection with a payout's external_id: %v", err)
	}
	h.verify()
}

// TestDuplicateAndLateDeliveries delivers every job twice, in reverse
// order, and again after the end: each transition happens once and a
// failure refunds once.
func TestDuplicateAndLateDeliveries(t *testing.T) {
	t.Parallel()
	for _, phone := range []string{"237670000000", "237670000001"} {
		t.Run(phone, func(t *testing.T) {
			h := newHarness(t)
			h.fund(wallets.Payout, "1000")
			p, err := h.svc.Payout(h.ctx, h.company, request(phone, "100"))
			if err != nil {
				t.Fatal(err)
			}
			var seen [][]byte
			for range 10 {
				jobs := h.jobs.all()
				if len(jobs) == 0 {
					break
				}
				h.jobs.jobs = nil
				// Late and duplicate: every job seen so far again, newest
				// first, then the new ones twice.
				for _, b := range slices.Backward(seen) {
					if err := h.svc.HandleJob(h.ctx, b); err != nil {
						t.Fatal(err)
					}
				}
				for _, j := range jobs {
					h.clock.Advance(j.delay)
					seen = append(seen, j.body)
					for range 2 {
						if err := h.svc.HandleJob(h.ctx, j.body); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			got := h.get(p.ID)
			if !got.Status.Terminal() {
				t.Fatalf("status %s", got.Status)
			}
			es := h.entries(p.ID)
			wantRefunds := 0
			if got.Status == payments.StatusFailed {
				wantRefunds = 1
			}
			if len(es[wallets.TypeRefund]) != wantRefunds || len(es[wallets.TypeWithdraw]) != 1 {
				t.Fatalf("entries %+v", es)
			}
			if h.gateway.submits < 1 {
				t.Fatal("never submitted")
			}
			evs := h.events.statuses(t, p.ID)
			if len(evs) != 3 {
				t.Fatalf("events %v: one per transition", evs)
			}
			h.verify()
		})
	}
}

// TestRefundRunsOnce applies the FAILED outcome twice, concurrently and in
// sequence, through the status double check: the reservation is released
// once and one REFUND is written.
func TestRefundRunsOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fund(wallets.Payout, "1000")
	p, err := h.svc.Payout(h.ctx, h.company, request("237670000000", "100"))
	if err != nil {
		t.Fatal(err)
	}
	j, _ := h.jobs.take()
	if err := h.svc.HandleJob(h.ctx, j.body); err != nil { // submit: PROCESSING
		t.Fatal(err)
	}
	poll, _ := h.jobs.take()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if err := h.svc.HandleJob(h.ctx, poll.body); err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() {
			if _, _, err := h.svc.Status(h.ctx, h.company, p.ID, true); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if err := h.svc.HandleJob(h.ctx, poll.body); err != nil {
		t.Fatal(err)
	}
	if refunds := h.entries(p.ID)[wallets.TypeRefund]; len(refunds) != 1 {
		t.Fatalf("%d refunds", len(refunds))
	}
	if b := h.balances(); b != [4]int64{1000, 0, 1000, 0} {
		t.Fatalf("balances %v", b)
	}
	h.verify()
}

// TestPayoutRefusals checks the business refusals and their order.
func TestPayoutRefusals(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fund(wallets.Payout, "100")
	if _, err := h.svc.Payout(h.ctx, h.company, payments.Request{
		Operator: "mtn", Country: "CM", PhoneNumber: "237670000001", Amount: "10", Currency: "XAF", ExternalID: "taken",
	}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		edit func(*payments.Request)
		want error
	}{
		{"insufficient with the fee", func(r *payments.Request) { r.Amount = "90" }, wallets.ErrInsufficientBalance},
		{"exactly the available", func(r *payments.Request) { r.Amount = "89" }, nil},
		{"duplicate external_id", func(r *payments.Request) { r.ExternalID = "taken" }, payments.ErrDuplicateExternalID},
		{"duplicate wins over balance", func(r *payments.Request) { r.ExternalID = "taken"; r.Amount = "100000" }, payments.ErrDuplicateExternalID},
		{"no wallet", func(r *payments.Request) { r.Country, r.PhoneNumber, r.Currency = "SN", "221770000001", "XOF" }, payments.ErrNoWallet},
		{"no wallet before operator", func(r *payments.Request) {
			r.Country, r.PhoneNumber, r.Currency, r.Operator = "SN", "221770000001", "XOF", "mtn"
		}, payments.ErrNoWallet},
		{"operator unavailable", func(r *payments.Request) { r.Operator = "wave" }, fees.ErrOperatorUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := request("237670000001", "1")
			tt.edit(&r)
			_, err := h.svc.Payout(h.ctx, h.company, r)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err %v, want %v", err, tt.want)
			}
		})
	}
	if b := h.balances(); b[2] != 0 {
		t.Fatalf("available %d, want 0", b[2])
	}
	h.verify()
}

// TestValidation checks that each bad field is a 400 naming it.
func TestValidation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tests := []struct {
		field string
		edit  func(*payments.Request)
	}{
		{"operator", func(r *payments.Request) { r.Operator = "" }},
		{"operator", func(r *payments.Request) { r.Operator = "MTN" }},
		{"operator", func(r *payments.Request) { r.Operator = "paypal" }},
		{"country", func(r *payments.Request) { r.Country = "cm" }},
		{"country", func(r *payments.Request) { r.Country = "CMR" }},
		{"phone_number", func(r *payments.Request) { r.PhoneNumber = "+237670000001" }},
		{"phone_number", func(r *payments.Request) { r.PhoneNumber = "670000001" }},
		{"phone_number", func(r *payments.Request) { r.PhoneNumber = "2376700000012345" }},
		{"phone_number", func(r *payments.Request) { r.PhoneNumber = "237 67000000" }},
		{"currency", func(r *payments.Request) { r.Currency = "EUR" }},
		{"amount", func(r *payments.Request) { r.Amount = "" }},
		{"amount", func(r *payments.Request) { r.Amount = "0.5" }},
		{"amount", func(r *payments.Request) { r.Amount = "0" }},
		{"amount", func(r *payments.Request) { r.Amount = "-5" }},
		{"amount", func(r *payments.Request) { r.Amount = "10.5" }},
		{"external_id", func(r *payments.Request) { r.ExternalID = strings.Repeat("x", 256) }},
		{"external_id", func(r *payments.Request) { r.ExternalID = "é" }},
		{"notify_url", func(r *payments.Request) { r.NotifyURL = "http://merchant.example.com/n" }},
		{"notify_url", func(r *payments.Request) { r.NotifyURL = "/relative" }},
		{"notify_url", func(r *payments.Request) { r.NotifyURL = "https://user:pw@merchant.example.com" }},
		{"reference_id", func(r *payments.Request) { r.ReferenceID = strings.Repeat("é", 256) }},
		{"lang", func(r *payments.Request) { r.Lang = "FR" }},
		{"lang", func(r *payments.Request) { r.Lang = "fra" }},
		{"purpose", func(r *payments.Request) { r.Purpose = strings.Repeat("x", 256) }},
	}
	for i, tt := range tests {
		r := request("237670000001", "100")
		tt.edit(&r)
		t.Run(fmt.Sprintf("%d %s", i, tt.field), func(t *testing.T) {
			_, err := h.svc.Payout(h.ctx, h.company, r)
			var fe *field.Error
			if !errors.As(err, &fe) || fe.Field != tt.field {
				t.Fatalf("err %v, want a FieldError on %s", err, tt.field)
			}
		})
	}
	// A USD amount may have two decimals, an XAF one none.
	usd := request("237670000001", "1.25")
	usd.Currency = "USD"
	if _, err := h.svc.Payout(h.ctx, h.company, usd); !errors.Is(err, payments.ErrNoWallet) {
		t.Fatalf("USD 1.25: %v", err)
	}
}

// TestCollections runs a collection per sandbox outcome: SUCCESS credits
// payin_balance with amount − fee through a DEPOSIT entry; FAILED moves
// nothing.
func TestCollections(t *testing.T) {
	t.Parallel()
	tests := []struct {
		phone  string
		status payments.Status
		payin  int64
	}{
		{"237690000002", payments.StatusSuccess, 990},
		{"237690000000", payments.StatusFailed, 0},
	}
	for _, tt := range tests {
		t.Run(tt.phone, func(t *testing.T) {
			h := newHarness(t)
			h.setFees(0, 10)
			r := request(tt.phone, "1000")
			r.Operator, r.Reason, r.Purpose = "orange", "Order 7", "Online order"
			p, err := h.svc.Collect(h.ctx, h.company, r)
			if err != nil {
				t.Fatal(err)
			}
			if p.Type != payments.TypeCollection || p.Fee != 10 || p.Reason != "Order 7" || p.Description != "Online order" {
				t.Fatalf("accepted %+v", p)
			}
			if b := h.balances(); b != [4]int64{} {
				t.Fatalf("a pending collection moved %v", b)
			}
			h.drain()
			if got := h.get(p.ID); got.Status != tt.status {
				t.Fatalf("status %s", got.Status)
			}
			if b := h.balances(); b != [4]int64{0, 0, 0, tt.payin} {
				t.Fatalf("balances %v", b)
			}
			deposits := h.entries(p.ID)[wallets.TypeDeposit]
			if tt.status == payments.StatusSuccess {
				if len(deposits) != 1 || deposits[0].Amount != 1000 || deposits[0].FeeAmount != 10 || deposits[0].NetAmount != 990 ||
					deposits[0].Delta != 990 || *deposits[0].BalanceBefore != 0 || *deposits[0].BalanceAfter != 990 {
					t.Fatalf("deposits %+v", deposits)
				}
			} else if len(deposits) != 0 {
				t.Fatalf("a failed collection deposited %+v", deposits)
			}
			want := []string{"payment.collect:PENDING", "payment.collect.status_updated:PROCESSING", "payment.collect.status_updated:" + string(tt.status)}
			if got := h.events.statuses(t, p.ID); !slices.Equal(got, want) {
				t.Fatalf("events %v, want %v", got, want)
			}
			h.verify()
		})
	}
	t.Run("fee not below amount", func(t *testing.T) {
		h := newHarness(t)
		h.setFees(0, 10)
		_, err := h.svc.Collect(h.ctx, h.company, request("237690000002", "10"))
		var fe *field.Error
		if !errors.As(err, &fe) || fe.Field != "amount" {
			t.Fatalf("err %v", err)
		}
	})
}

// TestQueries lists and reads payments with each filter.
func TestQueries(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fund(wallets.Payout, "10000")
	var ids []string
	for i, phone := range []string{"237670000001", "237670000000", "237670000999"} {
		r := request(phone, "100")
		r.ExternalID = fmt.Sprintf("order-%d", i)
		p, err := h.svc.Payout(h.ctx, h.company, r)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
		h.clock.Advance(time.Second)
	}
	c, err := h.svc.Collect(h.ctx, h.company, payments.Request{Operator: "orange", Country: "CM", PhoneNumber: "237690000002", Amount: "500", Currency: "XAF", ExternalID: "cart-1"})
	if err != nil {
		t.Fatal(err)
	}
	ids = append(ids, c.ID)
	// Run until the 999 payout is flagged, past its deadline.
	h.drain()
	created := h.get(ids[1]).CreatedAt
	yes, no := true, false
	tests := []struct {
		name string
		q    payments.Query
		want []string
	}{
		{"all", payments.Query{}, []string{ids[3], ids[2], ids[1], ids[0]}},
		{"payouts", payments.Query{Type: payments.TypePayout}, []string{ids[2], ids[1], ids[0]}},
		{"collections", payments.Query{Type: payments.TypeCollection}, []string{ids[3]}},
		{"failed", payments.Query{Status: payments.StatusFailed}, []string{ids[1]}},
		{"processing", payments.Query{Status: payments.StatusProcessing}, []string{ids[2]}},
		{"external_id substring", payments.Query{ExternalID: "rder-"}, []string{ids[2], ids[1], ids[0]}},
		{"reconciliation required", payments.Query{ReconciliationRequired: &yes}, []string{ids[2]}},
		{"reconciliation not required", payments.Query{ReconciliationRequired: &no}, []string{ids[3], ids[1], ids[0]}},
		{"from inclusive", payments.Query{From: created}, []string{ids[3], ids[2], ids[1]}},
		{"to exclusive", payments.Query{To: created}, []string{ids[0]}},
		{"one millisecond", payments.Query{From: created, To: created.Add(time.Millisecond)}, []string{ids[1]}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps, err := h.svc.List(h.ctx, h.company, tt.q, page.Request{Page: 1, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			if ps.Total != len(tt.want) || ps.Next != "" {
				t.Fatalf("total %d, next %q; want %d and none", ps.Total, ps.Next, len(tt.want))
			}
			var got []string
			for _, p := range ps.Items {
				got = append(got, p.ID)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
	// Another id of the same shape: the last hex digit changed, whatever it was.
	last := "0"
	if strings.HasSuffix(ids[0], "0") {
		last = "1"
	}
	for _, id := range []string{"nope", ids[0][:35] + last} {
		if _, _, err := h.svc.Status(h.ctx, h.company, id, true); !errors.Is(err, payments.ErrNotFound) {
			t.Errorf("Status(%s) = %v", id, err)
		}
	}
	if _, _, err := h.svc.Status(h.ctx, "another-company", ids[0], false); !errors.Is(err, payments.ErrNotFound) {
		t.Errorf("another company's payment: %v", err)
	}
	h.verify()
}

// TestNoOperatorRefusesBeforeWriting covers a deployment without an operator
// gateway (operator.None): payouts and collections are refused and nothing
// is reserved, written or queued.
func TestNoOperatorRefusesBeforeWriting(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fund(wallets.Payout, "1000")
	svc, err := payments.NewService(payments.Deps{
		Store: h.store, Wallets: moneystore.NewWallets(h.db), Fees: h.fees, Gateway: operator.None, Jobs: h.jobs, BulkJobs: h.jobs, Events: h.events,
		Batches: noBatches{},
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, accept := range map[string]func(context.Context, string, payments.Request) (payments.Payment, error){
		"payout": svc.Payout, "collection": svc.Collect,
	} {
		if _, err := accept(h.ctx, h.company, request("237670000001", "100")); !errors.Is(err, payments.ErrNoOperator) {
			t.Errorf("%s: err = %v, want ErrNoOperator", name, err)
		}
	}
	w, err := h.wallets.Get(h.ctx, h.company, h.wallet.ID)
	if err != nil {
		t.Fatal(err)
	}
	if w.PayoutReserved != 0 || w.PayoutAvailable != 1000 {
		t.Errorf("wallet changed: reserved %d, available %d", w.PayoutReserved, w.PayoutAvailable)
	}
	if len(h.jobs.all()) != 0 {
		t.Errorf("jobs queued: %v", h.jobs.all())
	}
	if err := h.wallets.VerifyLedger(h.ctx, h.company); err != nil {
		t.Fatal(err)
	}
}
