package cardshttp

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"payments/pkg/cards"
	"payments/pkg/httpapi"
	"payments/pkg/providers/issuer"
)

// SandboxRoutes registers the card-network sandbox's routes (sandbox mode
// only) on rt, behind the company token.
func SandboxRoutes(rt *httpapi.Router, sb *cards.Sandbox) {
	h := sandboxHandlers{sb}
	rt.Handle("POST /sandbox/cards/{id}/authorizations", h.authorize, httpapi.Money())
	rt.Handle("POST /sandbox/card-transactions/{transactionId}/settle", h.follow(cards.TxSettlement), httpapi.Money())
	rt.Handle("POST /sandbox/card-transactions/{transactionId}/reverse", h.follow(cards.TxReversal), httpapi.Money())
	rt.Handle("POST /sandbox/card-transactions/{transactionId}/refund", h.follow(cards.TxRefund), httpapi.Money())
	rt.Handle("POST /sandbox/card-transactions/{transactionId}/expire", h.expire, httpapi.Money())
	rt.Handle("POST /sandbox/cards/{id}/captures", h.capture, httpapi.Money())
	rt.Handle("POST /sandbox/cards/{id}/refunds", h.refund, httpapi.Money())
	rt.Handle("POST /sandbox/cards/{id}/terminate", h.terminate, httpapi.Money())
}

type sandboxHandlers struct{ sb *cards.Sandbox }

func (h sandboxHandlers) authorize(w http.ResponseWriter, r *http.Request) error {
	var in cards.AuthorizeInput
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	return h.answer(w, r, func(ctx context.Context, companyID string) (cards.Transaction, string, error) {
		return h.sb.AuthorizeEvent(ctx, companyID, r.PathValue("id"), in)
	})
}

func (h sandboxHandlers) follow(typ cards.TxType) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var in cards.FollowInput
		if err := httpapi.DecodeOptional(r, &in); err != nil {
			return err
		}
		return h.answer(w, r, func(ctx context.Context, companyID string) (cards.Transaction, string, error) {
			return h.sb.FollowEvent(ctx, companyID, r.PathValue("transactionId"), typ, "", in)
		})
	}
}

func (h sandboxHandlers) expire(w http.ResponseWriter, r *http.Request) error {
	var in cards.FollowInput
	if err := httpapi.DecodeOptional(r, &in); err != nil {
		return err
	}
	return h.answer(w, r, func(ctx context.Context, companyID string) (cards.Transaction, string, error) {
		return h.sb.FollowEvent(ctx, companyID, r.PathValue("transactionId"), cards.TxReversal, issuer.ReleaseExpired, in)
	})
}

func (h sandboxHandlers) capture(w http.ResponseWriter, r *http.Request) error {
	var in cards.AuthorizeInput
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	return h.answer(w, r, func(ctx context.Context, companyID string) (cards.Transaction, string, error) {
		return h.sb.CaptureEvent(ctx, companyID, r.PathValue("id"), in)
	})
}

func (h sandboxHandlers) refund(w http.ResponseWriter, r *http.Request) error {
	var in cards.RefundInput
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	return h.answer(w, r, func(ctx context.Context, companyID string) (cards.Transaction, string, error) {
		return h.sb.RefundEvent(ctx, companyID, r.PathValue("id"), in)
	})
}

func (h sandboxHandlers) terminate(w http.ResponseWriter, r *http.Request) error {
	var in cards.TerminateInput
	if err := httpapi.DecodeOptional(r, &in); err != nil {
		return err
	}
	return h.answer(w, r, func(ctx context.Context, companyID string) (cards.Transaction, string, error) {
		return h.sb.TerminateEvent(ctx, companyID, r.PathValue("id"), in)
	})
}

// answer runs do for the caller's company and answers 201 with the card
// transaction it made, or 202 with the event id when the card-worker has
// not applied the network's notification yet, or when, the notification
// sent, its transaction cannot be read: never an error inviting the
// client to send it again.
func (h sandboxHandlers) answer(w http.ResponseWriter, r *http.Request, do func(context.Context, string) (cards.Transaction, string, error)) error {
	companyID, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	tx, eventID, err := do(r.Context(), companyID)
	var queued *cards.NotAppliedError
	if errors.As(err, &queued) {
		return queuedAnswer(w, queued.EventID)
	}
	if err != nil {
		return err
	}
	v, err := h.sb.Cards.TransactionView(r.Context(), companyID, tx)
	if err != nil {
		slog.WarnContext(r.Context(), "read the card transaction of a network notification", "event_id", eventID, "error", err)
		return queuedAnswer(w, eventID)
	}
	httpapi.Respond(w, http.StatusCreated, "Card transaction created", NewTxResponse(v, false))
	return nil
}

// queuedAnswer answers 202 with the id of a notification sent to the
// card-worker, whose transaction the client reads from the card.
func queuedAnswer(w http.ResponseWriter, eventID string) error {
	httpapi.Respond(w, http.StatusAccepted, "Notification queued; read the card's transactions shortly",
		map[string]string{"event_id": eventID})
	return nil
}
