package companyroutes_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"payments/pkg/apidoc/apitest"
	"payments/pkg/auth/authhttp"
	"payments/pkg/bulk/bulkhttp"
	"payments/pkg/cards/cardshttp"
	"payments/pkg/companies/companieshttp"
	"payments/pkg/customers/customershttp"
	"payments/pkg/debts/debtshttp"
	"payments/pkg/fees/feeshttp"
	"payments/pkg/function"
	"payments/pkg/function/companyroutes"
	"payments/pkg/function/paymentsapi"
	"payments/pkg/fx/fxhttp"
	"payments/pkg/httpapi"
	"payments/pkg/limits"
	"payments/pkg/limits/limitshttp"
	"payments/pkg/metrics"
	"payments/pkg/payments/paymentshttp"
	"payments/pkg/reconcile/reconcilehttp"
	"payments/pkg/store/storetest"
	"payments/pkg/wallets/walletshttp"
	"payments/pkg/webhooks/webhookshttp"
)

// testClock is a clock the test moves.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// limitedRouter is a company router as companyroutes.Router builds it,
// its guard taking the company from X-Company instead of a token, over
// routes of each class; GET /missing answers an error of the route.
func limitedRouter(t *testing.T, mw httpapi.Middleware) http.Handler {
	t.Helper()
	guard := func(r *http.Request) (context.Context, error) {
		id := r.Header.Get("X-Company")
		if id == "" {
			return nil, httpapi.ErrUnauthorized
		}
		return httpapi.WithCompany(r.Context(), id), nil
	}
	rt := httpapi.NewRouter(paymentsapi.Errors, guard)
	rt.Use(mw)
	ok := func(w http.ResponseWriter, r *http.Request) error {
		httpapi.Respond(w, http.StatusOK, "ok", nil)
		return nil
	}
	rt.Handle("GET /wallets", ok)
	rt.Handle("POST /payment/payout", ok, httpapi.Money())
	rt.Handle("GET /cards/{id}", ok, httpapi.Reveal(cardshttp.Revealing))
	rt.Handle("GET /missing", func(http.ResponseWriter, *http.Request) error { return httpapi.ErrRouteNotFound })
	return rt
}

// TestCompanyLimitsOverHTTP: every answer to a company carries its route
// class's RateLimit-Limit and RateLimit-Remaining, errors included; past its
// burst a class is 429 RATE_LIMITED with Retry-After in whole seconds
// (counted as RateLimited by class) while the company's other classes and
// other companies are served; a request without a company is refused by
// the guard before any bucket is drawn on.
func TestCompanyLimitsOverHTTP(t *testing.T) {
	db := storetest.NewDB(t)
	clock := &testClock{now: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
	cfg := function.Config{CompanyLimits: limits.Limits{
		Read:   limits.Limit{Rate: 10, Burst: 4},
		Money:  limits.Limit{Rate: 1, Burst: 2},
		Reveal: limits.Limit{Rate: 1, Burst: 1},
	}}
	mw, err := companyroutes.Limits(cfg, db, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	h := limitedRouter(t, mw)
	var emf bytes.Buffer
	rec := metrics.New(metrics.SyncWriter(&emf), "payments/test", "payments")

	steps := []struct {
		name                   string
		advance                time.Duration
		company, method, path  string
		status                 int
		code, limit, remaining string
		retryAfter             string // "" for none
	}{
		{"a payout", 0, "co_a", "POST", "/payment/payout", 200, "", "2", "1", ""},
		{"the burst's last", 0, "co_a", "POST", "/payment/payout", 200, "", "2", "0", ""},
		{"past the burst", 0, "co_a", "POST", "/payment/payout", 429, "RATE_LIMITED", "2", "0", "1"},
		{"a read of the same company", 0, "co_a", "GET", "/wallets", 200, "", "4", "3", ""},
		{"another company's payout", 0, "co_b", "POST", "/payment/payout", 200, "", "2", "1", ""},
		{"a route's own error carries the headers", 0, "co_a", "GET", "/missing", 404, "ROUTE_NOT_FOUND", "4", "2", ""},
		{"a card read is a read", 0, "co_a", "GET", "/cards/card_1", 200, "", "4", "1", ""},
		{"a reveal", 0, "co_a", "GET", "/cards/card_1?reveal=true", 200, "", "1", "0", ""},
		{"a second reveal at once", 0, "co_a", "GET", "/cards/card_1?reveal=true", 429, "RATE_LIMITED", "1", "0", "1"},
		{"a partial wait is a whole second", 300 * time.Millisecond, "co_a", "POST", "/payment/payout", 429, "RATE_LIMITED", "2", "0", "1"},
		{"refilled", 700 * time.Millisecond, "co_a", "POST", "/payment/payout", 200, "", "2", "0", ""},
		{"no company: 401 without the headers", 0, "", "GET", "/wallets", 401, "UNAUTHORIZED", "", "", ""},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			clock.Add(s.advance)
			req := httptest.NewRequest(s.method, httpapi.BasePath+s.path, strings.NewReader("{}"))
			req = req.WithContext(metrics.NewContext(req.Context(), rec))
			if s.company != "" {
				req.Header.Set("X-Company", s.company)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			var body struct{ Code string }
			_ = json.Unmarshal(w.Body.Bytes(), &body)
			if w.Code != s.status || body.Code != s.code {
				t.Fatalf("%d %s, want %d %s: %s", w.Code, body.Code, s.status, s.code, w.Body)
			}
			got := [3]string{w.Header().Get("RateLimit-Limit"), w.Header().Get("RateLimit-Remaining"), w.Header().Get("Retry-After")}
			if want := [3]string{s.limit, s.remaining, s.retryAfter}; got != want {
				t.Fatalf("RateLimit-Limit, RateLimit-Remaining, Retry-After = %q, want %q", got, want)
			}
		})
	}

	counted := map[string]float64{}
	for line := range bytes.Lines(emf.Bytes()) {
		samples, err := metrics.Parse(line)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range samples {
			if s.Name == metrics.RateLimited {
				for _, v := range s.Values {
					counted[s.Dimensions["Class"]] += v
				}
			}
		}
	}
	if want := map[string]float64{"money": 2, "reveal": 1}; !equalCounts(counted, want) {
		t.Errorf("RateLimited by class = %v, want %v", counted, want)
	}
}

func equalCounts(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// failingBuckets is a table that cannot be reached.
type failingBuckets struct{}

func (failingBuckets) Take(context.Context, string, limits.Class, limits.Limit, time.Time) (limits.Decision, error) {
	return limits.Decision{}, errors.New("injected fault: table unavailable")
}

// TestCompanyLimitsFailOpen: when the buckets cannot be read, the request
// is served (never a 5xx or a 429 for every request), says the whole burst
// remains, and is counted as RateLimiterUnavailable.
func TestCompanyLimitsFailOpen(t *testing.T) {
	m := &limitshttp.Middleware{Buckets: failingBuckets{}, Limits: limits.Defaults, Classify: companyroutes.Class, Now: time.Now}
	h := limitedRouter(t, m.Wrap)
	var emf bytes.Buffer
	rec := metrics.New(metrics.SyncWriter(&emf), "payments/test", "payments")
	req := httptest.NewRequest("POST", httpapi.BasePath+"/payment/payout", strings.NewReader("{}"))
	req = req.WithContext(metrics.NewContext(req.Context(), rec))
	req.Header.Set("X-Company", "co_a")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != 200 || w.Header().Get("RateLimit-Limit") != "20" || w.Header().Get("RateLimit-Remaining") != "20" {
		t.Fatalf("%d, RateLimit-Limit %q, RateLimit-Remaining %q; want 200, 20, 20", w.Code, w.Header().Get("RateLimit-Limit"), w.Header().Get("RateLimit-Remaining"))
	}
	if !strings.Contains(emf.String(), `"`+metrics.RateLimiterUnavailable+`"`) || !strings.Contains(emf.String(), `"Class":"money"`) {
		t.Errorf("no RateLimiterUnavailable with Class money in %s", emf.String())
	}
}

// TestRouteClass: the one rule of route classes, over the routes as their
// packages register them: a reveal (GET /cards/{id}?reveal=true, a reveal
// session) is Reveal, the routes that move money are Money, and they are
// exactly the routes the contract (docs/openapi.yaml) gives an
// Idempotency-Key; every other route is Read.
func TestRouteClass(t *testing.T) {
	// Every route package, each on a router of its own, as the functions
	// mount them (their services are not called here).
	registrations := []func(rt *httpapi.Router){
		func(rt *httpapi.Router) { paymentshttp.Routes(rt, nil) },
		func(rt *httpapi.Router) { paymentshttp.AdminRoutes(rt, nil) },
		func(rt *httpapi.Router) { bulkhttp.Routes(rt, nil) },
		func(rt *httpapi.Router) { cardshttp.Routes(rt, nil) },
		func(rt *httpapi.Router) { cardshttp.SandboxRoutes(rt, nil) },
		func(rt *httpapi.Router) { walletshttp.Routes(rt, nil) },
		func(rt *httpapi.Router) { walletshttp.PaymentRoutes(rt, nil) },
		func(rt *httpapi.Router) { walletshttp.AdminRoutes(rt, nil) },
		func(rt *httpapi.Router) { fxhttp.Routes(rt, nil) },
		func(rt *httpapi.Router) { fxhttp.ConversionRoutes(rt, nil) },
		func(rt *httpapi.Router) { fxhttp.AdminRoutes(rt, nil, nil) },
		func(rt *httpapi.Router) { feeshttp.Routes(rt, nil, nil) },
		func(rt *httpapi.Router) { feeshttp.AdminRoutes(rt, nil, nil) },
		func(rt *httpapi.Router) { debtshttp.Routes(rt, nil) },
		func(rt *httpapi.Router) { customershttp.Routes(rt, nil) },
		func(rt *httpapi.Router) { customershttp.ReviewRoutes(rt, nil) },
		func(rt *httpapi.Router) { webhookshttp.Routes(rt, nil) },
		func(rt *httpapi.Router) { webhookshttp.EndpointRoutes(rt, nil) },
		func(rt *httpapi.Router) { webhookshttp.AdminRoutes(rt, nil) },
		func(rt *httpapi.Router) { companieshttp.AdminRoutes(rt, nil, nil) },
		func(rt *httpapi.Router) { reconcilehttp.AdminRoutes(rt, nil) },
		func(rt *httpapi.Router) { authhttp.Routes(rt, nil) },
	}
	routes := map[string]httpapi.Route{}
	for _, register := range registrations {
		rt := httpapi.NewRouter(nil, nil)
		register(rt)
		for _, route := range rt.Routes() {
			routes[route.Pattern()] = route
		}
	}
	tests := []struct {
		pattern, query string
		want           limits.Class
	}{
		{"GET /wallets", "", limits.Read},
		{"POST /customers", "", limits.Read},
		{"PUT /cards/{id}/freeze", "", limits.Read},
		{"POST /webhooks/endpoints", "", limits.Read},
		{"GET /cards/{id}", "", limits.Read},
		{"GET /cards/{id}", "reveal=false", limits.Read},
		{"GET /cards/{id}", "reveal=yes", limits.Read}, // refused 400 by the route
		{"GET /cards/{id}", "reveal=true", limits.Reveal},
		{"POST /cards/{id}/reveal-sessions", "", limits.Reveal},
		{"GET /cards/{id}/reveals", "reveal=true", limits.Read},
		{"POST /partner/wallets/preview-conversion", "", limits.Read},
	}
	money := apitest.Default(t).IdempotentRoutes()
	if len(money) == 0 {
		t.Fatal("the contract gives no route an Idempotency-Key")
	}
	for _, p := range money {
		tests = append(tests, struct {
			pattern, query string
			want           limits.Class
		}{p, "", limits.Money})
	}
	for _, tt := range tests {
		route, ok := routes[tt.pattern]
		if !ok {
			t.Errorf("no route package registers %s", tt.pattern)
			continue
		}
		r := httptest.NewRequest("GET", "/x?"+tt.query, nil)
		if got := companyroutes.Class(route, r); got != tt.want {
			t.Errorf("RouteClass(%s ?%s) = %s, want %s", tt.pattern, tt.query, got, tt.want)
		}
	}
	for pattern, route := range routes {
		if route.MovesMoney() && !slices.Contains(money, pattern) {
			t.Errorf("%s moves money, but docs/openapi.yaml gives it no Idempotency-Key", pattern)
		}
	}
}

// TestCompanyLimitsRefuseABadLimit: a function does not start with a limit
// below 1/1.
func TestCompanyLimitsRefuseABadLimit(t *testing.T) {
	cfg := function.Config{CompanyLimits: limits.Defaults}
	cfg.CompanyLimits.Reveal = limits.Limit{}
	if _, err := companyroutes.Limits(cfg, nil, time.Now); !errors.Is(err, function.ErrConfig) {
		t.Fatalf("error %v, want function.ErrConfig", err)
	}
}
