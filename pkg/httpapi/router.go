package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"
)

// HandlerFunc is a route handler that returns its error instead of writing
// it; the router writes the catalogued error body.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// Guard admits a request or refuses it with an error (usually
// ErrUnauthorized). It may return a context carrying the caller's identity.
type Guard func(r *http.Request) (context.Context, error)

// Middleware wraps the handler of one route, after the guard admitted the
// request (the context carries the caller's identity). route is the route
// as Handle registered it, its pattern and what it declared of itself
// (RouteOption); next serves the route and writes its errors itself. The
// HandlerFunc returned serves the route instead, its error written through
// the catalogue; nil leaves the route as it is.
type Middleware func(route Route, next http.Handler) HandlerFunc

// A Route is a registered route as the router's middleware see it: its
// pattern and what it declared of itself where it was registered (Money,
// Reveal, BodyLimit). What follows from a declaration (the Idempotency-Key,
// the bucket a company's request draws on) is the middleware's.
type Route struct {
	pattern string
	money   bool
	reveal  func(*http.Request) bool // nil: the route reveals nothing
	maxBody int64                    // 0: MaxBodyBytes
}

// Pattern returns the route's pattern as given to Handle
// ("POST /cards/{id}/fund").
func (rt Route) Pattern() string { return rt.pattern }

// MovesMoney reports whether the route declared that it moves or reserves
// money (Money).
func (rt Route) MovesMoney() bool { return rt.money }

// Reveals reports whether r, a request to the route, reveals a secret (a
// card's number): whether the route declared Reveal, and its condition
// holds for r.
func (rt Route) Reveals(r *http.Request) bool {
	return rt.reveal != nil && rt.reveal(r)
}

// MaxBody returns the largest request body the route takes: MaxBodyBytes,
// unless it declared more (BodyLimit).
func (rt Route) MaxBody() int64 {
	if rt.maxBody > 0 {
		return rt.maxBody
	}
	return MaxBodyBytes
}

// A RouteOption declares something of a route where it is registered
// (Handle), for the router's middleware to read (Route).
type RouteOption func(*Route)

// Money declares that the route moves or reserves money.
func Money() RouteOption { return func(rt *Route) { rt.money = true } }

// Reveal declares that the route reveals a secret (a card's number) to the
// requests for which when is true; when nil, to every request. when reads
// only the request's URL and headers: the body is the route's.
func Reveal(when func(r *http.Request) bool) RouteOption {
	if when == nil {
		when = func(*http.Request) bool { return true }
	}
	return func(rt *Route) { rt.reveal = when }
}

// BodyLimit declares that the route takes request bodies of up to n bytes,
// more than MaxBodyBytes (a bulk batch): a middleware that reads the body
// reads that much. The route enforces its limit itself (ReadBodyLimit).
func BodyLimit(n int64) RouteOption {
	if n <= MaxBodyBytes {
		panic("httpapi: a body limit below MaxBodyBytes")
	}
	return func(rt *Route) { rt.maxBody = n }
}

// Router serves the routes of one function under BasePath.
type Router struct {
	mux        *http.ServeMux
	errors     Catalogue
	guard      Guard
	fallback   HandlerFunc
	middleware []Middleware
	routes     []Route
}

// NewRouter returns a router whose routes write errors through errors and,
// when guard is not nil, admit only the requests guard admits.
func NewRouter(errors Catalogue, guard Guard) *Router {
	return &Router{mux: http.NewServeMux(), errors: errors, guard: guard}
}

// Use adds mw to the middleware of every route: the first added is the
// outermost, and all run after the guard. Call it before any Handle.
func (rt *Router) Use(mw Middleware) {
	if len(rt.routes) > 0 {
		panic("httpapi: Use after Handle")
	}
	rt.middleware = append(rt.middleware, mw)
}

// Handle registers h for pattern, a Go 1.22 pattern relative to BasePath
// ("POST /wallets", "GET /wallet/transactions/{id}"), with what opts
// declare of the route ("POST /payment/payout" with Money()).
func (rt *Router) Handle(pattern string, h HandlerFunc, opts ...RouteOption) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		panic("httpapi: pattern needs a method: " + pattern)
	}
	route := Route{pattern: pattern}
	for _, opt := range opts {
		opt(&route)
	}
	rt.routes = append(rt.routes, route)
	serve := rt.serving(h)
	for i := len(rt.middleware) - 1; i >= 0; i-- {
		if wrapped := rt.middleware[i](route, serve); wrapped != nil {
			serve = rt.serving(wrapped)
		}
	}
	rt.mux.HandleFunc(method+" "+BasePath+path, func(w http.ResponseWriter, r *http.Request) {
		if rt.guard != nil {
			ctx, err := rt.guard(r)
			if err != nil {
				rt.errors.WriteError(w, r, err)
				return
			}
			if rec, ok := w.(*statusRecorder); ok {
				rec.caller = ctx // the request's log line names who it is
			}
			r = r.WithContext(ctx)
		}
		serve.ServeHTTP(w, r)
	})
}

// Routes returns the routes registered, in the order Handle registered
// them.
func (rt *Router) Routes() []Route { return slices.Clone(rt.routes) }

// serving returns h as an http.Handler that writes h's error through the
// catalogue.
func (rt *Router) serving(h HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			rt.errors.WriteError(w, r, err)
		}
	})
}

// Fallback makes h answer the requests no route matches, in place of the
// router's own 404 ROUTE_NOT_FOUND and 405 METHOD_NOT_ALLOWED. The guard
// does not run before h.
func (rt *Router) Fallback(h HandlerFunc) { rt.fallback = h }

// ServeHTTP routes r, answering unknown paths and methods with JSON errors,
// every answer with X-Content-Type-Options nosniff and Cache-Control
// no-store, and logs one line per request.
func (rt *Router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	// No browser reads a JSON or CSV answer as a page, and no cache keeps
	// one: answers are a company's own, and some carry secrets (a token, a
	// client_key, a signing secret, a card's number, a document's link).
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	h, pattern := rt.mux.Handler(r)
	switch {
	case pattern == "" && rt.fallback != nil:
		if err := rt.fallback(rec, r); err != nil {
			rt.errors.WriteError(rec, r, err)
		}
	case pattern == "":
		// The mux answers 404 and 405 in plain text; answer in JSON instead.
		rr := &statusRecorder{ResponseWriter: &discard{h: http.Header{}}, status: http.StatusOK}
		h.ServeHTTP(rr, r)
		err := ErrRouteNotFound
		if rr.status == http.StatusMethodNotAllowed {
			err = ErrMethodNotAllowed
			rec.Header().Set("Allow", rr.Header().Get("Allow"))
		}
		rt.errors.WriteError(rec, r, err)
	default:
		rt.mux.ServeHTTP(rec, r)
	}
	caller := r.Context()
	if rec.caller != nil {
		caller = rec.caller
	}
	logRequest(r.WithContext(caller), pattern, rec.status, time.Since(start))
}

// logRequest writes the one access log line: who made the request (the
// company, or the operator of the console) and what it got, but no
// headers, bodies, query strings or tokens, which may carry secrets or
// card data.
func logRequest(r *http.Request, pattern string, status int, d time.Duration) {
	attrs := []any{
		"method", r.Method,
		"route", pattern,
		"status", status,
		"duration_ms", d.Milliseconds(),
	}
	if id, ok := invocationID(r.Context()); ok {
		attrs = append(attrs, "request_id", id)
	}
	if id := companyID(r.Context()); id != "" {
		attrs = append(attrs, "company_id", id)
	}
	if who := Operator(r.Context()); who != "" {
		attrs = append(attrs, "operator", who)
	}
	slog.InfoContext(r.Context(), "request", attrs...)
}

type statusRecorder struct {
	http.ResponseWriter
	status int
	// caller is the context the guard admitted the request with, naming
	// its company or operator; nil before the guard, or without one.
	caller context.Context
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// discard is a ResponseWriter that keeps headers and drops the body.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header       { return d.h }
func (*discard) Write(b []byte) (int, error) { return len(b), nil }
func (*discard) WriteHeader(int)             {}
