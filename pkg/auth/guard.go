package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"payments/pkg/companies"
	"payments/pkg/httpapi"
)

// Guard returns the middleware of every company route: it admits a request
// carrying one "Authorization: Bearer <token>" with a valid token and puts
// the token's company id in the request context (httpapi.WithCompany).
// Anything else, two Authorization headers included, is
// httpapi.ErrUnauthorized.
func (s *Service) Guard() httpapi.Guard {
	return func(r *http.Request) (context.Context, error) {
		header, err := httpapi.Credential(r, "Authorization")
		if err != nil {
			return nil, err
		}
		id, err := s.Authenticate(r.Context(), header)
		if err != nil {
			return nil, err
		}
		return httpapi.WithCompany(r.Context(), id), nil
	}
}

// Authenticate checks an Authorization header value and returns the company
// id its token was issued to. It refuses, with httpapi.ErrUnauthorized, a
// missing or non-Bearer header, a malformed or expired token, a bad
// signature, any algorithm but HS256, another mode, an unknown or inactive
// company, and a token minted from a client_key since rotated.
func (s *Service) Authenticate(ctx context.Context, header string) (string, error) {
	scheme, raw, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(raw) == "" {
		return "", fmt.Errorf("%w: no bearer token", httpapi.ErrUnauthorized)
	}
	var claims Claims
	_, err := jwt.ParseWithClaims(strings.TrimSpace(raw), &claims,
		func(*jwt.Token) (any, error) { return s.cfg.Secret, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithIssuer(Issuer),
		jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(s.Now),
	)
	if err != nil {
		return "", fmt.Errorf("%w: %v", httpapi.ErrUnauthorized, err)
	}
	if claims.Mode != s.cfg.Mode {
		return "", fmt.Errorf("%w: token for mode %q", httpapi.ErrUnauthorized, claims.Mode)
	}
	if claims.Subject == "" {
		return "", fmt.Errorf("%w: token without subject", httpapi.ErrUnauthorized)
	}
	c, err := s.company(ctx, claims.Subject)
	if errors.Is(err, companies.ErrNotFound) {
		return "", fmt.Errorf("%w: unknown company", httpapi.ErrUnauthorized)
	}
	if err != nil {
		return "", fmt.Errorf("auth: read company: %w", err)
	}
	if !c.IsActive {
		return "", fmt.Errorf("%w: company disabled", httpapi.ErrUnauthorized)
	}
	if c.KeyVersion != claims.KeyVersion {
		return "", fmt.Errorf("%w: client key rotated", httpapi.ErrUnauthorized)
	}
	return c.ID, nil
}

// company reads a company through the cache.
func (s *Service) company(ctx context.Context, id string) (companies.Company, error) {
	if c, ok := s.cache.Get(id); ok {
		return c, nil
	}
	gen := s.cache.generation()
	c, err := s.companies.Get(ctx, id)
	if err != nil {
		return companies.Company{}, err
	}
	s.cache.put(c, gen)
	return c, nil
}

// maxCachedCompanies bounds the cache; past it, expired entries are dropped,
// and if none were, all of them.
const maxCachedCompanies = 10000

// CompanyCache keeps companies read by the guard for a bounded time. It is
// safe for concurrent use. One cache may be shared by every guard and
// companies.Service of a process, so that a change made through the console
// (Forget) takes effect at once in that process.
type CompanyCache struct {
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	entries map[string]cached
	gen     uint64 // counts Forget calls
}

type cached struct {
	company companies.Company
	at      time.Time
}

// NewCompanyCache returns an empty cache whose entries live for ttl as
// measured by now.
func NewCompanyCache(ttl time.Duration, now func() time.Time) *CompanyCache {
	return &CompanyCache{ttl: ttl, now: now, entries: map[string]cached{}}
}

// Get returns the company id if it was put less than ttl ago.
func (c *CompanyCache) Get(id string) (companies.Company, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[id]
	if !ok {
		return companies.Company{}, false
	}
	if c.now().Sub(e.at) >= c.ttl {
		delete(c.entries, id)
		return companies.Company{}, false
	}
	return e.company, true
}

// Put stores co, read now.
func (c *CompanyCache) Put(co companies.Company) {
	c.put(co, c.generation())
}

// generation returns the number of Forget calls so far.
func (c *CompanyCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// put stores co unless Forget was called since generation gen was read: a
// read that raced with a change must not bring the old company back.
func (c *CompanyCache) put(co companies.Company, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	now := c.now()
	if len(c.entries) >= maxCachedCompanies {
		for id, e := range c.entries {
			if now.Sub(e.at) >= c.ttl {
				delete(c.entries, id)
			}
		}
		if len(c.entries) >= maxCachedCompanies {
			clear(c.entries)
		}
	}
	c.entries[co.ID] = cached{company: co, at: now}
}

// Forget drops company id, so the next read goes to the store.
func (c *CompanyCache) Forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, id)
	c.gen++
}
