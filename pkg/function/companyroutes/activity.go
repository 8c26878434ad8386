package companyroutes

import (
	"cmp"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"

	"payments/pkg/activity"
	"payments/pkg/httpapi"
	"payments/pkg/idempotency"
)

// Recorder records a change in a company's activity log (activity.Log).
type Recorder interface {
	Record(ctx context.Context, companyID, actor, action, subject string) error
}

// maxAnswerRead is how much of an answer Recorded reads for the id of
// what the request made: the start of its JSON, where the envelope's data
// begins.
const maxAnswerRead = 64 << 10

// Recorded returns the middleware that records each change a company's
// API key makes in the company's activity log: every request to a route
// of another method than GET or HEAD that succeeds (2xx), but the replay
// of an answer stored for its Idempotency-Key (made once, recorded once).
// The actor is the key (activity.KeyActor of its client_id), the action
// the route's pattern ("POST /payment/payout"), the subject the id the
// route's path names ({id}) or, else, the id of what the answer returns
// (its data's id or transaction_id), or "". The change is made when it is recorded: a
// failure to record is logged, never the client's.
func Recorded(log Recorder) httpapi.Middleware {
	return func(route httpapi.Route, next http.Handler) httpapi.HandlerFunc {
		method, _, _ := strings.Cut(route.Pattern(), " ")
		if method == http.MethodGet || method == http.MethodHead {
			return nil
		}
		return func(w http.ResponseWriter, r *http.Request) error {
			rec := httpapi.NewAnswerRecorder(w, maxAnswerRead)
			next.ServeHTTP(rec, r)
			if rec.Status() < 200 || rec.Status() > 299 || w.Header().Get(idempotency.ReplayedHeader) == "true" {
				return nil
			}
			company, err := httpapi.Company(r)
			if err != nil {
				return nil // not a company's request: the guard admits none
			}
			subject := r.PathValue("id")
			if subject == "" {
				subject = answerID(rec.Body())
			}
			if err := log.Record(r.Context(), company, activity.KeyActor(httpapi.Client(r)), route.Pattern(), subject); err != nil {
				slog.ErrorContext(r.Context(), "record the API key's change", "route", route.Pattern(), "error", err)
			}
			return nil
		}
	}
}

// answerID returns the id of the envelope's data in answer (its id, or a
// payment's transaction_id), or "".
func answerID(answer []byte) string {
	var env struct {
		Data struct {
			ID            string `json:"id"`
			TransactionID string `json:"transaction_id"`
		} `json:"data"`
	}
	if json.Unmarshal(answer, &env) != nil {
		return ""
	}
	return cmp.Or(env.Data.ID, env.Data.TransactionID)
}
