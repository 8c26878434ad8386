// Package idempotencyhttp is the HTTP layer of pkg/idempotency: the
// Idempotency-Key middleware of the routes that move money.
package idempotencyhttp

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"payments/pkg/deadline"
	"payments/pkg/field"
	"payments/pkg/httpapi"
	"payments/pkg/idempotency"
	"payments/pkg/metrics"
)

// finishTimeout bounds the write of the outcome after the handler, which
// runs even when the request's work is over (deadline.Answer: until just
// before the invocation's own deadline, or this long without one): a key
// left in progress costs a retry the rest of the lease.
const finishTimeout = 5 * time.Second

// Keys serves the routes that move money with Idempotency-Key: those
// registered with httpapi.Money. Its Wrap is an httpapi.Middleware, which
// runs after the guard: a key belongs to the company of the caller's token.
type Keys struct {
	Store idempotency.Store
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Wrap returns the handler of route with Idempotency-Key, or nil when
// route moves no money (httpapi.Route.MovesMoney). A request without the
// header is served by next as it is. With one, the first request with the
// key runs, its context carrying the key it holds (WithHeld: the store
// records the request's Effect with its movement of money), and its
// response is stored (see Stored); the same request again gets that
// response with Idempotent-Replayed: true; another request with the key is
// ErrKeyReused; the same request while the first still runs is
// ErrKeyInUse. Once the first request's lease has ended, the same request
// takes the key over: when the first committed an effect, next runs with
// WithReplay and answers from it (Idempotent-Replayed: true), else it runs
// again. The request is hashed with its body, read up to the route's
// limit (httpapi.Route.MaxBody).
func (k *Keys) Wrap(route httpapi.Route, next http.Handler) httpapi.HandlerFunc {
	if !route.MovesMoney() {
		return nil
	}
	limit := route.MaxBody()
	return func(w http.ResponseWriter, r *http.Request) error {
		key, ok, err := ParseKey(r)
		if err != nil {
			return err
		}
		if !ok {
			next.ServeHTTP(w, r)
			return nil
		}
		companyID, err := httpapi.Company(r)
		if err != nil {
			return err
		}
		body, tooLarge, err := readBody(r, limit)
		if err != nil {
			return err
		}
		if tooLarge {
			// Every wrapped route refuses it (413) without doing anything.
			next.ServeHTTP(w, r)
			return nil
		}
		now := k.now()
		c := idempotency.Claim{
			RequestHash: idempotency.RequestHash(r.Method, r.URL.Path, body),
			LeaseID:     rand.Text(),
			Now:         now,
			LeaseUntil:  now.Add(idempotency.Lease),
			ExpiresAt:   now.Add(idempotency.Retention),
		}
		rec, claimed, err := k.Store.Claim(r.Context(), companyID, key, c)
		if err != nil {
			return err
		}
		if !claimed {
			return replay(r.Context(), w, rec, c.RequestHash)
		}
		ctx := idempotency.WithHeld(r.Context(), &idempotency.Held{CompanyID: companyID, Key: key, LeaseID: c.LeaseID})
		if rec.Effect.Committed() {
			// The first request committed its effect, then died before
			// its response was stored: answer from the effect.
			ctx = idempotency.WithReplay(ctx, rec.Effect)
		}
		out := &capture{header: http.Header{}}
		next.ServeHTTP(out, r.WithContext(ctx))
		if k.finish(r, companyID, key, c.LeaseID, out) && rec.Effect.Committed() {
			// The answer rebuilt from the effect is the first request's.
			w.Header().Set(idempotency.ReplayedHeader, "true")
		}
		out.sendTo(w)
		return nil
	}
}

func (k *Keys) now() time.Time {
	if k.Now != nil {
		return k.Now()
	}
	return time.Now()
}

// readBody reads r's body, at most limit bytes, and puts it back for the
// handler; a larger body is put back whole and reported.
func readBody(r *http.Request, limit int64) (body []byte, tooLarge bool, err error) {
	if r.Body == nil {
		return nil, false, nil
	}
	body, err = io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, false, field.Invalid("body", "could not be read")
	}
	rest := r.Body
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), rest), rest}
	return body, int64(len(body)) > limit, nil
}

// replay answers a request whose key rec holds, counted as
// IdempotentReplays when the stored response is sent.
func replay(ctx context.Context, w http.ResponseWriter, rec idempotency.Record, hash string) error {
	switch {
	case rec.RequestHash != hash:
		return idempotency.ErrKeyReused
	case rec.Response == nil:
		return idempotency.ErrKeyInUse
	}
	w.Header().Set(idempotency.ReplayedHeader, "true")
	resp := rec.Response
	if resp.Omitted {
		return idempotency.ErrResponseNotStored
	}
	if resp.ContentType != "" {
		w.Header().Set("Content-Type", resp.ContentType)
	}
	w.WriteHeader(resp.Status)
	w.Write(resp.Body)
	metrics.Count(ctx, metrics.IdempotentReplays)
	return nil
}

// finish stores the response out of the claim leaseID, or releases the
// key when the response asks to be retried, and reports whether it is a
// response to store. A failure is logged: the response is sent all the
// same, and the key stays in progress until the lease ends, as if the
// function had died.
func (k *Keys) finish(r *http.Request, companyID, key, leaseID string, out *capture) (stored bool) {
	ctx, cancel := deadline.Answer(r.Context(), finishTimeout)
	defer cancel()
	status, header := out.result()
	stored = Stored(status, header)
	var err error
	if stored {
		resp := idempotency.Response{Status: status, ContentType: header.Get("Content-Type"), Body: out.body.Bytes()}
		if len(resp.Body) > idempotency.MaxStoredBody {
			resp.Body, resp.Omitted = nil, true
			slog.WarnContext(ctx, "idempotency: response too large to keep; a replay answers IDEMPOTENCY_RESPONSE_NOT_STORED",
				"route", r.Pattern, "bytes", out.body.Len())
		}
		err = k.Store.Complete(ctx, companyID, key, leaseID, resp)
	} else {
		err = k.Store.Release(ctx, companyID, key, leaseID)
	}
	switch {
	case errors.Is(err, idempotency.ErrLeaseLost):
		slog.WarnContext(ctx, "idempotency: the lease ended before the request did; another request took the key over",
			"route", r.Pattern, "status", status)
	case err != nil:
		slog.ErrorContext(ctx, "idempotency: could not record the outcome; the key stays in progress until its lease ends",
			"route", r.Pattern, "status", status, "stored", stored, "error", err)
	}
	return stored
}

// capture is a ResponseWriter that keeps the response, bytes as written,
// for the store and then the client.
type capture struct {
	header http.Header // the handler's, until it writes
	sent   http.Header // the headers as they were when it wrote
	status int
	body   bytes.Buffer
}

func (c *capture) Header() http.Header { return c.header }

func (c *capture) WriteHeader(status int) {
	if c.sent == nil {
		c.status, c.sent = status, c.header.Clone()
	}
}

func (c *capture) Write(b []byte) (int, error) {
	c.WriteHeader(http.StatusOK)
	return c.body.Write(b)
}

// result returns the status and headers sent: 200 and the current headers
// for a handler that wrote nothing.
func (c *capture) result() (int, http.Header) {
	c.WriteHeader(http.StatusOK)
	return c.status, c.sent
}

// sendTo writes the kept response to w.
func (c *capture) sendTo(w http.ResponseWriter) {
	status, header := c.result()
	for name, values := range header {
		w.Header()[name] = values
	}
	w.WriteHeader(status)
	w.Write(c.body.Bytes())
}

// ParseKey returns the key of r's Idempotency-Key header and whether it has
// one. A key is 1 to MaxKeyLength printable ASCII characters, sent once;
// anything else is a 400 naming the header. API Gateway joins a repeated
// header with commas, which the Lambda adapter splits again, so a key
// cannot hold a comma.
func ParseKey(r *http.Request) (string, bool, error) {
	values := r.Header.Values(idempotency.Header)
	if len(values) == 0 {
		return "", false, nil
	}
	bad := field.Invalid(idempotency.Header, "must be 1 to "+strconv.Itoa(idempotency.MaxKeyLength)+" printable ASCII characters")
	if len(values) > 1 {
		return "", true, bad
	}
	key := values[0]
	if key == "" || len(key) > idempotency.MaxKeyLength {
		return "", true, bad
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x20 || key[i] > 0x7e {
			return "", true, bad
		}
	}
	return key, true, nil
}

// Stored reports whether a response is stored for replays: every response
// but those that ask to be retried shortly, with Retry-After (the
// catalogue's CONFLICT, its unavailable answers, the card issuer's
// CARD_ISSUER_UNAVAILABLE). Their key is released instead: deleted when
// the request committed nothing, so that the retry runs it; its lease
// only ended when it committed its Effect (a card funding the issuer has
// not answered yet), so that the retry answers from the effect, carrying
// the movement on. A 5xx without Retry-After may have moved money: it is
// stored, and replayed.
func Stored(_ int, h http.Header) bool {
	return h.Get("Retry-After") == ""
}
