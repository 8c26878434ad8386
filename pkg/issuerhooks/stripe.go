package issuerhooks

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"payments/pkg/providers/issuer"
	"payments/pkg/providers/issuer/stripeissuing"
)

// ErrBadStripeSignature is a Stripe event whose Stripe-Signature is
// missing, malformed, stale or made with none of our signing secrets.
var ErrBadStripeSignature = errors.New("issuerhooks: missing, malformed, stale or forged Stripe-Signature")

// StripeLookups reads at Stripe what an event names by Stripe's ids only
// (stripeissuing.Client): our card id of a Stripe card id; a dispute as it
// is now, with its card and what Stripe credited for it. Either is
// issuer.ErrNotFound for what is none of ours.
type StripeLookups interface {
	CardReference(ctx context.Context, id string) (string, error)
	CompleteDispute(ctx context.Context, n *issuer.Notification) error
}

// Stripe is the handler of POST /issuer/stripe/webhooks: Stripe Issuing's
// events, the authorization requests decided in the response.
type Stripe struct {
	// Secrets are the endpoints' signing secrets (whsec_…); an event
	// signed with any of them is taken.
	Secrets []string
	// Decider decides an issuing_authorization.request, as
	// POST /issuer/authorizations does.
	Decider Decider
	// Queue is the issuer-events queue, which the other events reach as
	// the issuer's notifications.
	Queue Sender
	// Lookups finds the card a transaction's event names by Stripe's id,
	// and reads a dispute's event's dispute as it is now.
	Lookups StripeLookups
}

// Handle verifies signature, the Stripe-Signature of body, and does what
// the event asks: an issuing_authorization.request is decided and its
// answer returned (an increment declined undecided); another event we read
// is queued as the issuer's notification; one we have nothing to do with
// is only acknowledged (nil answer, no error). ErrBadStripeSignature
// unless the signature verifies; a field error naming body when a signed
// event cannot be read.
func (s *Stripe) Handle(ctx context.Context, signature string, body []byte) (eventID string, answer *stripeissuing.Answer, err error) {
	ev, err := stripeissuing.ParseEvent(body, signature, s.Secrets)
	switch {
	case errors.Is(err, stripeissuing.ErrSignature):
		slog.InfoContext(ctx, "Stripe event refused", "error", err)
		return "", nil, fmt.Errorf("%w: %v", ErrBadStripeSignature, err)
	case err != nil:
		return "", nil, badBody("a Stripe Issuing event", err, stripeissuing.ErrBadEvent)
	}
	switch {
	case ev.Request != nil:
		decided, err := s.Decider.Decide(ctx, *ev.Request)
		if err != nil {
			return "", nil, err
		}
		a := stripeissuing.NewAnswer(decided)
		return ev.ID, &a, nil
	case ev.Answer != nil:
		slog.WarnContext(ctx, "Stripe asked for more on an authorization: declined", "event_id", ev.ID)
		return ev.ID, ev.Answer, nil
	case ev.Notification != nil:
		return ev.ID, nil, s.queue(ctx, ev)
	}
	slog.InfoContext(ctx, "Stripe event acknowledged, nothing to do", "event_id", ev.ID, "type", ev.Type, "why", ev.Ignored)
	return ev.ID, nil, nil
}

// RefundDelay is how long a refund, and the release of what is left of a
// hold once its authorization closed, wait on the issuer-events queue
// before the card-worker sees them. Stripe sends a capture and its refund,
// or the closing of its authorization, in any order, and the card-workers
// apply a batch each at once: a refund applied before its capture fails
// and comes back only after the queue's visibility timeout (90 s), and a
// hold released before its capture is applied leaves the card's available
// balance, for that while, what Stripe already took. The capture is given
// a head start.
const RefundDelay = 10 * time.Second

// queue puts ev's notification on the issuer-events queue (a refund, and
// the release of a closed authorization's hold, RefundDelay later), its
// card reference found first when the event does not carry it, a dispute
// read as it is now. A card or a dispute Stripe
// has that is none of ours is dropped.
func (s *Stripe) queue(ctx context.Context, ev stripeissuing.Event) error {
	n := ev.Notification
	var err error
	switch {
	case n.Type == issuer.NotifyDispute:
		err = s.Lookups.CompleteDispute(ctx, n)
	case n.Reference == "":
		n.Reference, err = s.Lookups.CardReference(ctx, n.CardID)
	}
	if errors.Is(err, issuer.ErrNotFound) {
		slog.WarnContext(ctx, "Stripe event about a card we do not have: dropped", "event_id", ev.ID, "card", n.CardID, "error", err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("issuerhooks: the card of Stripe event %s: %w", ev.ID, err)
	}
	b, err := ev.Body()
	if err != nil {
		return badBody("a Stripe Issuing event", err, stripeissuing.ErrBadEvent)
	}
	var delay time.Duration
	if n.Type == issuer.NotifyRefund || n.Type == issuer.NotifyReversal && n.Reason == stripeissuing.ReasonClosed {
		delay = RefundDelay
	}
	if err := s.Queue.Send(ctx, b, delay); err != nil {
		return fmt.Errorf("issuerhooks: queue Stripe event %s: %w", ev.ID, err)
	}
	return nil
}
