package companyroutes_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"payments/pkg/function/companyroutes"
	"payments/pkg/httpapi"
	"payments/pkg/idempotency"
)

// recorder keeps what is recorded, or fails with err.
type recorder struct {
	mu      sync.Mutex
	entries []string
	err     error
}

func (r *recorder) Record(_ context.Context, companyID, actor, action, subject string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return r.err
	}
	r.entries = append(r.entries, companyID+"|"+actor+"|"+action+"|"+subject)
	return nil
}

// recordedRouter is a company router with Recorded over log, its guard
// taking the company and the client_id from headers.
func recordedRouter(log companyroutes.Recorder) http.Handler {
	guard := func(r *http.Request) (context.Context, error) {
		return httpapi.WithClient(httpapi.WithCompany(r.Context(), r.Header.Get("X-Company")), r.Header.Get("X-Client")), nil
	}
	rt := httpapi.NewRouter(httpapi.Catalogue{}, guard)
	rt.Use(companyroutes.Recorded(log))
	made := func(w http.ResponseWriter, r *http.Request) error {
		httpapi.Respond(w, http.StatusCreated, "made", map[string]string{"id": "pay_1", "status": "PENDING"})
		return nil
	}
	rt.Handle("POST /payment/payout", made, httpapi.Money())
	rt.Handle("GET /payment/payouts", made)
	rt.Handle("POST /payment/collect", func(w http.ResponseWriter, r *http.Request) error {
		httpapi.Respond(w, http.StatusOK, "accepted", map[string]string{"transaction_id": "tx_2"})
		return nil
	})
	rt.Handle("POST /cards/{id}/freeze", func(w http.ResponseWriter, r *http.Request) error {
		httpapi.Respond(w, http.StatusOK, "frozen", map[string]string{"status": "FROZEN"})
		return nil
	})
	rt.Handle("DELETE /webhooks/{id}", func(w http.ResponseWriter, r *http.Request) error {
		w.WriteHeader(http.StatusNoContent)
		return nil
	})
	rt.Handle("POST /refused", func(w http.ResponseWriter, r *http.Request) error {
		return httpapi.ErrUnauthorized
	})
	rt.Handle("POST /replayed", func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set(idempotency.ReplayedHeader, "true")
		return made(w, r)
	})
	return rt
}

// TestRecorded: each successful change of a company's API key is
// recorded, its actor the key, its action the route, its subject the id
// of the path or of the answer; reads, refusals and replays are not.
func TestRecorded(t *testing.T) {
	for _, tt := range []struct {
		method, path string
		want         string // "": nothing recorded
	}{
		{"POST", "/payment/payout", "c1|API key cli_1|POST /payment/payout|pay_1"},
		{"POST", "/payment/collect", "c1|API key cli_1|POST /payment/collect|tx_2"},
		{"POST", "/cards/card_9/freeze", "c1|API key cli_1|POST /cards/{id}/freeze|card_9"},
		{"DELETE", "/webhooks/wh_3", "c1|API key cli_1|DELETE /webhooks/{id}|wh_3"},
		{"GET", "/payment/payouts", ""},
		{"POST", "/refused", ""},
		{"POST", "/replayed", ""},
	} {
		log := &recorder{}
		req := httptest.NewRequest(tt.method, httpapi.BasePath+tt.path, strings.NewReader(`{}`))
		req.Header.Set("X-Company", "c1")
		req.Header.Set("X-Client", "cli_1")
		w := httptest.NewRecorder()
		recordedRouter(log).ServeHTTP(w, req)
		var got string
		if len(log.entries) > 0 {
			got = strings.Join(log.entries, "\n")
		}
		if got != tt.want {
			t.Errorf("%s %s (%d): recorded %q, want %q", tt.method, tt.path, w.Code, got, tt.want)
		}
	}
}

// TestRecordedFailureIsNotTheClients: when the log cannot record, the
// change made is answered as made.
func TestRecordedFailureIsNotTheClients(t *testing.T) {
	req := httptest.NewRequest("POST", httpapi.BasePath+"/payment/payout", strings.NewReader(`{}`))
	req.Header.Set("X-Company", "c1")
	w := httptest.NewRecorder()
	recordedRouter(&recorder{err: errors.New("the table is away")}).ServeHTTP(w, req)
	if w.Code != http.StatusCreated || !strings.Contains(w.Body.String(), `"id":"pay_1"`) {
		t.Errorf("with a failing log: %d %s", w.Code, w.Body.String())
	}
}
