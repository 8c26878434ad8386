package cards

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"payments/pkg/field"
	"payments/pkg/ids"
	"payments/pkg/providers/issuer"
	"payments/pkg/vault"
)

// ErrRevealSessionRequired is GET /cards/{id}?reveal=true asked of an
// issuer that keeps card numbers to itself (production mode, Stripe): the
// number and CVV are shown only through a reveal session.
var ErrRevealSessionRequired = errors.New("cards: the card issuer shows card numbers through reveal sessions only")

// SandboxIssuer names the simulated issuer in a RevealSession.
const SandboxIssuer = "sandbox"

// maxNonce bounds a reveal session's nonce.
const maxNonce = 500

// RevealSession is a reveal of a card's number and CVV (POST
// /cards/{id}/reveal-sessions). At an issuer that keeps them (a
// issuer.Revealer: Stripe) it is the issuer's short-lived key, with which
// the cardholder's browser reads them from the issuer itself: nothing of
// the card's number passes here. With the simulated issuer it is the
// sealed number, CVV and expiry, opened as GET /cards/{id}?reveal=true
// opens them.
type RevealSession struct {
	CardID string
	// Issuer is "stripe" or SandboxIssuer.
	Issuer string
	// IssuerCardID, EphemeralKeySecret and ExpiresAt are the issuer's
	// session; empty in the sandbox.
	IssuerCardID       string
	EphemeralKeySecret string
	ExpiresAt          time.Time
	// Number, CVV, ExpiryMonth and ExpiryYear are the sandbox's clear
	// values; empty at an issuer that keeps them.
	Number, CVV             string
	ExpiryMonth, ExpiryYear int
}

// String hides the session's secrets from any print.
func (RevealSession) String() string { return "cards.RevealSession{redacted}" }

// GoString hides the session's secrets from %#v.
func (RevealSession) GoString() string { return "cards.RevealSession{redacted}" }

// revealsThroughSessions reports whether the issuer keeps card numbers to
// itself, and so reveals them only through sessions.
func (s *Service) revealsThroughSessions() (issuer.Revealer, bool) {
	r, ok := s.Issuer.(issuer.Revealer)
	return r, ok
}

// CreateRevealSession reveals card id of the company to the holder of
// nonce (made by Stripe.js in the cardholder's browser): it is a reveal
// like GET /cards/{id}?reveal=true, charged to the same hourly quota and
// audited first (a record that cannot be written reveals nothing), on any
// card issued, frozen and terminated ones included, as that reveal. A
// card not issued yet (PENDING, FAILED) is ErrNotActive.
func (s *Service) CreateRevealSession(ctx context.Context, companyID, id, nonce string, audit Reveal) (RevealSession, error) {
	nonce = strings.TrimSpace(nonce)
	switch {
	case nonce == "":
		return RevealSession{}, field.Invalid("nonce", "is required: the ephemeral key nonce Stripe.js made")
	case len(nonce) > maxNonce:
		return RevealSession{}, field.Invalid("nonce", fmt.Sprintf("must be at most %d characters", maxNonce))
	}
	card, err := s.card(ctx, companyID, id)
	if err != nil {
		return RevealSession{}, err
	}
	revealer, remote := s.revealsThroughSessions()
	switch {
	case remote && card.IssuerCardID == "", !remote && card.Sealed.IsZero() && card.IssuerCardID == "":
		return RevealSession{}, fmt.Errorf("%w: card %s is not issued", ErrNotActive, card.ID)
	case !remote && card.Sealed.IsZero():
		// An issued card with nothing sealed, and an issuer that keeps
		// nothing: production mode without its issuer.
		return RevealSession{}, ErrNoIssuer
	}
	a, err := s.recordReveal(ctx, companyID, card, audit)
	if err != nil {
		return RevealSession{}, err
	}
	out := RevealSession{CardID: card.ID}
	if remote {
		rs, err := revealer.RevealSession(ctx, card.IssuerCardID, nonce)
		switch {
		case errors.Is(err, issuer.ErrDeclined):
			return RevealSession{}, field.On(err, "nonce")
		case err != nil:
			return RevealSession{}, fmt.Errorf("%w: %w", ErrIssuerUnavailable, err)
		}
		out.Issuer, out.IssuerCardID, out.EphemeralKeySecret, out.ExpiresAt = rs.Issuer, rs.IssuerCardID, rs.EphemeralKeySecret, rs.ExpiresAt
	} else {
		if out.Number, out.CVV, err = s.openSecrets(ctx, card); err != nil {
			return RevealSession{}, err
		}
		out.Issuer, out.ExpiryMonth, out.ExpiryYear = SandboxIssuer, card.ExpiryMonth, card.ExpiryYear
	}
	slog.InfoContext(ctx, "card reveal session created", "company_id", companyID, "card_id", card.ID, "reveal_id", a.ID, "issuer", out.Issuer)
	return out, nil
}

// recordReveal charges one reveal of card to the company's hourly quota
// and writes its audit record, audit completed with its id, the company,
// the card, the master key and the time; when either fails, nothing may be
// revealed (a *RevealLimitError, ErrRevealNotAudited).
func (s *Service) recordReveal(ctx context.Context, companyID string, card Card, audit Reveal) (Reveal, error) {
	if err := s.admitReveal(ctx, companyID, card.ID); err != nil {
		return Reveal{}, err
	}
	a := audit
	a.ID, a.CompanyID, a.CardID, a.KeyID, a.CreatedAt = ids.NewV7(s.now()), companyID, card.ID, card.Sealed.KeyID, s.now()
	if err := s.Store.PutReveal(ctx, a); err != nil {
		slog.ErrorContext(ctx, "reveal refused: its audit record could not be written", "card_id", card.ID, "error", err)
		return Reveal{}, fmt.Errorf("%w: %w", ErrRevealNotAudited, err)
	}
	return a, nil
}

// openSecrets reads card's sealed number and CVV (Store.CardSecrets: the
// card item keeps only their refs) and opens each under its context.
func (s *Service) openSecrets(ctx context.Context, card Card) (number, cvv string, err error) {
	sealed, err := s.Store.CardSecrets(ctx, card.CompanyID, card.ID)
	if err != nil {
		return "", "", fmt.Errorf("cards: read the sealed values of %s: %w", card.ID, err)
	}
	n, err := s.Vault.Open(ctx, sealed.Number, vault.CardField(card.CompanyID, card.ID, vault.FieldNumber))
	if err != nil {
		return "", "", fmt.Errorf("cards: open the number of %s: %w", card.ID, err)
	}
	c, err := s.Vault.Open(ctx, sealed.CVV, vault.CardField(card.CompanyID, card.ID, vault.FieldCVC))
	if err != nil {
		return "", "", fmt.Errorf("cards: open the CVV of %s: %w", card.ID, err)
	}
	return string(n), string(c), nil
}
