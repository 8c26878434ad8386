package webhooks

import (
	"context"
	"errors"
	"time"
)

// StoredInClear names an endpoint a store keeps with a signing secret in
// clear: written before secrets were sealed.
type StoredInClear struct {
	CompanyID string
	// EndpointID is the endpoint's id; the company id for the console's.
	EndpointID string
	Console    bool
}

// ClearSecretStore finds and rewrites the endpoints stored with a secret
// in clear.
type ClearSecretStore interface {
	// ClearSecrets returns the endpoints stored with a secret in clear in
	// the next part of a scan of the store, which goes on from where the
	// last call left it and starts again once over; nothing once a whole
	// scan found none.
	ClearSecrets(ctx context.Context) ([]StoredInClear, error)
	// RewriteEndpoint reads the endpoint and, when change reports that it
	// changed it, writes it back on the condition that nobody wrote it in
	// between (tried again from a fresh read otherwise). An endpoint no
	// longer there is no error.
	RewriteEndpoint(ctx context.Context, ref StoredInClear, change func(*Endpoint) (bool, error)) error
}

// SecretSealing seals the signing secrets stored in clear before secrets
// were sealed: the sweeper's step. Its work is idempotent: an endpoint
// found again, already sealed (by this or by any write of it), is left as
// it is.
type SecretSealing struct {
	store  ClearSecretStore
	sealer Sealer
}

// NewSecretSealing returns the sealing of the secrets in clear of store.
func NewSecretSealing(store ClearSecretStore, sealer Sealer) *SecretSealing {
	return &SecretSealing{store: store, sealer: sealer}
}

// Sweep seals the secrets in clear of the endpoints in the next part of
// the store's scan and returns how many endpoints it sealed.
func (s *SecretSealing) Sweep(ctx context.Context, _ time.Time) (int, error) {
	found, err := s.store.ClearSecrets(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, ref := range found {
		sealed := false
		err := s.store.RewriteEndpoint(ctx, ref, func(e *Endpoint) (bool, error) {
			var err error
			sealed, err = SealSecrets(ctx, s.sealer, e)
			return sealed, err
		})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if sealed {
			n++
		}
	}
	return n, errors.Join(errs...)
}
