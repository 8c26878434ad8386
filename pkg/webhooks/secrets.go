package webhooks

import (
	"context"
	"fmt"
	"time"

	"payments/pkg/companies"
	"payments/pkg/ids"
	"payments/pkg/timestamp"
	"payments/pkg/vault"
)

// SecretStore keeps signing secrets.
type SecretStore interface {
	// PutSecret sets the company's signing secret, sealed under the
	// context of the console's endpoint, replacing any;
	// companies.ErrNotFound when the company does not exist.
	PutSecret(ctx context.Context, companyID string, secret vault.Sealed, now time.Time) error
	// DeleteSecret turns signing off for the company (nothing to delete is
	// fine); companies.ErrNotFound when the company does not exist.
	DeleteSecret(ctx context.Context, companyID string) error
}

// SigningSecrets manages the companies' signing secrets from the operator
// console.
type SigningSecrets struct {
	store  SecretStore
	sealer Sealer
	// Now returns the current time; tests may replace it.
	Now func() time.Time
}

// NewSigningSecrets returns the service over store, its secrets sealed by
// sealer.
func NewSigningSecrets(store SecretStore, sealer Sealer) *SigningSecrets {
	return &SigningSecrets{store: store, sealer: sealer, Now: time.Now}
}

// IssuedSecret is a new signing secret, shown once.
type IssuedSecret struct {
	CompanyID string    `json:"company_id"`
	Secret    string    `json:"secret"`
	Signing   bool      `json:"signing"`
	CreatedAt time.Time `json:"created_at"`
}

// Rotate creates a new signing secret for the company, replacing the
// previous one, and returns it. Deliveries created from now on are signed
// with it; deliveries already created keep the signature they have.
func (s *SigningSecrets) Rotate(ctx context.Context, companyID string) (IssuedSecret, error) {
	if !ids.IsUUID(companyID) {
		return IssuedSecret{}, companies.ErrNotFound
	}
	secret, err := NewSecret()
	if err != nil {
		return IssuedSecret{}, err
	}
	now := timestamp.Of(s.Now())
	// The console's endpoint: its id is the company id.
	console := Endpoint{ID: companyID, CompanyID: companyID, Console: true}
	sealed, err := s.sealer.Seal(ctx, []byte(secret), console.SecretContext())
	if err != nil {
		return IssuedSecret{}, fmt.Errorf("webhooks: seal the signing secret of %s: %w", companyID, err)
	}
	if err := s.store.PutSecret(ctx, companyID, sealed, now); err != nil {
		return IssuedSecret{}, err
	}
	return IssuedSecret{CompanyID: companyID, Secret: secret, Signing: true, CreatedAt: now}, nil
}

// Disable removes the company's signing secret: deliveries created from now
// on carry no X-Service-Signature.
func (s *SigningSecrets) Disable(ctx context.Context, companyID string) error {
	if !ids.IsUUID(companyID) {
		return companies.ErrNotFound
	}
	return s.store.DeleteSecret(ctx, companyID)
}
