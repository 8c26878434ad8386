// Package issuerhooks receives the card issuer's calls, made by the
// issuer, not by a company. POST /issuer/webhooks takes its notifications:
// one whose X-Issuer-Signature verifies with the issuer's secret is queued
// as sent, its raw body one message on the issuer-events queue, for the
// card-worker to apply (once per notification id, whatever the queue
// repeats). POST /issuer/authorizations takes the network's authorization
// requests, signed the same way, and answers each with our decision, made
// in the request (Authorizations). The signature is the scheme of our own
// webhooks (pkg/webhooks, spec §6.2): "t=<unix seconds>,v1=<hex
// HMAC-SHA256 of "<t>.<body>">". POST /issuer/stripe/webhooks takes Stripe
// Issuing's events in Stripe's protocol (Stripe): its authorization
// requests decided the same way, the others queued as notifications.
package issuerhooks

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"payments/pkg/field"
	"payments/pkg/providers/issuer"
	"payments/pkg/webhooks"
)

// Header is the request header that carries the issuer's signature.
const Header = "X-Issuer-Signature"

// Tolerance is how far a signature's timestamp may be from now, in the past
// or in the future.
const Tolerance = 300 * time.Second

// MinSecretBytes is the shortest issuer secret the issuer-webhooks function
// starts with; the stack generates one of 64 characters.
const MinSecretBytes = 32

// ErrBadSignature is a request whose signature header is missing,
// malformed, stale or does not verify with the issuer's secret.
var ErrBadSignature = errors.New("issuerhooks: missing, malformed, stale or forged signature")

// Sender queues a message; a queue.Publisher is one.
type Sender interface {
	Send(ctx context.Context, body []byte, delay time.Duration) error
}

// Handler is the handler of POST /issuer/webhooks.
type Handler struct {
	// Secret is the issuer's signing secret (its text is the HMAC key). An
	// empty secret verifies nothing: every request is refused.
	Secret []byte
	// Queue is the issuer-events queue.
	Queue Sender
	// Now is the clock the signature's timestamp is checked against; nil
	// is time.Now.
	Now func() time.Time
}

// Sign returns the X-Issuer-Signature value of body at now, signed with
// secret: what the issuer sends, and what a sandbox card network signs its
// notifications with.
func Sign(secret, body []byte, now time.Time) string {
	return webhooks.Sign(string(secret), now, body)
}

// Deliver signs body with the issuer's secret, as the issuer does, and
// accepts it as POST /issuer/webhooks does: the signature checked, the
// notification parsed and queued. It is how the sandbox card network,
// running in our own functions, reports to us through the same route.
func (h *Handler) Deliver(ctx context.Context, body []byte) error {
	_, err := h.Accept(ctx, Sign(h.Secret, body, h.now()), body)
	return err
}

// Accept checks signature, the X-Issuer-Signature of body, parses the
// notification and queues body.
func (h *Handler) Accept(ctx context.Context, signature string, body []byte) (issuer.Notification, error) {
	if err := h.verify(signature, body); err != nil {
		slog.InfoContext(ctx, "issuer notification refused", "error", err)
		return issuer.Notification{}, err
	}
	n, err := issuer.ParseNotification(body)
	if err != nil {
		return issuer.Notification{}, badBody("an issuer notification", err, issuer.ErrBadNotification)
	}
	if err := h.Queue.Send(ctx, body, 0); err != nil {
		return issuer.Notification{}, fmt.Errorf("issuerhooks: queue notification %s: %w", n.ID, err)
	}
	return n, nil
}

// badBody is the 400 of a signed body that is not what, err being the
// parse error wrapping sentinel: it names body and what is wrong.
func badBody(what string, err, sentinel error) error {
	problem := strings.TrimPrefix(err.Error(), sentinel.Error()+": ")
	return field.Invalid("body", "not "+what+": "+problem)
}

// now returns the time signatures are checked against.
func (h *Handler) now() time.Time { return clock(h.Now) }

// verify checks signature against body: signed with h.Secret, within
// Tolerance of now.
func (h *Handler) verify(signature string, body []byte) error {
	return verify(h.Secret, h.now(), signature, body)
}

// clock returns now(), or time.Now() when now is nil.
func clock(now func() time.Time) time.Time {
	if now != nil {
		return now()
	}
	return time.Now()
}

// verify checks signature against body: signed with secret, within
// Tolerance of now. An empty secret verifies nothing.
func verify(secret []byte, now time.Time, signature string, body []byte) error {
	if len(secret) == 0 {
		return fmt.Errorf("%w: no secret to verify with", ErrBadSignature)
	}
	if err := webhooks.Verify(signature, body, string(secret), Tolerance, now); err != nil {
		return fmt.Errorf("%w: %v", ErrBadSignature, err)
	}
	return nil
}
