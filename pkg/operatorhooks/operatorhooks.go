// Package operatorhooks receives the mobile-money operator's callbacks:
// POST /operator/callbacks/<operator>, called by the operator, not by a
// company. A callback whose signature verifies (the operator's adapter
// checks it: pawapay.Callbacks) is put on the payouts queue as a
// payments.Update, for the payout worker to apply once, whatever the queue
// repeats and whatever the worker's polls found first. Polling stays the
// safety net for a callback that never comes.
package operatorhooks

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"payments/pkg/payments"
	"payments/pkg/providers/operator"
)

// Verifier checks a callback's signature and reads it: an error wrapping
// operator.ErrCallbackSignature or operator.ErrCallbackMalformed refuses
// it.
type Verifier interface {
	Verify(method, path string, header http.Header, body []byte) (operator.Callback, error)
}

// Handler is the handler of one operator's callbacks route.
type Handler struct {
	// Verifier is the operator's; nil refuses every callback
	// (ErrNotConfigured), as a deployment without the operator's key does.
	Verifier Verifier
	// Jobs is the payouts queue.
	Jobs payments.Jobs
}

// ErrNotConfigured is a callback to a deployment that has no key to verify
// it with (a sandbox stage): it is refused as unsigned would be.
var ErrNotConfigured = fmt.Errorf("operatorhooks: no operator callback key is configured: %w", operator.ErrCallbackSignature)

// Accept verifies the callback and queues its update when it is final. A
// verified callback that is not final is acknowledged and queues nothing;
// an error has queued nothing.
func (h *Handler) Accept(ctx context.Context, method, path string, header http.Header, body []byte) (operator.Callback, error) {
	if h.Verifier == nil {
		return operator.Callback{}, ErrNotConfigured
	}
	cb, err := h.Verifier.Verify(method, path, header, body)
	if err != nil {
		slog.InfoContext(ctx, "operator callback refused", "error", err)
		return operator.Callback{}, err
	}
	if !cb.Result.State.Final() {
		// Not final (a deposit awaiting the payer): nothing to apply; the
		// final status follows in its own callback, or a poll finds it.
		slog.InfoContext(ctx, "operator callback not final: nothing to apply", "company_id", cb.CompanyID,
			"transaction_id", cb.Reference, "kind", cb.Kind, "state", cb.Result.State)
		return cb, nil
	}
	if err := payments.QueueUpdate(ctx, h.Jobs, cb.CompanyID, cb.Reference, cb.Kind, cb.Result); err != nil {
		return operator.Callback{}, err
	}
	slog.InfoContext(ctx, "operator callback queued", "company_id", cb.CompanyID, "transaction_id", cb.Reference,
		"kind", cb.Kind, "state", cb.Result.State)
	return cb, nil
}
