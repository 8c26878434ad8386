package companies

import (
	"context"
	"time"
)

// Forgetter is a cache of companies (auth.CompanyCache) that can be told to
// forget one.
type Forgetter interface {
	Forget(companyID string)
}

// Forgetting returns s telling c to forget each company it changes (an
// update, a key rotation) once the change is written: the operator
// console's store, over the company cache of its process, so that where the
// console and the token guards share a process (the local dev server, the
// tests) a rotation or deactivation takes effect at once. Its reads are
// not cached.
func Forgetting(s Store, c Forgetter) Store { return forgetting{s, c} }

// forgetting is a Store whose changes are forgotten from a cache.
type forgetting struct {
	Store
	cache Forgetter
}

// Update applies p to company id and forgets it.
func (s forgetting) Update(ctx context.Context, id string, p Patch, now time.Time) (Company, error) {
	c, err := s.Store.Update(ctx, id, p, now)
	if err == nil {
		s.cache.Forget(id)
	}
	return c, err
}

// RotateKey replaces the key hash of company id and forgets it.
func (s forgetting) RotateKey(ctx context.Context, id string, keyHash []byte, now time.Time) (Company, error) {
	c, err := s.Store.RotateKey(ctx, id, keyHash, now)
	if err == nil {
		s.cache.Forget(id)
	}
	return c, err
}
