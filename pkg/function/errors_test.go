package function

import (
	"fmt"
	"testing"

	"payments/pkg/cards"
	"payments/pkg/cards/cardshttp"
	"payments/pkg/contention"
	"payments/pkg/payments"
	"payments/pkg/payments/paymentshttp"
)

// TestErrorsPrecedence: an error that wraps two catalogued errors answers
// the one whose answer tells the client what is true. A card movement the
// issuer carried out but whose settlement kept losing races is a 502 that
// says to check the card and the wallet, never a CONFLICT that invites a
// plain retry (which would move the money twice); a payment changed by
// another request is a CONFLICT, as the store's lost races are.
func TestErrorsPrecedence(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		status int
		code   string
	}{
		{"settlement unwritten after lost races",
			fmt.Errorf("%w: settle tx_1: %w", cards.ErrIssuerUnavailable, fmt.Errorf("store: %w", cards.ErrChanged)),
			502, "CARD_ISSUER_UNAVAILABLE"},
		{"card changed by another request", cards.ErrChanged, 409, "CONFLICT"},
		{"payment changed by another request", payments.ErrStatusChanged, 409, "CONFLICT"},
		{"store's lost races", fmt.Errorf("store: put: %w", contention.ErrConflict), 409, "CONFLICT"},
	}
	for _, tt := range tests {
		body, known := Catalogue(cardshttp.Errors, paymentshttp.Errors).Body(tt.err)
		if !known || body.StatusCode != tt.status || body.Code != tt.code {
			t.Errorf("%s: %d %s (known %v), want %d %s", tt.name, body.StatusCode, body.Code, known, tt.status, tt.code)
		}
	}
}
