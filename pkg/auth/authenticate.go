package auth

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"payments/pkg/cache"
	"payments/pkg/companies"
)

// Authenticate checks an Authorization header value and returns the company
// id its token was issued to. It refuses, with ErrUnauthorized, a
// missing or non-Bearer header, a malformed or expired token, any
// algorithm but ES256, a kid that names no key accepted, a bad signature,
// another issuer, another mode, an unknown or inactive company, and a token
// minted from a client_key since rotated.
func (s *Service) Authenticate(ctx context.Context, header string) (string, error) {
	c, err := s.AuthenticateCompany(ctx, header)
	return c.ID, err
}

// AuthenticateCompany is Authenticate, returning the company its token
// was issued to (its client_id names the key that made the request).
func (s *Service) AuthenticateCompany(ctx context.Context, header string) (companies.Company, error) {
	scheme, raw, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(raw) == "" {
		return companies.Company{}, fmt.Errorf("%w: no bearer token", ErrUnauthorized)
	}
	var claims Claims
	if _, err := s.parser.ParseWithClaims(strings.TrimSpace(raw), &claims, s.key); err != nil {
		return companies.Company{}, fmt.Errorf("%w: %v", ErrUnauthorized, err)
	}
	if claims.Mode != s.cfg.Mode {
		return companies.Company{}, fmt.Errorf("%w: token for mode %q", ErrUnauthorized, claims.Mode)
	}
	if claims.Subject == "" {
		return companies.Company{}, fmt.Errorf("%w: token without subject", ErrUnauthorized)
	}
	c, err := s.company(ctx, claims.Subject)
	if errors.Is(err, companies.ErrNotFound) {
		return companies.Company{}, fmt.Errorf("%w: unknown company", ErrUnauthorized)
	}
	if err != nil {
		return companies.Company{}, fmt.Errorf("auth: read company: %w", err)
	}
	if !c.IsActive {
		return companies.Company{}, fmt.Errorf("%w: company disabled", ErrUnauthorized)
	}
	if c.KeyVersion != claims.KeyVersion {
		return companies.Company{}, fmt.Errorf("%w: client key rotated", ErrUnauthorized)
	}
	return c, nil
}

// company reads a company through the cache.
func (s *Service) company(ctx context.Context, id string) (companies.Company, error) {
	return s.cache.Read(ctx, id, func(ctx context.Context) (companies.Company, error) {
		return s.companies.Get(ctx, id)
	})
}

// CompanyCache keeps companies read by the guard for a bounded time
// (cache.Staleness in every function). One cache may be shared by every
// guard and companies.Service of a process, so that a change made through
// the console (Forget) takes effect at once in that process.
type CompanyCache = cache.Cache[companies.Company]

// NewCompanyCache returns an empty cache whose entries live for ttl as
// measured by now.
func NewCompanyCache(ttl time.Duration, now func() time.Time) *CompanyCache {
	return cache.New[companies.Company](ttl, now)
}
