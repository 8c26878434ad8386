// Package pawapaysim is simulated pawaPay: a contract fake of pawaPay's
// Merchant API v2, written from its documentation (docs/providers.md), that
// the pawaPay adapter is tested against and that local runs may stand in
// for pawaPay with. It is an http.Handler keeping its own payouts and
// deposits in memory, apart from our records, as pawaPay would.
//
// It checks the bearer token, validates every initiation against the
// documented request (a refusal is answered REJECTED as pawaPay answers,
// 400 for a malformed request and 200 for one the provider cannot serve,
// and recorded: Violations) and decides by the last digits of the phone
// number, as the sandbox operator does (the README's table):
//
//   - 000: FAILED (RECIPIENT_NOT_FOUND for a payout, PAYER_NOT_FOUND for a
//     deposit), with a callback;
//   - 999: SUBMITTED for ever, no callback (as the v2 sandbox test numbers
//     page shows its stuck numbers);
//   - 998: completes with a callback, but every status check answers 500;
//   - anything else: COMPLETED, with a callback.
//
// It answers GET /v2/wallet-balances with one wallet per country it serves,
// holding Config.Float less the payouts it completed, plus the deposits.
//
// An outcome becomes final Delay after initiation, on the injected clock,
// when Settle runs (every request runs it first; Run runs it on a ticker).
// Callbacks are signed as pawaPay signs them (RFC 9421, ecdsa-p256-sha256,
// the signature DER-encoded as pawaPay's signature example verifies it)
// with the simulation's own key: PublicKeyPEM is what a verifier needs.
package pawapaysim

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// DefaultDelay is how long a payment stays ACCEPTED when Config.Delay is zero.
const DefaultDelay = 3 * time.Second

// Config configures the simulation.
type Config struct {
	// Token is the API token it accepts. Required.
	Token string
	// CallbackURL receives the callbacks; "" sends none.
	CallbackURL string
	// Delay is how long after initiation an outcome becomes final; zero:
	// DefaultDelay. Tests advance Now instead of waiting.
	Delay time.Duration
	// Now returns the current time; nil: time.Now.
	Now func() time.Time
	// Key signs callbacks; nil: a new key (GenerateKey).
	Key *ecdsa.PrivateKey
	// KeyID names Key in Signature-Input; "": "pawapaysim".
	KeyID string
	// Client posts callbacks; nil: a client with a 5 s time-out.
	Client *http.Client
	// Float is what each country wallet held before any payment, in major
	// units of its currency; zero: DefaultFloat (GET /v2/wallet-balances).
	Float int64
}

// Outcomes decided at initiation, by the phone number.
const (
	outcomeComplete    = "complete"
	outcomeFail        = "fail"
	outcomeHang        = "hang"
	outcomeUnreachable = "unreachable"
)

// record is one payout or deposit as the simulation keeps it.
type record struct {
	kind        string // "payout" or "deposit"
	in          initiation
	outcome     string
	status      string
	failureCode string
	created     time.Time
	due         time.Time
	final       bool
}

// Sim is simulated pawaPay.
type Sim struct {
	cfg    Config
	mux    *http.ServeMux
	mu     sync.Mutex
	held   map[string]*record // by kind + "/" + id
	broken []string           // what Violations returns
	inject []injected
}

// injected is an answer given instead of the real one (FailNext).
type injected struct {
	status     int
	retryAfter string
}

// New returns simulated pawaPay for c.
func New(c Config) (*Sim, error) {
	if c.Token == "" {
		return nil, errors.New("pawapaysim: Token is required")
	}
	if c.Delay == 0 {
		c.Delay = DefaultDelay
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Key == nil {
		k, err := GenerateKey()
		if err != nil {
			return nil, err
		}
		c.Key = k
	}
	if c.KeyID == "" {
		c.KeyID = "pawapaysim"
	}
	if c.Float == 0 {
		c.Float = DefaultFloat
	}
	if c.Client == nil {
		c.Client = &http.Client{Timeout: 5 * time.Second}
	}
	s := &Sim{cfg: c, mux: http.NewServeMux(), held: map[string]*record{}}
	for _, kind := range []string{"payout", "deposit"} {
		s.mux.HandleFunc("POST /v2/"+kind+"s", s.initiate(kind))
		s.mux.HandleFunc("GET /v2/"+kind+"s/{id}", s.status(kind))
		s.mux.HandleFunc("POST /v2/"+kind+"s/resend-callback/{id}", s.resend(kind))
	}
	s.mux.HandleFunc("GET /v2/wallet-balances", s.balances)
	return s, nil
}

// Violations returns every request simulated pawaPay refused as not of the
// documented format, oldest first: a test asserts there are none.
func (s *Sim) Violations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.broken)
}

// Held returns how many payments of kind ("payout" or "deposit") the
// simulation holds.
func (s *Sim) Held(kind string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.held {
		if r.kind == kind {
			n++
		}
	}
	return n
}

// FailNext answers the next n requests with status (a 5xx, or 429 with
// retryAfter as its Retry-After header) instead of handling them.
func (s *Sim) FailNext(status int, retryAfter string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.inject = append(s.inject, injected{status, retryAfter})
	}
}

// ServeHTTP settles what is due, checks the token, then answers r.
func (s *Sim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_ = s.Settle(r.Context()) // a callback not delivered can be resent
	s.mu.Lock()
	if len(s.inject) > 0 {
		in := s.inject[0]
		s.inject = s.inject[1:]
		s.mu.Unlock()
		if in.retryAfter != "" {
			w.Header().Set("Retry-After", in.retryAfter)
		}
		w.WriteHeader(in.status)
		return
	}
	s.mu.Unlock()
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	switch {
	case !ok || token == "":
		writeJSON(w, http.StatusUnauthorized, failure("NO_AUTHENTICATION", "no API token in the request"))
		return
	case token != s.cfg.Token:
		writeJSON(w, http.StatusForbidden, failure("AUTHENTICATION_ERROR", "the API token is not valid"))
		return
	}
	s.mux.ServeHTTP(w, r)
}

func failure(code, message string) map[string]any {
	return map[string]any{"failureReason": map[string]string{"failureCode": code, "failureMessage": message}}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// initiate answers POST /v2/payouts and POST /v2/deposits.
func (s *Sim) initiate(kind string) http.HandlerFunc {
	idField, partyField, optional := "payoutId", "recipient", []string(nil)
	if kind == "deposit" {
		idField, partyField, optional = "depositId", "payer", []string{"preAuthorisationCode"}
	}
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := readBody(r)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, failure("INVALID_INPUT", "the body could not be read"))
			return
		}
		in, rej := validate(body, idField, partyField, optional)
		if rej != nil {
			s.mu.Lock()
			s.broken = append(s.broken, fmt.Sprintf("POST /v2/%ss: %s", kind, rej))
			s.mu.Unlock()
			answer := failure(rej.code, rej.message)
			answer["status"] = "REJECTED"
			if in.id != "" {
				answer[idField] = in.id
			}
			writeJSON(w, rej.status, answer)
			return
		}
		now := s.cfg.Now().UTC()
		s.mu.Lock()
		defer s.mu.Unlock()
		if old, ok := s.held[kind+"/"+in.id]; ok {
			writeJSON(w, http.StatusOK, map[string]any{idField: in.id, "status": "DUPLICATE_IGNORED", "created": old.created.Format(time.RFC3339)})
			return
		}
		rec := &record{kind: kind, in: in, outcome: outcomeOf(in.phone), status: "ACCEPTED", created: now, due: now.Add(s.cfg.Delay)}
		s.held[kind+"/"+in.id] = rec
		writeJSON(w, http.StatusOK, map[string]any{idField: in.id, "status": "ACCEPTED", "created": now.Format(time.RFC3339)})
	}
}

// outcomeOf decides by the phone number's last digits (the README's table).
func outcomeOf(phone string) string {
	switch {
	case strings.HasSuffix(phone, "000"):
		return outcomeFail
	case strings.HasSuffix(phone, "999"):
		return outcomeHang
	case strings.HasSuffix(phone, "998"):
		return outcomeUnreachable
	}
	return outcomeComplete
}

// status answers GET /v2/payouts/{id} and GET /v2/deposits/{id}.
func (s *Sim) status(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		rec, ok := s.held[kind+"/"+r.PathValue("id")]
		var data map[string]any
		if ok {
			data = rec.data()
		}
		s.mu.Unlock()
		switch {
		case !ok:
			writeJSON(w, http.StatusOK, map[string]any{"status": "NOT_FOUND"})
		case rec.outcome == outcomeUnreachable:
			writeJSON(w, http.StatusInternalServerError, failure("UNKNOWN_ERROR", "simulated: the status of this payment cannot be read"))
		default:
			writeJSON(w, http.StatusOK, map[string]any{"status": "FOUND", "data": data})
		}
	}
}

// resend answers POST /v2/payouts/resend-callback/{id} and its deposit twin:
// ACCEPTED, or REJECTED with NOT_FOUND or INVALID_STATE (the v2 resend
// callback pages document no other status). The callback is posted before
// the answer; a delivery that fails is answered ACCEPTED all the same, as
// pawaPay accepts the request and delivers on its own.
func (s *Sim) resend(kind string) http.HandlerFunc {
	idField := kind + "Id"
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		s.mu.Lock()
		rec, ok := s.held[kind+"/"+id]
		var data map[string]any
		if ok {
			data = rec.data()
		}
		s.mu.Unlock()
		switch {
		case !ok:
			writeJSON(w, http.StatusOK, mergeFailure(map[string]any{idField: id, "status": "REJECTED"}, "NOT_FOUND", "no such "+kind))
			return
		case !rec.final:
			writeJSON(w, http.StatusOK, mergeFailure(map[string]any{idField: id, "status": "REJECTED"}, "INVALID_STATE", "the "+kind+" is not final"))
			return
		}
		_ = s.deliver(r.Context(), data)
		writeJSON(w, http.StatusOK, map[string]any{idField: id, "status": "ACCEPTED"})
	}
}

func mergeFailure(m map[string]any, code, message string) map[string]any {
	m["failureReason"] = map[string]string{"failureCode": code, "failureMessage": message}
	return m
}

// data is the payment as a status check's data and a callback carry it.
func (r *record) data() map[string]any {
	idField, partyField := "payoutId", "recipient"
	if r.kind == "deposit" {
		idField, partyField = "depositId", "payer"
	}
	d := map[string]any{
		idField:    r.in.id,
		"status":   r.status,
		"amount":   r.in.amount,
		"currency": r.in.currency,
		"country":  providers[r.in.provider].country,
		partyField: r.in.account,
		"created":  r.created.Format(time.RFC3339),
	}
	if r.status == "COMPLETED" {
		d["providerTransactionId"] = "SIM-" + r.in.id[:8]
	}
	if r.failureCode != "" {
		d["failureReason"] = map[string]string{"failureCode": r.failureCode, "failureMessage": "simulated failure"}
	}
	if len(r.in.metadata) > 0 {
		meta := map[string]any{}
		for _, item := range r.in.metadata {
			for k, v := range item {
				if k != "isPII" {
					meta[k] = v
				}
			}
		}
		d["metadata"] = meta
	}
	return d
}

// Settle makes final every payment whose delay has passed and posts its
// callback; it returns the deliveries that failed.
func (s *Sim) Settle(ctx context.Context) error {
	now := s.cfg.Now()
	var callbacks []map[string]any
	s.mu.Lock()
	for _, r := range s.held {
		if r.final || r.status == "SUBMITTED" || now.Before(r.due) {
			continue
		}
		switch r.outcome {
		case outcomeHang:
			r.status = "SUBMITTED"
			continue
		case outcomeFail:
			r.status, r.final = "FAILED", true
			r.failureCode = "RECIPIENT_NOT_FOUND"
			if r.kind == "deposit" {
				r.failureCode = "PAYER_NOT_FOUND"
			}
		default:
			r.status, r.final = "COMPLETED", true
		}
		callbacks = append(callbacks, r.data())
	}
	s.mu.Unlock()
	var errs []error
	for _, cb := range callbacks {
		errs = append(errs, s.deliver(ctx, cb))
	}
	return errors.Join(errs...)
}

// Run settles every interval until ctx ends, for local runs.
func (s *Sim) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_ = s.Settle(ctx)
		}
	}
}
