package webhooks_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"payments/pkg/events"
	"payments/pkg/outbound"
	"payments/pkg/outbox"
	"payments/pkg/vault"
	"payments/pkg/webhooks"
)

// The worker's rules are tested here against fakes; the DynamoDB store, the
// SQS queue and a real HTTPS receiver are exercised together in
// pkg/e2e/webhookworker_test.go.

type fakeStore struct {
	mu         sync.Mutex
	events     map[string]events.Event
	endpoints  []webhooks.Endpoint
	deliveries map[string]webhooks.Delivery
	dispatched map[string]bool
	claims     map[string]claim // by delivery id
	recordErr  error            // returned once by RecordAttempt
	failReads  bool
}

// claim is a claim on an attempt of a delivery.
type claim struct {
	n     int
	until time.Time
}

func newFakeStore(evs ...events.Event) *fakeStore {
	s := &fakeStore{events: map[string]events.Event{}, deliveries: map[string]webhooks.Delivery{}, dispatched: map[string]bool{},
		claims: map[string]claim{}}
	for _, e := range evs {
		s.events[e.ID] = e
	}
	return s
}

func (s *fakeStore) Event(_ context.Context, companyID, eventID string) (events.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failReads {
		return events.Event{}, errors.New("dynamodb unavailable")
	}
	e, ok := s.events[eventID]
	if !ok || e.CompanyID != companyID {
		return events.Event{}, events.ErrNotFound
	}
	return e, nil
}

func (s *fakeStore) Endpoints(context.Context, string) ([]webhooks.Endpoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.endpoints), nil
}

func (s *fakeStore) Endpoint(_ context.Context, _, id string) (webhooks.Endpoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.endpoints {
		if e.ID == id && e.URL != "" {
			return e, nil
		}
	}
	return webhooks.Endpoint{}, webhooks.ErrEndpointNotFound
}

// console returns the console endpoint, the first.
func (s *fakeStore) console() *webhooks.Endpoint { return &s.endpoints[0] }

func (s *fakeStore) CancelDelivery(_ context.Context, d webhooks.Delivery, _ time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.deliveries[d.ID]
	if cur.Status != webhooks.StatusPending || len(cur.Attempts) != len(d.Attempts) {
		return webhooks.ErrAttemptTaken
	}
	cur.Status = webhooks.StatusCanceled
	s.deliveries[d.ID] = cur
	return nil
}

func (s *fakeStore) CreateDelivery(_ context.Context, d webhooks.Delivery) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.deliveries[d.ID]; ok {
		return webhooks.ErrDeliveryExists
	}
	s.deliveries[d.ID] = d
	return nil
}

func (s *fakeStore) Delivery(_ context.Context, _, id string) (webhooks.Delivery, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.deliveries[id]
	if !ok {
		return webhooks.Delivery{}, webhooks.ErrDeliveryNotFound
	}
	d.Attempts = slices.Clone(d.Attempts)
	return d, nil
}

func (s *fakeStore) ClaimAttempt(_ context.Context, d webhooks.Delivery, n int, now, until time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.deliveries[d.ID]
	if c, held := s.claims[d.ID]; cur.Status != webhooks.StatusPending || len(cur.Attempts) != n-1 || held && c.n >= n && !c.until.Before(now) {
		return webhooks.ErrAttemptTaken
	}
	s.claims[d.ID] = claim{n, until}
	return nil
}

func (s *fakeStore) RecordAttempt(_ context.Context, d webhooks.Delivery, a webhooks.Attempt, st webhooks.Status, _ time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.recordErr; err != nil {
		s.recordErr = nil
		return err
	}
	cur := s.deliveries[d.ID]
	if cur.Status != webhooks.StatusPending || len(cur.Attempts) != a.Number-1 {
		return webhooks.ErrAttemptTaken
	}
	cur.Attempts = append(cur.Attempts, a)
	cur.Status = st
	s.deliveries[d.ID] = cur
	return nil
}

func (s *fakeStore) MarkQueued(_ context.Context, _, id string, n int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.deliveries[id]
	d.Queued = max(d.Queued, n)
	s.deliveries[id] = d
	return nil
}

func (s *fakeStore) MarkDispatched(_ context.Context, _, id string, _ time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dispatched[id] = true
	return nil
}

type sent struct {
	url    string
	header http.Header
	body   []byte
}

// fakeSender answers each URL with the next status of its script (the last
// one repeats); status 0 is a network error.
type fakeSender struct {
	mu     sync.Mutex
	script map[string][]int
	sent   []sent
}

func (f *fakeSender) Post(_ context.Context, url string, h http.Header, body []byte) (outbound.Response, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, sent{url, h.Clone(), slices.Clone(body)})
	s := f.script[url]
	code := s[0]
	if len(s) > 1 {
		f.script[url] = s[1:]
	}
	if code == 0 {
		return outbound.Response{}, fmt.Errorf("dial tcp: %w", outbound.ErrRefusedAddress)
	}
	return outbound.Response{StatusCode: code}, nil
}

type queued struct {
	msg   webhooks.Message
	delay time.Duration
}

type fakeQueue struct {
	mu   sync.Mutex
	msgs []queued
}

func (q *fakeQueue) Send(_ context.Context, body []byte, delay time.Duration) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	var m webhooks.Message
	if err := json.Unmarshal(body, &m); err != nil {
		return err
	}
	q.msgs = append(q.msgs, queued{m, delay})
	return nil
}

func (q *fakeQueue) take() []queued {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.msgs
	q.msgs = nil
	return out
}

const (
	hookURL   = "https://hooks.example.com/in"
	notifyURL = "https://merchant.example.com/notify"
)

type workerEnv struct {
	store  *fakeStore
	sender *fakeSender
	queue  *fakeQueue
	worker *webhooks.Worker
	event  events.Event
	vault  *vault.Vault // seals and opens the endpoints' secrets
}

// testVault returns a vault under a fresh local master key.
func testVault(t *testing.T) *vault.Vault {
	t.Helper()
	key := make([]byte, vault.DataKeySize)
	rand.Read(key)
	local, err := vault.NewLocal(key)
	if err != nil {
		t.Fatal(err)
	}
	return vault.New(local)
}

func newWorkerEnv(t *testing.T, webhookURL, notify string, script map[string][]int) *workerEnv {
	t.Helper()
	ev, err := events.Build("co-1", events.CardFundData{TransactionID: "t1", CardID: "c1", Amount: "25", Currency: "USD", FeeAmount: "0"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ev.NotifyURL = notify
	e := &workerEnv{store: newFakeStore(ev), sender: &fakeSender{script: script}, queue: &fakeQueue{}, event: ev}
	e.store.endpoints = []webhooks.Endpoint{{
		ID: "co-1", CompanyID: "co-1", URL: webhookURL, Console: true, Status: webhooks.EndpointEnabled,
		EnabledEvents: []string{webhooks.AllEvents}, Secret: "3f6c0d8ea5b1c2d3e4f5061728394a5b6c7d8e9f00112233445566778899aabb",
	}}
	e.vault = testVault(t)
	e.worker = webhooks.NewWorker(e.store, e.sender, e.queue, e.vault, nil)
	return e
}

// withClock builds the env's worker again on the clock now.
func (e *workerEnv) withClock(now func() time.Time) {
	e.worker = webhooks.NewWorker(e.store, e.sender, e.queue, e.vault, now)
}

func (e *workerEnv) handle(t *testing.T, m any) {
	t.Helper()
	b, _ := json.Marshal(m)
	if err := e.worker.Handle(context.Background(), b); err != nil {
		t.Fatalf("Handle(%s): %v", b, err)
	}
}

// run handles the event message, then every queued message in turn, as SQS
// would deliver them, and returns the messages it handled.
func (e *workerEnv) run(t *testing.T) []queued {
	t.Helper()
	e.handle(t, outbox.Message{CompanyID: "co-1", EventID: e.event.ID})
	var all []queued
	for range 20 {
		msgs := e.queue.take()
		if len(msgs) == 0 {
			return all
		}
		for _, m := range msgs {
			all = append(all, m)
			e.handle(t, m.msg)
		}
	}
	t.Fatal("the worker never stops queueing")
	return nil
}

func TestWorkerRetriesUntilSuccessOrFour(t *testing.T) {
	tests := []struct {
		name       string
		script     []int
		wantSends  int
		wantStatus webhooks.Status
	}{
		{"first attempt succeeds", []int{204}, 1, webhooks.StatusDelivered},
		{"any 2xx", []int{299}, 1, webhooks.StatusDelivered},
		{"third attempt succeeds", []int{500, 0, 200}, 3, webhooks.StatusDelivered},
		{"redirect is a failure", []int{302, 200}, 2, webhooks.StatusDelivered},
		{"always fails", []int{503}, 4, webhooks.StatusFailed},
		{"network errors", []int{0}, 4, webhooks.StatusFailed},
		{"fourth succeeds", []int{400, 401, 500, 201}, 4, webhooks.StatusDelivered},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newWorkerEnv(t, hookURL, "", map[string][]int{hookURL: tt.script})
			msgs := e.run(t)
			if len(e.sender.sent) != tt.wantSends {
				t.Fatalf("%d sends, want %d", len(e.sender.sent), tt.wantSends)
			}
			for i, m := range msgs {
				if m.delay != webhooks.RetryDelay || m.msg.Kind != webhooks.KindAttempt || m.msg.Attempt != i+2 {
					t.Errorf("message %d: %+v", i, m)
				}
			}
			d := e.store.deliveries[webhooks.DeliveryID(e.event.ID, webhooks.DestinationWebhook, "co-1", 0)]
			if d.Status != tt.wantStatus || len(d.Attempts) != tt.wantSends {
				t.Fatalf("delivery %s with %d attempts", d.Status, len(d.Attempts))
			}
			if !d.ExpiresAt.Equal(e.event.CreatedAt.Add(events.Retention)) {
				t.Fatalf("delivery expires at %v, want its event's end", d.ExpiresAt)
			}
			first := e.sender.sent[0]
			for i, s := range e.sender.sent {
				if string(s.body) != string(e.event.Body) || s.header.Get(webhooks.SignatureHeader) != first.header.Get(webhooks.SignatureHeader) {
					t.Errorf("send %d differs from the first: %s %v", i, s.body, s.header)
				}
				if s.header.Get("Content-Type") != "application/json" || s.header.Get(webhooks.EventIDHeader) != e.event.ID ||
					s.header.Get(webhooks.EventTypeHeader) != "card.fund" {
					t.Errorf("send %d headers %v", i, s.header)
				}
				if err := webhooks.Verify(s.header.Get(webhooks.SignatureHeader), s.body, e.store.console().Secret, time.Minute, time.Now()); err != nil {
					t.Errorf("send %d: %v", i, err)
				}
				if a := d.Attempts[i]; a.Number != i+1 || (a.StatusCode == 0) == (a.Error == "") {
					t.Errorf("attempt %d recorded as %+v", i+1, a)
				}
			}
		})
	}
}

func TestWorkerDestinations(t *testing.T) {
	tests := []struct {
		name, webhook, notify string
		want                  []string
	}{
		{"webhook only", hookURL, "", []string{hookURL}},
		{"notify_url only", "", notifyURL, []string{notifyURL}},
		{"both", hookURL, notifyURL, []string{hookURL, notifyURL}},
		{"none", "", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newWorkerEnv(t, tt.webhook, tt.notify, map[string][]int{hookURL: {200}, notifyURL: {200}})
			e.run(t)
			var got []string
			for _, s := range e.sender.sent {
				got = append(got, s.url)
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Fatalf("sent to %v, want %v", got, tt.want)
			}
			if !e.store.dispatched[e.event.ID] {
				t.Fatal("event not marked dispatched")
			}
			if len(got) == 2 && e.sender.sent[0].header.Get(webhooks.SignatureHeader) != e.sender.sent[1].header.Get(webhooks.SignatureHeader) {
				t.Error("the two destinations got different signatures")
			}
		})
	}
}

func TestWorkerDuplicates(t *testing.T) {
	t.Run("event message twice", func(t *testing.T) {
		e := newWorkerEnv(t, hookURL, "", map[string][]int{hookURL: {500}})
		m := outbox.Message{CompanyID: "co-1", EventID: e.event.ID}
		e.handle(t, m)
		e.handle(t, m)
		if len(e.sender.sent) != 1 || len(e.queue.take()) != 1 {
			t.Fatalf("%d sends; a duplicate message must not deliver again", len(e.sender.sent))
		}
	})
	t.Run("attempt message twice", func(t *testing.T) {
		e := newWorkerEnv(t, hookURL, "", map[string][]int{hookURL: {500}})
		e.handle(t, outbox.Message{CompanyID: "co-1", EventID: e.event.ID})
		retry := e.queue.take()[0].msg
		e.handle(t, retry)
		e.handle(t, retry)
		if len(e.sender.sent) != 2 {
			t.Fatalf("%d sends, want 2", len(e.sender.sent))
		}
		if q := e.queue.take(); len(q) != 1 || q[0].msg.Attempt != 3 {
			t.Fatalf("queued %+v, want attempt 3 once", q)
		}
	})
	t.Run("copy loses the race to record", func(t *testing.T) {
		e := newWorkerEnv(t, hookURL, "", map[string][]int{hookURL: {500}})
		e.store.recordErr = webhooks.ErrAttemptTaken
		e.handle(t, outbox.Message{CompanyID: "co-1", EventID: e.event.ID})
		if len(e.sender.sent) != 1 || len(e.queue.take()) != 0 {
			t.Fatal("the losing copy scheduled a retry")
		}
	})
	t.Run("another copy is making the attempt", func(t *testing.T) {
		// A copy of the event message and the sweeper's message of attempt
		// 1 arrive together: the one that claims attempt 1 sends it; the
		// other sends nothing while the claim runs, and makes the attempt
		// once it has run out (its holder died before recording).
		e := newWorkerEnv(t, hookURL, "", map[string][]int{hookURL: {500}})
		now := time.Now()
		e.withClock(func() time.Time { return now })
		id := webhooks.DeliveryID(e.event.ID, webhooks.DestinationWebhook, "co-1", 0)
		e.store.claims[id] = claim{1, now.Add(webhooks.AttemptLease)}
		e.handle(t, outbox.Message{CompanyID: "co-1", EventID: e.event.ID})
		attempt1 := webhooks.Message{Kind: webhooks.KindAttempt, CompanyID: "co-1", DeliveryID: id, Attempt: 1}
		e.handle(t, attempt1)
		if len(e.sender.sent) != 0 || len(e.queue.take()) != 0 {
			t.Fatalf("%d sends while another copy holds the attempt", len(e.sender.sent))
		}
		now = now.Add(webhooks.AttemptLease + time.Millisecond)
		e.handle(t, attempt1)
		e.handle(t, attempt1)
		if q := e.queue.take(); len(e.sender.sent) != 1 || len(q) != 1 || q[0].msg.Attempt != 2 {
			t.Fatalf("%d sends, queued %+v; want attempt 1 sent once and attempt 2 queued", len(e.sender.sent), q)
		}
	})
	t.Run("recorded but never queued", func(t *testing.T) {
		// The first copy recorded attempt 1 and died before queueing
		// attempt 2: the redelivered message queues it without sending.
		e := newWorkerEnv(t, hookURL, "", map[string][]int{hookURL: {500}})
		e.handle(t, outbox.Message{CompanyID: "co-1", EventID: e.event.ID})
		e.queue.take()
		id := webhooks.DeliveryID(e.event.ID, webhooks.DestinationWebhook, "co-1", 0)
		d := e.store.deliveries[id]
		d.Queued = 0
		e.store.deliveries[id] = d
		e.handle(t, outbox.Message{CompanyID: "co-1", EventID: e.event.ID})
		if q := e.queue.take(); len(e.sender.sent) != 1 || len(q) != 1 || q[0].msg.Attempt != 2 {
			t.Fatalf("%d sends, queued %+v", len(e.sender.sent), q)
		}
	})
}

func TestWorkerSignature(t *testing.T) {
	e := newWorkerEnv(t, hookURL, "", map[string][]int{hookURL: {500, 200}})
	e.store.console().Secret = ""
	e.run(t)
	for _, s := range e.sender.sent {
		if _, ok := s.header[webhooks.SignatureHeader]; ok {
			t.Fatal("signature sent without a secret")
		}
	}
}

func TestWorkerResend(t *testing.T) {
	e := newWorkerEnv(t, hookURL, notifyURL, map[string][]int{hookURL: {200}, notifyURL: {200}})
	e.run(t)
	e.handle(t, webhooks.Message{Kind: webhooks.KindResend, CompanyID: "co-1", EventID: e.event.ID, Round: 1})
	if len(e.sender.sent) != 4 {
		t.Fatalf("%d sends, want 4", len(e.sender.sent))
	}
	for _, id := range []string{e.event.ID + "#webhook#co-1#r1", e.event.ID + "#notify#r1"} {
		if d := e.store.deliveries[id]; d.Status != webhooks.StatusDelivered || d.Round != 1 {
			t.Errorf("delivery %s: %+v", id, d)
		}
	}
	for _, s := range e.sender.sent[2:] {
		if string(s.body) != string(e.event.Body) {
			t.Fatal("a resend sent another body")
		}
	}
}

func TestWorkerDropsWhatItCannotUse(t *testing.T) {
	e := newWorkerEnv(t, hookURL, "", map[string][]int{hookURL: {200}})
	for _, body := range []string{
		`not json`,
		`{}`,
		`{"company_id":"co-1","event_id":"00000000-0000-7000-8000-000000000000"}`,
		`{"company_id":"co-2","event_id":"` + e.event.ID + `"}`,
		`{"kind":"attempt","company_id":"co-1","delivery_id":"x#webhook","attempt":2}`,
		`{"kind":"attempt","company_id":"co-1","delivery_id":"x#webhook","attempt":9}`,
		`{"kind":"other","company_id":"co-1"}`,
	} {
		if err := e.worker.Handle(context.Background(), []byte(body)); err != nil {
			t.Errorf("%s: %v", body, err)
		}
	}
	if len(e.sender.sent) != 0 {
		t.Fatal("sent something")
	}
	e.store.failReads = true
	if err := e.worker.Handle(context.Background(), []byte(`{"company_id":"co-1","event_id":"`+e.event.ID+`"}`)); err == nil {
		t.Fatal("a store failure did not fail the message")
	}
}

// TestWorkerCancelsADeliveryWithoutItsEvent: a pending delivery whose event
// is gone (its 30 days are over) can never be sent: its message is dropped
// and the delivery canceled, so that the sweeper stops queueing it.
func TestWorkerCancelsADeliveryWithoutItsEvent(t *testing.T) {
	e := newWorkerEnv(t, hookURL, "", map[string][]int{hookURL: {500}})
	e.handle(t, outbox.Message{CompanyID: "co-1", EventID: e.event.ID})
	retry := e.queue.take()[0].msg
	delete(e.store.events, e.event.ID)
	e.handle(t, retry)
	if d := e.store.deliveries[retry.DeliveryID]; d.Status != webhooks.StatusCanceled || len(e.sender.sent) != 1 {
		t.Fatalf("delivery %s after %d sends, want CANCELED after 1", d.Status, len(e.sender.sent))
	}
}

func TestRecordStatus(t *testing.T) {
	d := func(dest webhooks.Destination, round int, s webhooks.Status) webhooks.Delivery {
		return webhooks.Delivery{Destination: dest, Round: round, Status: s}
	}
	const w, n = webhooks.DestinationWebhook, webhooks.DestinationNotifyURL
	tests := []struct {
		name       string
		dispatched bool
		ds         []webhooks.Delivery
		want       webhooks.Status
	}{
		{"not handled yet", false, nil, webhooks.StatusPending},
		{"no destination", true, nil, webhooks.StatusSkipped},
		{"delivered", true, []webhooks.Delivery{d(w, 0, webhooks.StatusDelivered)}, webhooks.StatusDelivered},
		{"one pending", true, []webhooks.Delivery{d(w, 0, webhooks.StatusDelivered), d(n, 0, webhooks.StatusPending)}, webhooks.StatusPending},
		{"one failed", true, []webhooks.Delivery{d(w, 0, webhooks.StatusFailed), d(n, 0, webhooks.StatusDelivered)}, webhooks.StatusFailed},
		{"resent after failure", true, []webhooks.Delivery{d(w, 0, webhooks.StatusFailed), d(w, 1, webhooks.StatusDelivered)}, webhooks.StatusDelivered},
		{"resend pending", true, []webhooks.Delivery{d(w, 0, webhooks.StatusDelivered), d(w, 1, webhooks.StatusPending)}, webhooks.StatusPending},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (webhooks.Record{Dispatched: tt.dispatched, Deliveries: tt.ds}).Status(); got != tt.want {
				t.Fatalf("Status = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestDeliveryID(t *testing.T) {
	tests := []struct {
		dest  webhooks.Destination
		round int
		want  string
	}{
		{webhooks.DestinationWebhook, 0, "e1#webhook#ep"},
		{webhooks.DestinationNotifyURL, 0, "e1#notify"},
		{webhooks.DestinationWebhook, 2, "e1#webhook#ep#r2"},
		{webhooks.DestinationNotifyURL, 1, "e1#notify#r1"},
	}
	for _, tt := range tests {
		if got := webhooks.DeliveryID("e1", tt.dest, "ep", tt.round); got != tt.want || webhooks.EventIDOf(got) != "e1" {
			t.Errorf("DeliveryID = %s, want %s", got, tt.want)
		}
	}
}
