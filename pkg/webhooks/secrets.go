package webhooks

import (
	"context"
	"time"

	"payments/pkg/companies"
	"payments/pkg/ids"
	"payments/pkg/timestamp"
)

// SecretStore keeps signing secrets.
type SecretStore interface {
	// PutSecret sets the company's signing secret, replacing any;
	// companies.ErrNotFound when the company does not exist.
	PutSecret(ctx context.Context, companyID, secret string, now time.Time) error
	// DeleteSecret turns signing off for the company (nothing to delete is
	// fine); companies.ErrNotFound when the company does not exist.
	DeleteSecret(ctx context.Context, companyID string) error
}

// SigningSecrets manages the companies' signing secrets from the operator
// console.
type SigningSecrets struct {
	store SecretStore
	// Now returns the current time; tests may replace it.
	Now func() time.Time
}

// NewSigningSecrets returns the service over store.
func NewSigningSecrets(store SecretStore) *SigningSecrets {
	return &SigningSecrets{store: store, Now: time.Now}
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
	if err := s.store.PutSecret(ctx, companyID, secret, now); err != nil {
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
