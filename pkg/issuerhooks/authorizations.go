package issuerhooks

import (
	"context"
	"log/slog"
	"time"

	"payments/pkg/providers/issuer"
)

// Decider decides the network's authorization requests
// (cards.Service.Decide): one read of the card and one conditional write,
// idempotent on the request's id.
type Decider interface {
	Decide(ctx context.Context, r issuer.AuthorizationRequest) (issuer.AuthorizationAnswer, error)
}

// Authorizations is the handler of POST /issuer/authorizations.
type Authorizations struct {
	// Secret is the issuer's signing secret, as Handler's.
	Secret  []byte
	Decider Decider
	// Now is the clock the signature's timestamp is checked against; nil
	// is time.Now.
	Now func() time.Time
}

// Ask signs body with the issuer's secret, as the issuer does, and decides
// it as POST /issuer/authorizations does: how the sandbox card network,
// running in our own functions, asks us through the same handler.
func (a *Authorizations) Ask(ctx context.Context, body []byte) (issuer.AuthorizationAnswer, error) {
	now := clock(a.Now)
	return a.Decide(ctx, Sign(a.Secret, body, now), body)
}

// Decide checks signature, the X-Issuer-Signature of body, parses the
// request and decides it.
func (a *Authorizations) Decide(ctx context.Context, signature string, body []byte) (issuer.AuthorizationAnswer, error) {
	if err := verify(a.Secret, clock(a.Now), signature, body); err != nil {
		slog.InfoContext(ctx, "issuer authorization request refused", "error", err)
		return issuer.AuthorizationAnswer{}, err
	}
	r, err := issuer.ParseAuthorizationRequest(body)
	if err != nil {
		return issuer.AuthorizationAnswer{}, badBody("an authorization request", err, issuer.ErrBadAuthorizationRequest)
	}
	return a.Decider.Decide(ctx, r)
}
