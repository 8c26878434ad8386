package idempotencyhttp_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"payments/pkg/app/apptest"
	"payments/pkg/cards"
	"payments/pkg/contention"
	"payments/pkg/customers"
	"payments/pkg/field"
	"payments/pkg/function/paymentsapi"
	"payments/pkg/httpapi"
	"payments/pkg/idempotency"
	"payments/pkg/idempotency/idempotencyhttp"
	"payments/pkg/metrics"
	"payments/pkg/payments"
	"payments/pkg/store"
	"payments/pkg/store/storetest"
)

// keysTestEnv is the idempotency middleware on DynamoDB Local in front of
// a handler the test drives, on a clock the test sets: POST /moves, a
// route that moves money, POST /moves/bulk, one that also takes bodies of
// up to bulkLimit, and POST /notes, one that moves none.
type keysTestEnv struct {
	t       *testing.T
	handler http.Handler
	calls   atomic.Int32 // the requests the handler served

	clock *apptest.Clock
	// metrics receives the EMF lines of the requests.
	metrics bytes.Buffer

	mu sync.Mutex
	// answer is what the handler answers: nil a 201 naming the call, else
	// the error.
	answer error
	// hold, when set, holds the handler's next call: it is sent the call's
	// release channel.
	hold chan chan struct{}
}

func newKeysTestEnv(t *testing.T) *keysTestEnv {
	e := &keysTestEnv{t: t, clock: apptest.NewClock(time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC))}
	guard := func(r *http.Request) (context.Context, error) {
		return httpapi.WithCompany(r.Context(), r.Header.Get("X-Company")), nil
	}
	keys := &idempotencyhttp.Keys{Store: store.NewIdempotency(storetest.NewDB(t)), Now: e.clock.Now}
	rt := httpapi.NewRouter(paymentsapi.Errors, guard)
	rt.Use(keys.Wrap)
	rt.Handle("POST /moves", e.serve, httpapi.Money())
	rt.Handle("POST /moves/bulk", e.serve, httpapi.Money(), httpapi.BodyLimit(bulkLimit))
	rt.Handle("POST /notes", e.serve)
	e.handler = rt
	return e
}

// set makes the handler answer err (nil: 201).
func (e *keysTestEnv) set(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.answer = err
}

// serve is the handler: a 201 with odd bytes and media type, naming the
// call, or the error set; a request for size answers that many bytes.
func (e *keysTestEnv) serve(w http.ResponseWriter, r *http.Request) error {
	n := e.calls.Add(1)
	e.mu.Lock()
	answer, hold := e.answer, e.hold
	e.hold = nil
	e.mu.Unlock()
	if hold != nil {
		release := make(chan struct{})
		hold <- release
		<-release
	}
	if answer != nil {
		return answer
	}
	body := fmt.Appendf(nil, "{\"call\":%d}\n  ", n)
	if size := r.URL.Query().Get("size"); size != "" {
		var bytes int
		fmt.Sscan(size, &bytes)
		body = append(body, strings.Repeat("x", bytes)...)
	}
	w.Header().Set("Content-Type", "application/vnd.moves+json; charset=utf-8")
	w.WriteHeader(http.StatusCreated)
	w.Write(body)
	return nil
}

// bulkLimit is the body limit of POST /moves/bulk.
const bulkLimit = 4 * httpapi.MaxBodyBytes

// post sends POST /moves with key as company's.
func (e *keysTestEnv) post(company, key, body string, query ...string) *httptest.ResponseRecorder {
	return e.postTo("/moves", company, key, body, query...)
}

// postTo sends POST path with key as company's.
func (e *keysTestEnv) postTo(path, company, key, body string, query ...string) *httptest.ResponseRecorder {
	target := httpapi.BasePath + path
	if len(query) > 0 {
		target += "?" + query[0]
	}
	r := httptest.NewRequest("POST", target, strings.NewReader(body))
	r.Header.Set("X-Company", company)
	r.Header.Set(idempotency.Header, key)
	r = r.WithContext(metrics.NewContext(r.Context(), metrics.New(&e.metrics, "payments/test", "wallets")))
	w := httptest.NewRecorder()
	e.handler.ServeHTTP(w, r)
	return w
}

// same fails the test unless got is want replayed.
func (e *keysTestEnv) same(want, got *httptest.ResponseRecorder) {
	e.t.Helper()
	if got.Code != want.Code || !bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) ||
		got.Header().Get("Content-Type") != want.Header().Get("Content-Type") || got.Header().Get(idempotency.ReplayedHeader) != "true" {
		e.t.Fatalf("not a replay of %d %q: %d %v %q", want.Code, want.Body, got.Code, got.Header(), got.Body)
	}
}

// TestIdempotencyOnTheRoutesThatMoveMoney: the middleware takes the routes
// registered with httpapi.Money, reading their bodies up to their declared
// limit; a body past it is left to the route, unclaimed, and a route that
// moves no money ignores the header.
func TestIdempotencyOnTheRoutesThatMoveMoney(t *testing.T) {
	e := newKeysTestEnv(t)
	large := `{"pad":"` + strings.Repeat("x", 2*httpapi.MaxBodyBytes) + `"}`
	tooLarge := `{"pad":"` + strings.Repeat("x", bulkLimit) + `"}`
	tests := []struct {
		name, path, key, body string
		replayed              bool
	}{
		{"a money route", "/moves", uuid.NewString(), `{"amount":1}`, true},
		{"a body past MaxBodyBytes: the route's to refuse", "/moves", uuid.NewString(), large, false},
		{"a route that takes large bodies", "/moves/bulk", uuid.NewString(), large, true},
		{"a body past the route's limit", "/moves/bulk", uuid.NewString(), tooLarge, false},
		{"a route that moves no money", "/notes", uuid.NewString(), `{"amount":1}`, false},
		{"a route that moves no money, a bad key", "/notes", "", `{"amount":1}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			company := uuid.NewString()
			first := e.postTo(tt.path, company, tt.key, tt.body)
			if first.Code != 201 {
				t.Fatalf("first: %d %s", first.Code, first.Body)
			}
			calls := e.calls.Load()
			again := e.postTo(tt.path, company, tt.key, tt.body)
			if tt.replayed {
				e.same(first, again)
				if e.calls.Load() != calls {
					t.Fatal("the handler ran again")
				}
				return
			}
			if again.Code != 201 || again.Header().Get(idempotency.ReplayedHeader) != "" || e.calls.Load() != calls+1 {
				t.Fatalf("again: %d %v %s, the handler ran %d times more", again.Code, again.Header(), again.Body, e.calls.Load()-calls)
			}
		})
	}
}

// TestIdempotencyStoredOrReleased: which first answers are kept for
// replays and which release the key, by the catalogue's own errors.
func TestIdempotencyStoredOrReleased(t *testing.T) {
	e := newKeysTestEnv(t)
	tests := []struct {
		name   string
		answer error
		status int
		stored bool
	}{
		{"201", nil, 201, true},
		{"400", field.Invalid("amount", "must be at least 1"), 400, true},
		{"500", errors.New("lost the connection"), 500, true},
		{"503 without Retry-After", payments.ErrNoOperator, 503, true},
		{"502 with Retry-After", cards.ErrIssuerUnavailable, 502, false},
		{"409 CONFLICT with Retry-After", contention.ErrConflict, 409, false},
		{"503 with Retry-After", customers.ErrVerifierUnavailable, 503, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.set(tt.answer)
			company, key := uuid.NewString(), uuid.NewString()
			first := e.post(company, key, `{"amount":1}`)
			if first.Code != tt.status || first.Header().Get(idempotency.ReplayedHeader) != "" {
				t.Fatalf("first: %d %v %s", first.Code, first.Header(), first.Body)
			}
			calls := e.calls.Load()
			replays := strings.Count(e.metrics.String(), `"IdempotentReplays":1`)
			again := e.post(company, key, `{"amount":1}`)
			if n := strings.Count(e.metrics.String(), `"IdempotentReplays":1`) - replays; tt.stored != (n == 1) || n > 1 {
				t.Errorf("IdempotentReplays counted %d times", n)
			}
			if !tt.stored {
				if e.calls.Load() != calls+1 || again.Header().Get(idempotency.ReplayedHeader) != "" {
					t.Fatalf("the key was not released: %d %v", again.Code, again.Header())
				}
				return
			}
			e.same(first, again)
			if e.calls.Load() != calls {
				t.Fatal("the handler ran again")
			}
		})
	}
}

// TestIdempotencyLeaseAndRetention, on the injected clock: a request that
// still runs holds its key (409) until its lease ends; then a retry takes
// the key over and runs, and the first one's late answer is not stored. A
// record older than 24 h is ignored.
func TestIdempotencyLeaseAndRetention(t *testing.T) {
	e := newKeysTestEnv(t)
	logs := apptest.CaptureLogs(t)
	company, key, body := uuid.NewString(), "move-1", `{"amount":1}`
	held := make(chan chan struct{})
	e.mu.Lock()
	e.hold = held
	e.mu.Unlock()
	firstDone := make(chan *httptest.ResponseRecorder)
	go func() { firstDone <- e.post(company, key, body) }()
	release := <-held // the first request is in the handler

	busy := e.post(company, key, body)
	if busy.Code != 409 || busy.Header().Get("Retry-After") != "1" || !strings.Contains(busy.Body.String(), `"code":"IDEMPOTENCY_KEY_IN_USE"`) {
		t.Fatalf("while running: %d %v %s", busy.Code, busy.Header(), busy.Body)
	}
	if r := e.post(company, key, `{"amount":2}`); r.Code != 422 {
		t.Fatalf("another request while running: %d %s", r.Code, r.Body)
	}
	e.clock.Advance(idempotency.Lease - time.Millisecond)
	if r := e.post(company, key, body); r.Code != 409 {
		t.Fatalf("just before the lease ends: %d %s", r.Code, r.Body)
	}
	e.clock.Advance(time.Millisecond)
	second := e.post(company, key, body)
	if second.Code != 201 || second.Body.String() != "{\"call\":2}\n  " || second.Header().Get(idempotency.ReplayedHeader) != "" {
		t.Fatalf("takeover: %d %v %q", second.Code, second.Header(), second.Body)
	}
	close(release)
	if first := <-firstDone; first.Code != 201 || first.Body.String() != "{\"call\":1}\n  " {
		t.Fatalf("the first request's own answer: %d %q", first.Code, first.Body)
	}
	if !strings.Contains(strings.Join(logs.Lines(), "\n"), "idempotency: the lease ended before the request did") {
		t.Errorf("the lost lease was not logged: %v", logs.Lines())
	}
	e.same(second, e.post(company, key, body))

	e.clock.Advance(idempotency.Retention - time.Second)
	e.same(second, e.post(company, key, body))
	e.clock.Advance(time.Second)
	if r := e.post(company, key, `{"amount":3}`); r.Code != 201 || r.Body.String() != "{\"call\":3}\n  " {
		t.Fatalf("after 24 h, another request with the key: %d %q", r.Code, r.Body)
	}
	if e.calls.Load() != 3 {
		t.Fatalf("%d calls", e.calls.Load())
	}
}

// TestIdempotencyResponseTooLarge: a response over the bound is answered
// once; its replay says it was not kept, and the request does not run
// again.
func TestIdempotencyResponseTooLarge(t *testing.T) {
	e := newKeysTestEnv(t)
	company := uuid.NewString()
	size := fmt.Sprint(idempotency.MaxStoredBody)
	first := e.post(company, "big", "{}", "size="+size)
	if first.Code != 201 || first.Body.Len() <= idempotency.MaxStoredBody {
		t.Fatalf("first: %d, %d bytes", first.Code, first.Body.Len())
	}
	again := e.post(company, "big", "{}", "size="+size)
	if again.Code != 500 || again.Header().Get(idempotency.ReplayedHeader) != "true" ||
		!strings.Contains(again.Body.String(), `"code":"IDEMPOTENCY_RESPONSE_NOT_STORED"`) || e.calls.Load() != 1 {
		t.Fatalf("replay: %d %v %s (%d calls)", again.Code, again.Header(), again.Body, e.calls.Load())
	}
	// Just under the bound is kept whole.
	under := e.post(company, "under", "{}", "size=300000")
	e.same(under, e.post(company, "under", "{}", "size=300000"))
}
