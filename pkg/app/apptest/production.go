package apptest

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/uuid"

	"payments/pkg/function"
	"payments/pkg/function/operatorcallbacks"
	"payments/pkg/providers/operator/pawapay/pawapaysim"
)

// OperatorTestToken is the aggregator's API token of production test
// deployments.
const OperatorTestToken = "test-operator-api-token"

// ProductionTestEnv is PaymentsTestEnv in production mode (the console may
// credit wallets): its operator is the simulated pawaPay, served over HTTP
// on this machine, whose callbacks reach the operator-callbacks function
// through an HTTP server that hands them to it as API Gateway would.
type ProductionTestEnv struct {
	*PaymentsTestEnv
	// Sim is the simulated pawaPay; it finishes a payment when Settle
	// runs at least its delay after the initiation, on Clock.
	Sim   *pawapaysim.Sim
	Clock *Clock
	// Callbacks is the operator-callbacks function.
	Callbacks function.HTTPHandler
	// DropCallbacks makes the callbacks route answer 503 without calling
	// the function: a callback lost on its way.
	DropCallbacks atomic.Bool
	// CallbackURL is where the simulated pawaPay sends its callbacks.
	CallbackURL string

	mu      sync.Mutex
	answers []int // the statuses the callbacks were answered, in order
}

// Clock is a clock a test moves forward.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a Clock at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// SimDelay is how long the test deployments' simulated pawaPay takes to
// finish a payment, on ProductionTestEnv.Clock.
const SimDelay = 3 * time.Second

// NewProductionTestEnv returns a ProductionTestEnv over a fresh table and
// queues; every function records its AWS calls (Recording). The test fails
// if the adapter sent the simulated pawaPay a request off its documented
// format.
func NewProductionTestEnv(t *testing.T) *ProductionTestEnv {
	t.Helper()
	e := &ProductionTestEnv{Clock: NewClock(time.Now())}
	cb := httptest.NewServer(http.HandlerFunc(e.serveCallback))
	t.Cleanup(cb.Close)
	e.CallbackURL = cb.URL + "/api/v1/operator/callbacks/pawapay"
	sim, err := pawapaysim.New(pawapaysim.Config{
		Token: OperatorTestToken, CallbackURL: e.CallbackURL, Delay: SimDelay, Now: e.Clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	e.Sim = sim
	api := httptest.NewServer(sim)
	t.Cleanup(api.Close)
	t.Cleanup(func() {
		if v := sim.Violations(); len(v) > 0 {
			t.Errorf("requests off pawaPay's documented format: %v", v)
		}
	})
	e.PaymentsTestEnv = newPaymentsTestEnv(t, function.ModeProduction, func(cfg *function.Config) {
		cfg.OperatorBaseURL, cfg.OperatorAPIToken = api.URL, OperatorTestToken
		cfg.OperatorCallbackKey = string(sim.PublicKeyPEM())
		cfg.AdminCreditInProduction = true
	})
	if e.Callbacks, err = operatorcallbacks.New(context.Background(), Recording(e.Cfg, "operator-callbacks")); err != nil {
		t.Fatal(err)
	}
	return e
}

// Settle moves the clock past the simulated pawaPay's delay and has it
// finish what is then due and send the callbacks; it returns the
// deliveries that failed (a callback answered other than 2xx).
func (e *ProductionTestEnv) Settle() error {
	e.Clock.Advance(SimDelay)
	return e.Sim.Settle(context.Background())
}

// serveCallback hands an HTTP request to the operator-callbacks function
// as API Gateway would, unless DropCallbacks.
func (e *ProductionTestEnv) serveCallback(w http.ResponseWriter, r *http.Request) {
	if e.DropCallbacks.Load() || e.Callbacks == nil {
		http.Error(w, "unavailable", http.StatusServiceUnavailable)
		return
	}
	resp, err := e.Callbacks(r.Context(), GatewayEvent(r))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	for k, v := range resp.Headers {
		w.Header().Set(k, v)
	}
	e.mu.Lock()
	e.answers = append(e.answers, resp.StatusCode)
	e.mu.Unlock()
	w.WriteHeader(resp.StatusCode)
	io.WriteString(w, resp.Body)
}

// CallbackAnswers returns the statuses the function answered the
// callbacks with since the last call, in order.
func (e *ProductionTestEnv) CallbackAnswers() []int {
	e.mu.Lock()
	defer e.mu.Unlock()
	a := e.answers
	e.answers = nil
	return a
}

// GatewayEvent returns the API Gateway HTTP API event of r, as API Gateway
// hands a request to a function: header names in lower case, repeated
// values joined by commas, the body base64-encoded.
func GatewayEvent(r *http.Request) events.APIGatewayV2HTTPRequest {
	body, _ := io.ReadAll(r.Body)
	headers := map[string]string{"host": r.Host}
	for k, v := range r.Header {
		headers[strings.ToLower(k)] = strings.Join(v, ",")
	}
	return events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: r.Method + " " + r.URL.Path, RawPath: r.URL.Path, RawQueryString: r.URL.RawQuery,
		Headers: headers, Body: base64.StdEncoding.EncodeToString(body), IsBase64Encoded: true,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			Stage: "$default", RequestID: uuid.NewString(), DomainName: r.Host,
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: r.Method, Path: r.URL.Path, Protocol: "HTTP/1.1", SourceIP: "203.0.113.7"},
		},
	}
}
