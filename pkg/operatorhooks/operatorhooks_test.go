package operatorhooks

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"payments/pkg/payments"
	"payments/pkg/providers/operator"
)

// verifier answers what it is given, as an adapter's verifier would.
type verifier struct {
	cb  operator.Callback
	err error
}

func (v verifier) Verify(string, string, http.Header, []byte) (operator.Callback, error) {
	return v.cb, v.err
}

// jobs records the messages queued.
type jobs struct{ sent [][]byte }

func (j *jobs) Send(_ context.Context, body []byte, _ time.Duration) error {
	j.sent = append(j.sent, body)
	return nil
}

// TestAccept: a verified final callback is queued as one update; a
// verified callback that is not final is acknowledged and queues nothing;
// a refused one, or any callback without a verifier, queues nothing and
// says why.
func TestAccept(t *testing.T) {
	const company, tx = "0196a0c2-7b3e-7d41-9c55-2f1e8a9b0c1d", "0196a0c2-7b3e-7d41-9c55-2f1e8a9b0c1e"
	final := operator.Callback{Kind: operator.Payout, Reference: tx, CompanyID: company,
		Result: operator.Result{OrderID: tx, State: operator.Succeeded}}
	pending := final
	pending.Kind, pending.Result.State = operator.Collection, operator.Processing
	tests := []struct {
		name   string
		v      Verifier
		want   error
		queued int
	}{
		{"final", verifier{cb: final}, nil, 1},
		{"not final", verifier{cb: pending}, nil, 0},
		{"bad signature", verifier{err: operator.ErrCallbackSignature}, operator.ErrCallbackSignature, 0},
		{"malformed", verifier{err: operator.ErrCallbackMalformed}, operator.ErrCallbackMalformed, 0},
		{"no verifier", nil, operator.ErrCallbackSignature, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := &jobs{}
			h := &Handler{Verifier: tt.v, Jobs: q}
			_, err := h.Accept(context.Background(), http.MethodPost, "/api/v1/operator/callbacks/pawapay", http.Header{}, []byte("{}"))
			if !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
				t.Fatalf("accept: %v, want %v", err, tt.want)
			}
			if len(q.sent) != tt.queued {
				t.Fatalf("%d messages queued, want %d", len(q.sent), tt.queued)
			}
			if tt.queued == 1 {
				j, err := payments.ParseJob(q.sent[0])
				if err != nil || j.Update == nil || j.Update.State != operator.Succeeded || j.TransactionID != tx || j.CompanyID != company {
					t.Fatalf("queued %s: %+v, %v", q.sent[0], j, err)
				}
			}
		})
	}
}
