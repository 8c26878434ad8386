package stripesim

import (
	"net/http"
	"time"
)

// answer is what a POST was answered, kept for its Idempotency-Key.
type answer struct {
	request string    // method, path and body of the first request
	at      time.Time // when it was first seen
	done    bool      // false while the first request is being served
	status  int
	body    []byte
}

// keyLifetime is how long an Idempotency-Key is remembered, as at Stripe.
const keyLifetime = 24 * time.Hour

// remember returns the answer to a POST whose Idempotency-Key was seen
// before, or records that key as in progress.
func (s *Sim) remember(key, fingerprint string) (result, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.cfg.Now()
	a, ok := s.seen[key]
	switch {
	case !ok || a.done && now.Sub(a.at) > keyLifetime:
		for k, old := range s.seen {
			if old.done && now.Sub(old.at) > keyLifetime {
				delete(s.seen, k)
			}
		}
		s.seen[key] = &answer{request: fingerprint, at: now}
		return result{}, false
	case a.request != fingerprint:
		return stripeError(http.StatusBadRequest, "idempotency_error", "", "Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '"+key+"' if you meant to execute a different request."), true
	case !a.done:
		return stripeError(http.StatusConflict, "idempotency_error", "", "There is currently another in-progress request using this Idempotent Key (that probably means you submitted twice, and the other request is still going through): "+key+". Please try again later."), true
	}
	return result{a.status, a.body}, true
}
