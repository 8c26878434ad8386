// Package limitshttp is the HTTP layer of pkg/limits: the middleware
// that holds each company route to the company's limits.
package limitshttp

import (
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"payments/pkg/httpapi"
	"payments/pkg/limits"
	"payments/pkg/metrics"
)

// The answer's headers, as the IETF draft "RateLimit header fields for
// HTTP" names them.
const (
	HeaderLimit     = "RateLimit-Limit"
	HeaderRemaining = "RateLimit-Remaining"
)

// Middleware limits each company's requests. Buckets keeps the buckets,
// Limits sets them, Classify says the class of a request to a route (as
// the router registered it, with what it declared of itself), and Now is
// the clock.
type Middleware struct {
	Buckets  limits.Bucket
	Limits   limits.Limits
	Classify func(route httpapi.Route, r *http.Request) limits.Class
	Now      func() time.Time
}

// Wrap is the httpapi.Middleware: it runs after the token guard, takes a
// token of the route's class from the company's bucket, writes
// RateLimit-Limit (the class's burst) and RateLimit-Remaining on the
// answer whatever it is, and answers an empty bucket with an *Error
// (counted as RateLimited, by class) instead of serving the route.
//
// A bucket that cannot be read or written (the table unavailable) admits
// the request: it is counted (RateLimiterUnavailable) and logged, and
// RateLimit-Remaining says the whole burst. A limit that failed closed
// would turn a table's trouble into every route's 429, the routes
// themselves failing anyway when the table is down; the API's throttles
// (template.yaml) still bound the stage.
func (m *Middleware) Wrap(route httpapi.Route, next http.Handler) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		company, err := httpapi.Company(r)
		if err != nil {
			return err // no company: the guard did not run
		}
		ctx := r.Context()
		class := m.Classify(route, r)
		lim := m.Limits.For(class)
		d, err := m.Buckets.Take(ctx, company, class, lim, m.Now())
		if err != nil {
			metrics.Count(ctx, metrics.RateLimiterUnavailable, metrics.RouteClass(string(class)))
			slog.WarnContext(ctx, "rate limit not applied: the bucket is unavailable", "class", class, "error", err)
			d = limits.Decision{Allowed: true, Remaining: lim.Burst}
		}
		w.Header().Set(HeaderLimit, strconv.Itoa(lim.Burst))
		w.Header().Set(HeaderRemaining, strconv.Itoa(d.Remaining))
		if !d.Allowed {
			metrics.Count(ctx, metrics.RateLimited, metrics.RouteClass(string(class)))
			return &limits.Error{Class: class, RetryAfter: d.RetryAfter}
		}
		next.ServeHTTP(w, r)
		return nil
	}
}
