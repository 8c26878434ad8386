package httpapi

import (
	"context"
	"log/slog"
	"net/http"
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
// request (the context carries the caller's identity). pattern is the
// route's pattern as given to Handle ("POST /cards/{id}/fund"); next serves
// the route and writes its errors itself. The HandlerFunc returned serves
// the route instead, its error written through the catalogue; nil leaves
// the route as it is.
type Middleware func(pattern string, next http.Handler) HandlerFunc

// Router serves the routes of one function under BasePath.
type Router struct {
	mux        *http.ServeMux
	errors     Catalogue
	guard      Guard
	fallback   HandlerFunc
	middleware []Middleware
	routes     int
}

// NewRouter returns a router whose routes write errors through errors and,
// when guard is not nil, admit only the requests guard admits.
func NewRouter(errors Catalogue, guard Guard) *Router {
	return &Router{mux: http.NewServeMux(), errors: errors, guard: guard}
}

// Use adds mw to the middleware of every route: the first added is the
// outermost, and all run after the guard. Call it before any Handle.
func (rt *Router) Use(mw Middleware) {
	if rt.routes > 0 {
		panic("httpapi: Use after Handle")
	}
	rt.middleware = append(rt.middleware, mw)
}

// Handle registers h for pattern, a Go 1.22 pattern relative to BasePath
// ("POST /wallets", "GET /wallet/transactions/{id}").
func (rt *Router) Handle(pattern string, h HandlerFunc) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		panic("httpapi: pattern needs a method: " + pattern)
	}
	rt.routes++
	serve := rt.serving(h)
	for i := len(rt.middleware) - 1; i >= 0; i-- {
		if wrapped := rt.middleware[i](pattern, serve); wrapped != nil {
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
			r = r.WithContext(ctx)
		}
		serve.ServeHTTP(w, r)
	})
}

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
	logRequest(r, pattern, rec.status, time.Since(start))
}

// logRequest writes the one access log line: no headers, bodies, query
// strings or tokens, which may carry secrets or card data.
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
	slog.InfoContext(r.Context(), "request", attrs...)
}

type statusRecorder struct {
	http.ResponseWriter
	status int
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
