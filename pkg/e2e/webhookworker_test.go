package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stripe/stripe-go/v85/webhook"

	"payments/pkg/apidoc/apitest"
	"payments/pkg/app/apptest"
	"payments/pkg/events"
	"payments/pkg/function"
	"payments/pkg/function/webhooksapi"
	"payments/pkg/function/webhookworker"
	"payments/pkg/metrics"
	"payments/pkg/outbound"
	"payments/pkg/outbound/outboundtest"
	"payments/pkg/outbox"
	"payments/pkg/queue"
	"payments/pkg/queue/queuetest"
	"payments/pkg/store"
	"payments/pkg/timestamp"
	"payments/pkg/waittest"
	"payments/pkg/webhooks"
)

// hookEnv is a fresh table and webhooks queue with the webhooks function,
// the webhook worker (sending through sender) and a company with a token.
type hookEnv struct {
	*apptest.AuthTestEnv
	sqs       *sqs.Client
	queueURL  string
	log       function.HTTPHandler
	worker    function.SQSHandler
	publisher *outbox.Publisher
	store     *store.Webhooks
	company   string
	token     string
	// clock is the worker's.
	clock *testClock
	// metrics receives the worker's EMF lines.
	metrics apptest.LogLines
}

// metricSums returns the total of each metric in the EMF lines of l, and
// the values of the delivery delays.
func metricSums(t *testing.T, l *apptest.LogLines) (map[string]float64, []float64) {
	t.Helper()
	sums := map[string]float64{}
	var delays []float64
	for _, line := range l.Lines() {
		if line == "" {
			continue
		}
		samples, err := metrics.Parse([]byte(line))
		if err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		for _, s := range samples {
			for _, v := range s.Values {
				sums[s.Name] += v
				if s.Name == metrics.WebhookDeliveryDelay {
					delays = append(delays, v)
				}
			}
		}
	}
	return sums, delays
}

// testClock runs with the real clock, ahead of it by what a test advanced
// it.
type testClock struct{ ahead atomic.Int64 }

func (c *testClock) Now() time.Time { return time.Now().Add(time.Duration(c.ahead.Load())) }

// Advance moves the clock d ahead.
func (c *testClock) Advance(d time.Duration) { c.ahead.Add(int64(d)) }

func newHookEnv(t *testing.T, sender webhooks.Sender) *hookEnv {
	t.Helper()
	env := apptest.NewAuthTestEnv(t)
	e := &hookEnv{AuthTestEnv: env, sqs: queuetest.Client(t), clock: &testClock{}}
	e.queueURL = queuetest.NewQueue(t, e.sqs, nil)
	e.Cfg.WebhooksQueueURL = e.queueURL
	e.Cfg.SQSEndpoint = os.Getenv("AWS_ENDPOINT_URL_SQS")
	var err error
	if e.log, err = webhooksapi.New(context.Background(), apptest.Recording(e.Cfg, "webhooks")); err != nil {
		t.Fatal(err)
	}
	if e.worker, err = webhookworker.NewWith(apptest.Recording(e.Cfg, "webhook-worker"), sender, e.clock.Now); err != nil {
		t.Fatal(err)
	}
	e.store = store.NewWebhooks(e.DB)
	e.publisher = outbox.NewPublisher(store.NewOutbox(e.DB), queue.NewPublisher(e.sqs, e.queueURL))
	id, clientID, clientKey := env.CreateCompany(t, "Hooks Inc")
	e.company, e.token = id, env.MustToken(t, clientID, clientKey)
	return e
}

// Admin calls the operator console.
func (e *hookEnv) admin(t *testing.T, method, path, body string) (int, map[string]any) {
	t.Helper()
	res := apptest.AuthTestCall(t, e.AuthTestEnv.Admin, apptest.AuthTestEvent(method, "/api/v1/admin/companies/"+e.company+path, "10.0.0.1",
		map[string]string{"x-admin-key": apptest.AuthTestAdminKey}, body))
	var out map[string]any
	if err := json.Unmarshal([]byte(res.Body), &out); err != nil {
		t.Fatalf("%s %s: %q", method, path, res.Body)
	}
	data, _ := out["data"].(map[string]any)
	return res.StatusCode, data
}

// setWebhook sets the company's webhook URL and, when sign is set, a new
// signing secret, which it returns.
func (e *hookEnv) setWebhook(t *testing.T, url string, sign bool) string {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"webhook_url": url})
	if status, _ := e.admin(t, "PATCH", "", string(body)); status != http.StatusOK {
		t.Fatalf("set webhook_url: %d", status)
	}
	if !sign {
		return ""
	}
	status, data := e.admin(t, "POST", "/webhook-secret", "")
	secret, _ := data["secret"].(string)
	if status != http.StatusCreated || len(secret) != 64 {
		t.Fatalf("create secret: %d %v", status, data)
	}
	return secret
}

// emit commits a payout status update (with notifyURL, when set) as a
// change would, and publishes it.
func (e *hookEnv) emit(t *testing.T, notifyURL string) events.Event {
	t.Helper()
	ev := e.commit(t, notifyURL)
	if err := e.publisher.Publish(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

// commit commits a payout status update (with notifyURL, when set) as a
// change would, and returns it as committed.
func (e *hookEnv) commit(t *testing.T, notifyURL string) events.Event {
	t.Helper()
	prev := "PENDING"
	ev, err := events.NewPaymentStatusUpdated(e.company, events.PayoutStatusUpdated, events.PaymentStatusData{
		TransactionID: "0196897a-5f0c-7d3e-9a41-1c2b3d4e5f60", ExternalID: "order-7", Type: "PAYOUT", Status: "PROCESSING",
		PreviousStatus: &prev, Amount: "5000", FeeAmount: "100", Currency: "XAF", Country: "CM", Operator: "mtn",
		PhoneNumber: "237670000000", UpdatedAt: timestamp.Format(time.Now()),
	}, notifyURL, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.Commit(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	return e.committed(t, ev)
}

// committed returns ev as the store committed it, numbered among the
// events about its object: its body is what every delivery sends.
func (e *hookEnv) committed(t *testing.T, ev events.Event) events.Event {
	t.Helper()
	stored, err := e.store.Event(context.Background(), e.company, ev.ID)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ev.WithSequence(stored.Sequence)
	if err != nil || string(stored.Body) != string(want.Body) || stored.Object != ev.Object {
		t.Fatalf("committed %+v, %v; built %s", stored, err, ev.Body)
	}
	return want
}

// poll does what Lambda's event source mapping does, until the test ends:
// receive a batch, invoke the worker, delete what it did not report failed.
func (e *hookEnv) poll(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			out, err := e.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
				QueueUrl: aws.String(e.queueURL), MaxNumberOfMessages: 10, WaitTimeSeconds: 0,
			})
			if err != nil || len(out.Messages) == 0 {
				time.Sleep(100 * time.Millisecond) // Lambda's poller, between receives
				continue
			}
			e.invoke(t, ctx, out.Messages...)
		}
	}()
}

// drain receives a batch of what is visible on the queue (waiting up to
// 2 s for one to show) and hands it to the worker; it returns how many
// messages it handled.
func (e *hookEnv) drain(t *testing.T) int {
	t.Helper()
	return e.drainWith(t, e.worker)
}

// drainWith is drain with worker w.
func (e *hookEnv) drainWith(t *testing.T, w function.SQSHandler) int {
	t.Helper()
	// Short polls: the SQS emulator's long poll waits its whole time unless
	// the batch fills.
	for range 20 {
		out, err := e.sqs.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(e.queueURL), MaxNumberOfMessages: 10, WaitTimeSeconds: 0,
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) > 0 {
			e.invokeWith(t, context.Background(), w, out.Messages...)
			return len(out.Messages)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return 0
}

// queued returns how many messages the queue holds: visible, in flight or
// delayed.
func (e *hookEnv) queued(t *testing.T) int {
	t.Helper()
	return queuetest.Depth(t, e.sqs, e.queueURL)
}

type sqsMessage = sqstypes.Message

func (e *hookEnv) invoke(t *testing.T, ctx context.Context, msgs ...sqsMessage) {
	e.invokeWith(t, ctx, e.worker, msgs...)
}

// invokeWith hands msgs to worker w and deletes those it did not report
// failed.
func (e *hookEnv) invokeWith(t *testing.T, ctx context.Context, w function.SQSHandler, msgs ...sqsMessage) {
	var ev lambdaevents.SQSEvent
	for _, m := range msgs {
		ev.Records = append(ev.Records, lambdaevents.SQSMessage{
			MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle), Body: aws.ToString(m.Body),
		})
	}
	resp, err := w(metrics.NewContext(ctx, metrics.New(&e.metrics, "payments/test", "webhook-worker")), ev)
	if err != nil {
		t.Errorf("worker: %v", err)
		return
	}
	failed := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	for _, m := range msgs {
		if !failed[aws.ToString(m.MessageId)] {
			e.sqs.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: aws.String(e.queueURL), ReceiptHandle: m.ReceiptHandle})
		}
	}
}

// Call sends a request to the webhooks function with the company's token
// (or another).
func (e *hookEnv) call(t *testing.T, token, method, path string) (int, map[string]any) {
	t.Helper()
	res := apptest.AuthTestCall(t, e.log, apptest.AuthTestEvent(method, "/api/v1"+path, "192.0.2.7", map[string]string{"authorization": "Bearer " + token}, ""))
	var out map[string]any
	if err := json.Unmarshal([]byte(res.Body), &out); err != nil {
		t.Fatalf("%s %s: %q", method, path, res.Body)
	}
	return res.StatusCode, out
}

// logEntry is an event as GET /webhooks/events/{id} shows it.
type logEntry struct {
	ID         string          `json:"id"`
	Event      string          `json:"event"`
	Sequence   *int64          `json:"sequence"`
	Status     string          `json:"status"`
	Payload    json.RawMessage `json:"payload"`
	Deliveries []struct {
		ID          string `json:"id"`
		Destination string `json:"destination"`
		URL         string `json:"url"`
		Round       int    `json:"round"`
		Status      string `json:"status"`
		Signed      bool   `json:"signed"`
		Attempts    []struct {
			Attempt    int       `json:"attempt"`
			At         time.Time `json:"at"`
			StatusCode *int      `json:"status_code"`
			Error      *string   `json:"error"`
			DurationMS int64     `json:"duration_ms"`
		} `json:"attempts"`
	} `json:"deliveries"`
}

func (e *hookEnv) entry(t *testing.T, eventID string) logEntry {
	t.Helper()
	status, out := e.call(t, e.token, "GET", "/webhooks/events/"+eventID)
	if status != http.StatusOK {
		t.Fatalf("GET event: %d %v", status, out)
	}
	var le logEntry
	remarshalTest(t, out["data"], &le)
	return le
}

// waitFor reads the event's log entry until ok accepts it, or fails t
// after timeout; what names the awaited state.
func (e *hookEnv) waitFor(t *testing.T, eventID string, timeout time.Duration, what string, ok func(logEntry) bool) logEntry {
	t.Helper()
	var le logEntry
	waittest.Until(t, timeout, "event "+eventID+" is "+what, func() bool {
		le = e.entry(t, eventID)
		return ok(le)
	})
	return le
}

func remarshalTest(t *testing.T, from, to any) {
	t.Helper()
	b, err := json.Marshal(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, to); err != nil {
		t.Fatal(err)
	}
}

// received is one request a receiver got.
type received struct {
	at     time.Time
	path   string
	header http.Header
	body   []byte
}

// receiver is an HTTPS server with its own CA whose paths answer with a
// script of statuses, one per request (the last repeats), and checks each
// delivery against the contract's webhooks; status 0 means
// "answer 200 after sleeping 11 s", slower than the 10 s time-out.
type receiver struct {
	*outboundtest.Server
	mu     sync.Mutex
	script map[string][]int
	got    []received
}

func newReceiver(t *testing.T, script map[string][]int) *receiver {
	r := &receiver{script: script}
	r.Server = outboundtest.NewTLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var delivery struct{ Event string }
		if err := json.Unmarshal(body, &delivery); err != nil {
			t.Errorf("a delivery that is not JSON: %q", body)
		} else if err := apitest.Default(t).CheckWebhook(delivery.Event, body); err != nil {
			t.Error(err)
		}
		r.mu.Lock()
		r.got = append(r.got, received{time.Now(), req.URL.Path, req.Header.Clone(), body})
		s := r.script[req.URL.Path]
		code := http.StatusNotFound
		if len(s) > 0 {
			code = s[0]
		}
		if len(s) > 1 {
			r.script[req.URL.Path] = s[1:]
		}
		r.mu.Unlock()
		if code == 0 {
			select {
			case <-time.After(11 * time.Second):
			case <-req.Context().Done():
			}
			code = http.StatusOK
		}
		w.WriteHeader(code)
	}))
	return r
}

func (r *receiver) requests(path string) []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []received
	for _, g := range r.got {
		if g.path == path {
			out = append(out, g)
		}
	}
	return out
}

// client trusts the receiver's CA and allows loopback, as the local stack
// does with OUTBOUND_ALLOW_LOOPBACK=true.
func (r *receiver) client() *outbound.Client {
	return outbound.New(outbound.WithRootCAs(r.Pool), outbound.WithAllowLoopback(true))
}

// TestWebhookRetriesThenDelivers is the acceptance test of the delivery
// schedule: a receiver that fails twice gets the third attempt about 10 s
// after the first, every attempt carries the same bytes and the same
// signature, and the signature verifies with stripe-go's implementation.
// The payout's notify_url gets the same update, signed the same way.
func TestWebhookRetriesThenDelivers(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, map[string][]int{"/hook": {500, 503, 200}, "/notify": {204}})
	e := newHookEnv(t, rcv.client())
	secret := e.setWebhook(t, rcv.URL+"/hook", true)
	e.poll(t)
	ev := e.emit(t, rcv.URL+"/notify")

	le := e.waitFor(t, ev.ID, 30*time.Second, "DELIVERED", func(le logEntry) bool { return le.Status == "DELIVERED" })
	hook := rcv.requests("/hook")
	if len(hook) != 3 {
		t.Fatalf("the receiver got %d attempts, want 3", len(hook))
	}
	second, third := hook[1].at.Sub(hook[0].at), hook[2].at.Sub(hook[0].at)
	t.Logf("attempts at 0, %v, %v", second.Round(time.Millisecond), third.Round(time.Millisecond))
	if second < 4500*time.Millisecond || second > 9*time.Second {
		t.Errorf("second attempt %v after the first, want about 5s", second)
	}
	if third < 9*time.Second || third > 14*time.Second {
		t.Errorf("third attempt %v after the first, want about 10s", third)
	}
	sig := hook[0].header.Get(webhooks.SignatureHeader)
	for i, r := range hook {
		if string(r.body) != string(ev.Body) {
			t.Errorf("attempt %d body %s, want %s", i+1, r.body, ev.Body)
		}
		if r.header.Get(webhooks.SignatureHeader) != sig {
			t.Errorf("attempt %d signature %q, first %q", i+1, r.header.Get(webhooks.SignatureHeader), sig)
		}
		if r.header.Get("Content-Type") != "application/json" || r.header.Get(webhooks.EventIDHeader) != ev.ID ||
			r.header.Get(webhooks.EventTypeHeader) != "payment.payout.status_updated" {
			t.Errorf("attempt %d headers %v", i+1, r.header)
		}
	}
	if !regexp.MustCompile(`^t=\d+,v1=[0-9a-f]{64}$`).MatchString(sig) {
		t.Fatalf("signature header %q", sig)
	}
	// Verified by an implementation that is not ours, as a receiver would.
	if err := webhook.ValidatePayloadWithTolerance(hook[2].body, sig, secret, 300*time.Second); err != nil {
		t.Fatalf("stripe-go rejects the signature: %v", err)
	}

	notify := rcv.requests("/notify")
	if len(notify) != 1 || string(notify[0].body) != string(ev.Body) {
		t.Fatalf("notify_url got %d requests", len(notify))
	}
	if err := webhook.ValidatePayloadWithTolerance(notify[0].body, notify[0].header.Get(webhooks.SignatureHeader), secret, 300*time.Second); err != nil {
		t.Fatalf("notify_url signature: %v", err)
	}

	// The delivery log shows every attempt.
	if len(le.Deliveries) != 2 || le.Deliveries[0].Destination != "webhook" || le.Deliveries[1].Destination != "notify_url" {
		t.Fatalf("deliveries %+v", le.Deliveries)
	}
	want := []int{500, 503, 200}
	d := le.Deliveries[0]
	if d.Status != "DELIVERED" || !d.Signed || len(d.Attempts) != 3 || d.URL != rcv.URL+"/hook" {
		t.Fatalf("webhook delivery %+v", d)
	}
	for i, a := range d.Attempts {
		if a.Attempt != i+1 || a.StatusCode == nil || *a.StatusCode != want[i] || a.Error != nil || a.At.IsZero() {
			t.Errorf("attempt %d logged as %+v", i+1, a)
		}
	}
	if n := le.Deliveries[1]; n.Status != "DELIVERED" || len(n.Attempts) != 1 || *n.Attempts[0].StatusCode != 204 {
		t.Errorf("notify delivery %+v", n)
	}
	// Measured: two attempts retried, two deliveries made, each with its
	// delay from the event (the webhook's past its two retries' 10 s).
	sums, delays := metricSums(t, &e.metrics)
	if sums[metrics.WebhookDeliveriesRetried] != 2 || sums[metrics.WebhookDeliveriesSucceeded] != 2 || sums[metrics.WebhookDeliveriesFailed] != 0 ||
		len(delays) != 2 || max(delays[0], delays[1]) < 9000 {
		t.Errorf("metrics %v, delays %v ms", sums, delays)
	}
	var payload events.PaymentStatusData
	if err := json.Unmarshal(le.Payload, &payload); err != nil || payload.TransactionID == "" || payload.Status != "PROCESSING" {
		t.Errorf("payload %s", le.Payload)
	}
}

// TestWebhookAlwaysFailing: exactly 4 attempts, then permanently failed.
func TestWebhookAlwaysFailing(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, map[string][]int{"/down": {502}})
	e := newHookEnv(t, rcv.client())
	e.setWebhook(t, rcv.URL+"/down", false)
	e.poll(t)
	ev := e.emit(t, "")
	le := e.waitFor(t, ev.ID, 35*time.Second, "FAILED", func(le logEntry) bool { return le.Status == "FAILED" })
	// A 5th attempt would be a message on the queue (delayed, then
	// visible, then in flight) until the worker had made it.
	waittest.Until(t, 15*time.Second, "the queue is empty", func() bool { return e.queued(t) == 0 })
	got := rcv.requests("/down")
	if len(got) != 4 {
		t.Fatalf("the receiver got %d attempts, want exactly 4", len(got))
	}
	for i := 1; i < len(got); i++ {
		if gap := got[i].at.Sub(got[i-1].at); gap < 4500*time.Millisecond || gap > 9*time.Second {
			t.Errorf("attempt %d came %v after the previous one, want about 5s", i+1, gap)
		}
		if got[i].header.Get(webhooks.SignatureHeader) != "" {
			t.Error("signed without a secret")
		}
	}
	le = e.entry(t, ev.ID)
	if d := le.Deliveries[0]; d.Status != "FAILED" || len(d.Attempts) != 4 || d.Signed {
		t.Fatalf("delivery %+v", d)
	}
	status, out := e.call(t, e.token, "GET", "/webhooks/events?status=FAILED")
	if status != http.StatusOK || len(out["data"].([]any)) != 1 {
		t.Fatalf("FAILED filter: %d %v", status, out)
	}
	if sums, _ := metricSums(t, &e.metrics); sums[metrics.WebhookDeliveriesRetried] != 3 || sums[metrics.WebhookDeliveriesFailed] != 1 || sums[metrics.WebhookDeliveriesSucceeded] != 0 {
		t.Errorf("metrics %v: want 3 attempts retried, 1 delivery failed for good", sums)
	}
}

// TestWebhookSlowReceiver: an answer slower than the 10 s time-out is a
// failed attempt, and the next attempt follows.
func TestWebhookSlowReceiver(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, map[string][]int{"/slow": {0, 200}})
	e := newHookEnv(t, rcv.client())
	e.setWebhook(t, rcv.URL+"/slow", true)
	e.poll(t)
	ev := e.emit(t, "")
	le := e.waitFor(t, ev.ID, 35*time.Second, "DELIVERED", func(le logEntry) bool { return le.Status == "DELIVERED" })
	a := le.Deliveries[0].Attempts
	if len(a) != 2 || a[0].Error == nil || !strings.Contains(*a[0].Error, "timeout") || a[0].StatusCode != nil {
		t.Fatalf("attempts %+v", a)
	}
	if a[0].DurationMS < 9500 || a[0].DurationMS > 11500 {
		t.Errorf("the slow attempt took %d ms, want about 10000", a[0].DurationMS)
	}
	if a[1].StatusCode == nil || *a[1].StatusCode != 200 {
		t.Errorf("second attempt %+v", a[1])
	}
}

// TestWebhookReceiverDownFor12s: a receiver that answers nothing but 503
// for 12 s still gets every event, by the fourth attempt at the latest.
func TestWebhookReceiverDownFor12s(t *testing.T) {
	t.Parallel()
	var up atomic.Bool
	var mu sync.Mutex
	got := map[string]int{}
	srv := outboundtest.NewTLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		mu.Lock()
		got[r.Header.Get(webhooks.EventIDHeader)+" "+r.URL.Path]++
		mu.Unlock()
	}))
	e := newHookEnv(t, outbound.New(outbound.WithRootCAs(srv.Pool), outbound.WithAllowLoopback(true)))
	e.setWebhook(t, srv.URL+"/hook", true)
	e.poll(t)
	time.AfterFunc(12*time.Second, func() { up.Store(true) })
	var evs []events.Event
	for i := range 3 {
		notify := ""
		if i == 0 {
			notify = srv.URL + "/notify"
		}
		evs = append(evs, e.emit(t, notify))
	}
	for _, ev := range evs {
		e.waitFor(t, ev.ID, 30*time.Second, "DELIVERED", func(le logEntry) bool { return le.Status == "DELIVERED" })
	}
	mu.Lock()
	defer mu.Unlock()
	want := map[string]int{evs[0].ID + " /hook": 1, evs[0].ID + " /notify": 1, evs[1].ID + " /hook": 1, evs[2].ID + " /hook": 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("received %v, want %v", got, want)
	}
}

// TestWebhookRefusedAddresses: a webhook URL that points at a private,
// loopback or metadata address is never dialled; the attempt records why.
func TestWebhookRefusedAddresses(t *testing.T) {
	rcv := newReceiver(t, map[string][]int{"/hook": {200}})
	var dialled atomic.Int64
	sender := outbound.New(outbound.WithRootCAs(rcv.Pool), outbound.WithTimeout(3*time.Second),
		outbound.WithDialObserver(func(netip.AddrPort) { dialled.Add(1) }))
	e := newHookEnv(t, sender)
	port := rcv.URL[strings.LastIndex(rcv.URL, ":")+1:]
	for _, u := range []string{
		"https://10.0.0.1/hook",
		"https://192.168.1.20/hook",
		"https://169.254.169.254/latest/meta-data/",
		"https://[fd00:ec2::254]/",
		"https://127.0.0.1:" + port + "/hook",
		"https://localhost:" + port + "/hook",
		"https://[::1]:" + port + "/hook",
	} {
		t.Run(u, func(t *testing.T) {
			e.setWebhook(t, u, true)
			ev := e.emit(t, "")
			if n := e.drain(t); n != 1 {
				t.Fatalf("handled %d messages", n)
			}
			le := e.entry(t, ev.ID)
			if len(le.Deliveries) != 1 || len(le.Deliveries[0].Attempts) != 1 {
				t.Fatalf("log %+v", le)
			}
			a := le.Deliveries[0].Attempts[0]
			if a.Error == nil || !strings.Contains(*a.Error, "refused address") || a.StatusCode != nil {
				t.Fatalf("attempt %+v", a)
			}
			if le.Status != "PENDING" {
				t.Fatalf("status %s: the refused attempt should be retried like any failure", le.Status)
			}
		})
	}
	if dialled.Load() != 0 || rcv.Conns.Load() != 0 {
		t.Fatalf("dialled %d times, receiver saw %d connections; want none", dialled.Load(), rcv.Conns.Load())
	}
}

// TestWebhookLog covers the delivery log routes: filters, pagination,
// errors naming the parameter, 404 for another company's event, duplicate
// messages and resends.
func TestWebhookLog(t *testing.T) {
	rcv := newReceiver(t, map[string][]int{"/hook": {200}})
	e := newHookEnv(t, rcv.client())
	secret := e.setWebhook(t, rcv.URL+"/hook", true)

	first := e.emit(t, "")
	// The same event message twice (a duplicate SQS delivery) is delivered
	// once.
	msg, _ := json.Marshal(outbox.Message{CompanyID: e.company, EventID: first.ID})
	for range 2 {
		resp, err := e.worker(context.Background(), lambdaevents.SQSEvent{Records: []lambdaevents.SQSMessage{{MessageId: "m", Body: string(msg)}}})
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("worker: %+v %v", resp, err)
		}
	}
	if n := len(rcv.requests("/hook")); n != 1 {
		t.Fatalf("duplicate message delivered %d times", n)
	}
	e.drain(t) // the message Publish queued: a third copy, also a no-op
	if n := len(rcv.requests("/hook")); n != 1 {
		t.Fatalf("third copy delivered again: %d", n)
	}

	// A customer.created with no webhook URL: SKIPPED.
	e.setWebhook(t, "", false)
	skipped, _ := events.Build(e.company, events.CustomerCreatedData{CustomerID: "cu-1", CreatedAt: timestamp.Format(time.Now())}, time.Now())
	if err := e.store.Commit(context.Background(), skipped); err != nil {
		t.Fatal(err)
	}
	if err := e.publisher.Publish(context.Background(), skipped); err != nil {
		t.Fatal(err)
	}
	e.drain(t)
	e.setWebhook(t, rcv.URL+"/hook", false)
	pending := e.emit(t, "") // published, not handled yet: PENDING

	list := func(query string) (int, []logEntry, map[string]any) {
		status, out := e.call(t, e.token, "GET", "/webhooks/events"+query)
		var items []logEntry
		if status == http.StatusOK {
			remarshalTest(t, out["data"], &items)
		}
		return status, items, out
	}
	ids := func(items []logEntry) string {
		var s []string
		for _, it := range items {
			s = append(s, it.ID)
		}
		return strings.Join(s, ",")
	}
	today := time.Now().UTC().Format(time.DateOnly)
	tomorrow := time.Now().UTC().Add(24 * time.Hour).Format(time.DateOnly)
	tests := []struct {
		query  string
		status int
		want   []string
		field  string
	}{
		{"", 200, []string{pending.ID, skipped.ID, first.ID}, ""},
		{"?limit=2", 200, []string{pending.ID, skipped.ID}, ""},
		{"?limit=2&page=2", 200, []string{first.ID}, ""},
		{"?status=DELIVERED", 200, []string{first.ID}, ""},
		{"?status=PENDING", 200, []string{pending.ID}, ""},
		{"?status=SKIPPED", 200, []string{skipped.ID}, ""},
		{"?status=FAILED", 200, nil, ""},
		{"?event=customer.created", 200, []string{skipped.ID}, ""},
		{"?event=payment.payout.status_updated&status=DELIVERED", 200, []string{first.ID}, ""},
		{"?from_date=" + today, 200, []string{pending.ID, skipped.ID, first.ID}, ""},
		{"?from_date=" + tomorrow, 200, nil, ""},
		{"?to_date=" + today, 200, nil, ""},
		{"?status=LOST", 400, nil, "status"},
		{"?event=card.funded", 400, nil, "event"},
		{"?from_date=yesterday", 400, nil, "from_date"},
		{"?to_date=2025-13-01", 400, nil, "to_date"},
		{"?from_date=" + tomorrow + "&to_date=" + today, 400, nil, "to_date"},
		{"?limit=101", 400, nil, "limit"},
		{"?page=0", 400, nil, "page"},
	}
	for _, tt := range tests {
		t.Run("list"+tt.query, func(t *testing.T) {
			status, items, out := list(tt.query)
			if status != tt.status {
				t.Fatalf("status %d, want %d: %v", status, tt.status, out)
			}
			if tt.field != "" {
				if out["field"] != tt.field || !strings.Contains(out["message"].(string), tt.field) {
					t.Fatalf("error %v, want field %s", out, tt.field)
				}
				return
			}
			if ids(items) != strings.Join(tt.want, ",") {
				t.Fatalf("got %s, want %s", ids(items), strings.Join(tt.want, ","))
			}
		})
	}
	_, items, out := list("?limit=2")
	meta := out["meta"].(map[string]any)
	if meta["total"] != 3.0 || meta["totalPages"] != 2.0 || items[0].Payload == nil {
		t.Fatalf("meta %v", meta)
	}
	if items[1].Event != "customer.created" || !strings.Contains(string(items[1].Payload), `"customer_id":"cu-1"`) {
		t.Fatalf("payload %s", items[1].Payload)
	}

	// Another company cannot see or resend the event.
	_, otherID, otherKey := e.CreateCompany(t, "Other Co")
	other := e.MustToken(t, otherID, otherKey)
	for _, r := range []struct{ method, path string }{
		{"GET", "/webhooks/events/" + first.ID},
		{"POST", "/webhooks/events/" + first.ID + "/resend"},
		{"GET", "/webhooks/events/not-a-uuid"},
	} {
		if status, out := e.call(t, other, r.method, r.path); status != http.StatusNotFound || out["code"] != "EVENT_NOT_FOUND" {
			t.Errorf("%s %s as another company: %d %v", r.method, r.path, status, out)
		}
	}
	if status, out := e.call(t, other, "GET", "/webhooks/events"); status != http.StatusOK || len(out["data"].([]any)) != 0 {
		t.Errorf("another company's list: %d %v", status, out)
	}
	if status, _ := e.call(t, "not-a-token", "GET", "/webhooks/events"); status != http.StatusUnauthorized {
		t.Errorf("without a token: %d", status)
	}

	// Resend, a second later: a fresh round, the same body, a fresh
	// signature.
	e.clock.Advance(time.Second)
	status, out := e.call(t, e.token, "POST", "/webhooks/events/"+first.ID+"/resend")
	if status != http.StatusAccepted || out["data"].(map[string]any)["id"] != first.ID {
		t.Fatalf("resend: %d %v", status, out)
	}
	var hook []received
	waittest.Until(t, 10*time.Second, "the resend is delivered", func() bool {
		e.drain(t)
		hook = nil
		for _, r := range rcv.requests("/hook") {
			if r.header.Get(webhooks.EventIDHeader) == first.ID {
				hook = append(hook, r)
			}
		}
		return len(hook) >= 2
	})
	if len(hook) != 2 || string(hook[1].body) != string(first.Body) {
		t.Fatalf("resend delivered %d requests", len(hook))
	}
	resent := hook[1]
	if resent.header.Get(webhooks.SignatureHeader) == hook[0].header.Get(webhooks.SignatureHeader) {
		t.Error("a resend kept the old signature timestamp")
	}
	if err := webhook.ValidatePayloadWithTolerance(resent.body, resent.header.Get(webhooks.SignatureHeader), secret, 300*time.Second); err != nil {
		t.Errorf("resend signature: %v", err)
	}
	le := e.entry(t, first.ID)
	if len(le.Deliveries) != 2 || le.Deliveries[1].ID != first.ID+"#webhook#"+e.company+"#r1" || le.Deliveries[1].Round != 1 || le.Deliveries[1].Status != "DELIVERED" {
		t.Fatalf("after resend: %+v", le.Deliveries)
	}

	// A resend with nowhere to go is a 409.
	e.setWebhook(t, "", false)
	if status, out := e.call(t, e.token, "POST", "/webhooks/events/"+first.ID+"/resend"); status != http.StatusConflict || out["code"] != "NO_WEBHOOK_DESTINATION" {
		t.Fatalf("resend without destination: %d %v", status, out)
	}
}

func TestWebhookSecretAdmin(t *testing.T) {
	rcv := newReceiver(t, map[string][]int{"/hook": {200}})
	e := newHookEnv(t, rcv.client())
	hex64 := regexp.MustCompile(`^[0-9a-f]{64}$`)
	status, first := e.admin(t, "POST", "/webhook-secret", "")
	status2, second := e.admin(t, "POST", "/webhook-secret", "")
	if status != http.StatusCreated || status2 != http.StatusCreated ||
		!hex64.MatchString(fmt.Sprint(first["secret"])) || first["secret"] == second["secret"] || second["signing"] != true {
		t.Fatalf("create %d %v, rotate %d %v", status, first, status2, second)
	}
	if status, data := e.admin(t, "GET", "", ""); status != http.StatusOK || strings.Contains(fmt.Sprint(data), second["secret"].(string)) {
		t.Fatalf("the company record shows the secret: %v", data)
	}
	// Signed with the rotated secret.
	e.setWebhook(t, rcv.URL+"/hook", false)
	ev := e.emit(t, "")
	e.drain(t)
	got := rcv.requests("/hook")
	if len(got) != 1 || webhook.ValidatePayloadWithTolerance(got[0].body, got[0].header.Get(webhooks.SignatureHeader), second["secret"].(string), 300*time.Second) != nil {
		t.Fatalf("not signed with the rotated secret: %v", got)
	}
	if webhook.ValidatePayloadWithTolerance(got[0].body, got[0].header.Get(webhooks.SignatureHeader), first["secret"].(string), 300*time.Second) == nil {
		t.Fatal("the old secret still verifies")
	}
	_ = ev

	// Off: no signature header at all.
	if status, data := e.admin(t, "DELETE", "/webhook-secret", ""); status != http.StatusOK || data["signing"] != false {
		t.Fatalf("delete: %d %v", status, data)
	}
	e.emit(t, "")
	e.drain(t)
	got = rcv.requests("/hook")
	if len(got) != 2 {
		t.Fatalf("%d requests", len(got))
	}
	if _, ok := got[1].header[webhooks.SignatureHeader]; ok {
		t.Fatal("signature sent after signing was turned off")
	}

	for _, id := range []string{"00000000-0000-4000-8000-000000000000", "nope"} {
		for _, method := range []string{"POST", "DELETE"} {
			res := apptest.AuthTestCall(t, e.AuthTestEnv.Admin, apptest.AuthTestEvent(method, "/api/v1/admin/companies/"+id+"/webhook-secret", "10.0.0.1",
				map[string]string{"x-admin-key": apptest.AuthTestAdminKey}, ""))
			if res.StatusCode != http.StatusNotFound || !strings.Contains(res.Body, "COMPANY_NOT_FOUND") {
				t.Errorf("%s for company %s: %d %s", method, id, res.StatusCode, res.Body)
			}
		}
	}
	res := apptest.AuthTestCall(t, e.AuthTestEnv.Admin, apptest.AuthTestEvent("POST", "/api/v1/admin/companies/"+e.company+"/webhook-secret", "10.0.0.1", nil, ""))
	if res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("without the admin key: %d", res.StatusCode)
	}
}

func TestWebhookWorkerNeedsItsQueue(t *testing.T) {
	if _, err := webhookworker.New(context.Background(), function.Config{TableName: "t"}); err == nil {
		t.Fatal("the worker started without WEBHOOKS_QUEUE_URL")
	}
}

// crashedQueue refuses every message: the process "dies" between the
// commit and the publish.
type crashedQueue struct{}

func (crashedQueue) Send(context.Context, []byte, time.Duration) error {
	return fmt.Errorf("injected fault: process killed before publish")
}

// TestWebhookEventSurvivesACrashBeforePublish: an event committed by a
// process that died before publishing is published by the sweeper function
// after the grace period and delivered.
func TestWebhookEventSurvivesACrashBeforePublish(t *testing.T) {
	rcv := newReceiver(t, map[string][]int{"/hook": {200}})
	e := newHookEnv(t, rcv.client())
	e.setWebhook(t, rcv.URL+"/hook", true)
	ev, err := events.Build(e.company, events.CardFundData{TransactionID: "t9", CardID: "c9", Amount: "5", Currency: "USD", FeeAmount: "0"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.Commit(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	ev = e.committed(t, ev)
	crashed := outbox.NewPublisher(store.NewOutbox(e.DB), crashedQueue{})
	if err := crashed.Publish(context.Background(), ev); err == nil {
		t.Fatal("the injected fault did not fail the publish")
	}
	if e.drain(t) != 0 {
		t.Fatal("something was queued")
	}
	sweep := apptest.MustSweeper(t, apptest.Recording(e.Cfg, "sweeper"), func() time.Time { return time.Now().Add(outbox.Grace + time.Second) })
	if _, err := sweep(context.Background(), lambdaevents.EventBridgeEvent{}); err != nil {
		t.Fatalf("sweep: %v", err)
	}
	e.drain(t)
	got := rcv.requests("/hook")
	if len(got) != 1 || string(got[0].body) != string(ev.Body) || got[0].header.Get(webhooks.EventIDHeader) != ev.ID {
		t.Fatalf("receiver got %d requests", len(got))
	}
	if le := e.entry(t, ev.ID); le.Status != "DELIVERED" {
		t.Fatalf("status %s", le.Status)
	}
}
