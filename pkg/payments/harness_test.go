package payments_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"payments/pkg/app/apptest"
	"payments/pkg/events"
	"payments/pkg/fees"
	"payments/pkg/httpapi"
	"payments/pkg/page"
	"payments/pkg/payments"
	"payments/pkg/providers/bank"
	"payments/pkg/providers/operator"
	"payments/pkg/providers/operator/operatordb"
	"payments/pkg/providers/operator/operatorsandbox"
	"payments/pkg/store"
	"payments/pkg/store/moneystore"
	"payments/pkg/store/storetest"
	"payments/pkg/wallets"
)

// job is a message sent to the (in-memory) payouts queue.
type job struct {
	body  []byte
	delay time.Duration
}

// jobQueue records the payouts queue's messages; SQS is not the subject of
// these tests (function_test.go drives the worker through the emulator).
type jobQueue struct {
	mu   sync.Mutex
	jobs []job
	fail bool
}

func (q *jobQueue) Send(_ context.Context, body []byte, delay time.Duration) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.fail {
		return errors.New("queue down")
	}
	q.jobs = append(q.jobs, job{append([]byte(nil), body...), delay})
	return nil
}

func (q *jobQueue) take() (job, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.jobs) == 0 {
		return job{}, false
	}
	j := q.jobs[0]
	q.jobs = q.jobs[1:]
	return j, true
}

func (q *jobQueue) all() []job {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]job(nil), q.jobs...)
}

func (q *jobQueue) setFail(fail bool) {
	q.mu.Lock()
	q.fail = fail
	q.mu.Unlock()
}

// eventLog records published events. An event published by its key alone
// (the events a payouts message carries) is read from the outbox.
// noBatches hears of bulk items' final transitions and does nothing: the
// harness pays no bulk batch.
type noBatches struct{}

func (noBatches) ItemFinished(context.Context, string, string) {}

type eventLog struct {
	outbox *store.Outbox

	mu  sync.Mutex
	evs []events.Event
}

func (l *eventLog) Publish(ctx context.Context, evs ...events.Event) error {
	for i, e := range evs {
		if e.Body == nil {
			stored, err := l.outbox.Event(ctx, e.CompanyID, e.ID)
			if err != nil {
				return err
			}
			evs[i] = stored
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.evs = append(l.evs, evs...)
	return nil
}

// statuses returns the status of each status-update event of payment id,
// in publication order.
func (l *eventLog) statuses(t *testing.T, id string) []string {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, e := range l.evs {
		var body struct {
			Event string          `json:"event"`
			Data  json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(e.Body, &body); err != nil {
			t.Fatal(err)
		}
		var d struct {
			TransactionID string `json:"transaction_id"`
			Status        string `json:"status"`
		}
		json.Unmarshal(body.Data, &d)
		if d.TransactionID == id {
			out = append(out, body.Event+":"+d.Status)
		}
	}
	return out
}

// gateway is the sandbox operator (its orders in the test's table) behind
// switches a test flips: down makes every call fail as an operator that
// cannot be reached would; loseSubmitAnswer lets a submission reach the
// operator and loses its answer. It counts the calls.
type gateway struct {
	sandbox *operatorsandbox.Gateway

	mu                        sync.Mutex
	down, loseSubmitAnswer    bool
	submits, queries, lookups int
}

func (g *gateway) set(down, loseSubmitAnswer bool) {
	g.mu.Lock()
	g.down, g.loseSubmitAnswer = down, loseSubmitAnswer
	g.mu.Unlock()
}

func (g *gateway) count(n *int) (down bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	*n++
	return g.down
}

var errOperatorDown = fmt.Errorf("%w: injected: connection refused", operator.ErrUnavailable)

func (g *gateway) Submit(ctx context.Context, r operator.Request) (operator.Result, error) {
	if g.count(&g.submits) {
		return operator.Result{}, errOperatorDown
	}
	res, err := g.sandbox.Submit(ctx, r)
	g.mu.Lock()
	lose := g.loseSubmitAnswer
	g.mu.Unlock()
	if lose {
		return operator.Result{}, fmt.Errorf("%w: injected: answer lost", operator.ErrUnavailable)
	}
	return res, err
}

func (g *gateway) Status(ctx context.Context, k operator.Kind, id string) (operator.Result, error) {
	if g.count(&g.queries) {
		return operator.Result{}, errOperatorDown
	}
	return g.sandbox.Status(ctx, k, id)
}

func (g *gateway) Lookup(ctx context.Context, k operator.Kind, ref string) (operator.Result, error) {
	if g.count(&g.lookups) {
		return operator.Result{}, errOperatorDown
	}
	return g.sandbox.Lookup(ctx, k, ref)
}

type approved struct{}

func (approved) KYBApproved(context.Context, string) (bool, error) { return true, nil }

// noEvents publishes nothing: the harness's wallets only create, credit
// and read, which publish no event.
type noEvents struct{}

func (noEvents) Publish(context.Context, ...events.Event) error { return nil }

// harness is one table, one company with an XAF/CM wallet, and the
// payments service over the real store, with a fake clock, an in-memory
// payouts queue (also its bulk payouts queue: the harness accepts payments
// alone, which never use it) and an event log.
type harness struct {
	t       testing.TB
	ctx     context.Context
	db      *store.DB
	store   *moneystore.Payments
	wallets *wallets.Service
	fees    *fees.Service
	svc     *payments.Service
	gateway *gateway
	jobs    *jobQueue
	events  *eventLog
	clock   *apptest.Clock
	company string
	wallet  wallets.Wallet
}

func newHarness(t testing.TB) *harness {
	t.Helper()
	db := storetest.NewDB(t)
	ws, err := wallets.NewService(wallets.Deps{
		Store: moneystore.NewWallets(db), Companies: approved{}, Fees: fees.NewService(store.NewFees(db)),
		Events: noEvents{}, Bank: bank.None,
	})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{
		t: t, ctx: context.Background(), db: db, store: moneystore.NewPayments(db),
		wallets: ws,
		fees:    fees.NewService(store.NewFees(db)),
		gateway: &gateway{sandbox: operatorsandbox.New(operatordb.New(db.DB))}, jobs: &jobQueue{}, events: &eventLog{outbox: store.NewOutbox(db)},
		clock: apptest.NewClock(time.Now().UTC().Truncate(time.Millisecond)),
	}
	h.svc = h.newService(h.store)
	h.company = uuid.NewString()
	w, err := h.wallets.Create(h.ctx, h.company, wallets.CreateInput{
		Currency: "XAF", Country: "Cameroon", CountryISOCode: "CM", CountryPhoneCode: "+237",
	})
	if err != nil {
		t.Fatal(err)
	}
	h.wallet = w
	return h
}

// newService returns a payments service of the harness over st.
func (h *harness) newService(st payments.Store) *payments.Service {
	svc, err := payments.NewService(payments.Deps{
		Store: st, Wallets: moneystore.NewWallets(h.db), Fees: h.fees, Gateway: h.gateway, Jobs: h.jobs, BulkJobs: h.jobs, Events: h.events,
		Batches: noBatches{}, Now: h.clock.Now,
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return svc
}

// fund credits the wallet's sub-balance b with amount (major units).
func (h *harness) fund(b wallets.SubBalance, amount string) {
	h.t.Helper()
	h.wallets.CreditEnabled = true
	if _, err := h.wallets.Credit(h.ctx, h.wallet.ID, wallets.CreditInput{Balance: b, Amount: amount, Reference: uuid.NewString()}); err != nil {
		h.t.Fatal(err)
	}
}

// setFees gives the company one fixed-fee rule per payment type.
func (h *harness) setFees(payoutFixed, collectionFixed int64) {
	h.t.Helper()
	err := h.fees.SetSchedule(h.ctx, h.company, fees.Schedule{Rules: []fees.Rule{
		{Type: fees.TypePayout, Currency: "XAF", Fixed: payoutFixed},
		{Type: fees.TypeCollection, Currency: "XAF", Fixed: collectionFixed},
	}})
	if err != nil {
		h.t.Fatal(err)
	}
}

// request is a valid XAF payout request to phone.
func request(phone, amount string) payments.Request {
	return payments.Request{Operator: "mtn", Country: "CM", PhoneNumber: phone, Amount: amount, Currency: "XAF"}
}

// drainFor runs the worker on every queued job, oldest first, moving the
// clock forward by each job's delay, until the queue is empty or the next
// job is due more than d after the call; it returns the number of jobs run.
func (h *harness) drainFor(d time.Duration) int {
	h.t.Helper()
	end := h.clock.Now().Add(d)
	n := 0
	for ; n < 1000; n++ {
		j, ok := h.jobs.take()
		if !ok {
			return n
		}
		if h.clock.Now().Add(j.delay).After(end) {
			h.jobs.mu.Lock()
			h.jobs.jobs = append([]job{j}, h.jobs.jobs...)
			h.jobs.mu.Unlock()
			return n
		}
		h.clock.Advance(j.delay)
		if err := h.svc.HandleJob(h.ctx, j.body); err != nil {
			h.t.Fatalf("HandleJob(%s): %v", j.body, err)
		}
	}
	h.t.Fatal("the queue never empties")
	return n
}

// drain is drainFor of 20 minutes: more than the deadline.
func (h *harness) drain() int { return h.drainFor(20 * time.Minute) }

// drainConcurrently runs the queued jobs in rounds of up to width jobs at
// once (so that settlements race for the wallet), until the queue is
// empty. A job that fails is queued again, as SQS would deliver it again.
func (h *harness) drainConcurrently(width int) {
	h.t.Helper()
	for round := 0; ; round++ {
		if round == 1000 {
			h.t.Fatal("the queue never empties")
		}
		h.jobs.mu.Lock()
		jobs := h.jobs.jobs[:min(width, len(h.jobs.jobs))]
		h.jobs.jobs = h.jobs.jobs[len(jobs):]
		h.jobs.mu.Unlock()
		if len(jobs) == 0 {
			return
		}
		var longest time.Duration
		for _, j := range jobs {
			longest = max(longest, j.delay)
		}
		h.clock.Advance(longest)
		var wg sync.WaitGroup
		for _, j := range jobs {
			wg.Go(func() {
				if err := h.svc.HandleJob(h.ctx, j.body); err != nil {
					h.t.Logf("HandleJob(%s): %v; delivered again", j.body, err)
					h.jobs.Send(h.ctx, j.body, 0)
				}
			})
		}
		wg.Wait()
	}
}

// get reads payment id.
func (h *harness) get(id string) payments.Payment {
	h.t.Helper()
	p, err := h.svc.Get(h.ctx, h.company, id)
	if err != nil {
		h.t.Fatal(err)
	}
	return p
}

// walletNow reads the wallet.
func (h *harness) walletNow() wallets.Wallet {
	h.t.Helper()
	w, err := h.wallets.Get(h.ctx, h.company, h.wallet.ID)
	if err != nil {
		h.t.Fatal(err)
	}
	return w
}

// entries returns the company's ledger entries of payment id by type.
func (h *harness) entries(id string) map[wallets.Type][]wallets.Transaction {
	h.t.Helper()
	out := map[wallets.Type][]wallets.Transaction{}
	for p := (page.Request{Page: 1, Limit: httpapi.MaxLimit}); ; {
		res, err := h.wallets.Transactions(h.ctx, h.company, wallets.TransactionQuery{}, p)
		if err != nil {
			h.t.Fatal(err)
		}
		for _, tx := range res.Items {
			if tx.PaymentID == id {
				out[tx.Type] = append(out[tx.Type], tx)
			}
		}
		if res.Next == "" {
			return out
		}
		p = p.Following(res.Next, res.Total)
	}
}

// verify checks the ledger invariant.
func (h *harness) verify() {
	h.t.Helper()
	if err := h.wallets.VerifyLedger(h.ctx, h.company); err != nil {
		h.t.Fatalf("ledger invariant: %v", err)
	}
}

// balances returns payout_balance, payout_reserved, payout_available and
// payin_balance.
func (h *harness) balances() [4]int64 {
	h.t.Helper()
	w := h.walletNow()
	return [4]int64{w.PayoutBalance, w.PayoutReserved, w.PayoutAvailable, w.PayinBalance}
}
