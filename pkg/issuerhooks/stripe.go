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

// CardReferences finds our card id of a Stripe card id
// (stripeissuing.Client.CardReference).
type CardReferences interface {
	CardReference(ctx context.Context, id string) (string, error)
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
	// Cards finds the card a transaction's event names by Stripe's id.
	Cards CardReferences
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

// RefundDelay is how long a refund waits on the issuer-events queue before
// the card-worker sees it. Stripe sends a capture and its refund in any
// order, and the card-workers apply a batch each at once: a refund applied
// before its capture fails and comes back only after the queue's
// visibility timeout (90 s), so it is given a head start of the capture.
const RefundDelay = 10 * time.Second

// queue puts ev's notification on the issuer-events queue (a refund
// RefundDelay later), its card reference found first when the event does
// not carry it. A card Stripe has that is none of ours is dropped.
func (s *Stripe) queue(ctx context.Context, ev stripeissuing.Event) error {
	n := ev.Notification
	if n.Reference == "" {
		ref, err := s.Cards.CardReference(ctx, n.CardID)
		if errors.Is(err, issuer.ErrNotFound) {
			slog.WarnContext(ctx, "Stripe event about a card we do not have: dropped", "event_id", ev.ID, "card", n.CardID)
			return nil
		}
		if err != nil {
			return fmt.Errorf("issuerhooks: the card of Stripe event %s: %w", ev.ID, err)
		}
		n.Reference = ref
	}
	b, err := ev.Body()
	if err != nil {
		return badBody("a Stripe Issuing event", err, stripeissuing.ErrBadEvent)
	}
	var delay time.Duration
	if n.Type == issuer.NotifyRefund {
		delay = RefundDelay
	}
	if err := s.Queue.Send(ctx, b, delay); err != nil {
		return fmt.Errorf("issuerhooks: queue Stripe event %s: %w", ev.ID, err)
	}
	return nil
}
