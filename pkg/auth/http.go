package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"payments/pkg/cache"
	"payments/pkg/companies"
	"payments/pkg/field"
	"payments/pkg/httpapi"
)

// Routes registers the auth function's routes, none of which takes a
// token: POST /auth/token, and the public keys that check tokens, GET
// /.well-known/jwks.json, named by GET /.well-known/openid-configuration.
func Routes(rt *httpapi.Router, svc *Service) {
	rt.Handle("POST /auth/token", func(w http.ResponseWriter, r *http.Request) error {
		return tokenHandler(svc, w, r)
	})
	rt.Handle("GET /.well-known/jwks.json", func(w http.ResponseWriter, r *http.Request) error {
		writePublic(w, svc.JWKS())
		return nil
	})
	rt.Handle("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) error {
		writePublic(w, svc.discovery(r))
		return nil
	})
}

// PublicMaxAge is how long a client or cache may keep the published keys
// (Cache-Control max-age, in seconds): a key published by a rotation is
// published this long before any token is signed with it (docs/auth.md).
const PublicMaxAge = 300

// writePublic writes v as a cacheable answer: it holds no secret.
func writePublic(w http.ResponseWriter, v any) {
	w.Header().Set("Cache-Control", fmt.Sprintf("public, max-age=%d", PublicMaxAge))
	httpapi.Write(w, http.StatusOK, v)
}

// Discovery is the body of GET /.well-known/openid-configuration: the
// part of OpenID Connect Discovery 1.0 a JWT verifier (the HTTP API's JWT
// authorizer) reads.
type Discovery struct {
	Issuer                 string   `json:"issuer"`
	JWKSURI                string   `json:"jwks_uri"`
	TokenEndpoint          string   `json:"token_endpoint"`
	SigningAlgs            []string `json:"id_token_signing_alg_values_supported"`
	ResponseTypes          []string `json:"response_types_supported"`
	SubjectTypes           []string `json:"subject_types_supported"`
	TokenEndpointAuthMeths []string `json:"token_endpoint_auth_methods_supported"`
}

// discovery returns the discovery document. Its URLs are under the
// issuer when the issuer is the API's base URL, else under the base URL
// of the request.
func (s *Service) discovery(r *http.Request) Discovery {
	base := s.cfg.Issuer
	if !strings.HasPrefix(base, "https://") && !strings.HasPrefix(base, "http://") {
		scheme := "https"
		if r.TLS == nil && r.Header.Get("X-Forwarded-Proto") == "http" {
			scheme = "http"
		}
		base = scheme + "://" + r.Host + httpapi.BasePath
	}
	return Discovery{
		Issuer:                 s.cfg.Issuer,
		JWKSURI:                base + "/.well-known/jwks.json",
		TokenEndpoint:          base + "/auth/token",
		SigningAlgs:            []string{Algorithm},
		ResponseTypes:          []string{"token"},
		SubjectTypes:           []string{"public"},
		TokenEndpointAuthMeths: []string{"client_secret_post"},
	}
}

type tokenRequest struct {
	ClientID  string `json:"client_id"`
	ClientKey string `json:"client_key"`
}

// missingCredentials is the spec's message for a missing or empty field.
const missingCredentials = "missing or empty client_id or client_key"

func tokenHandler(svc *Service, w http.ResponseWriter, r *http.Request) error {
	// The limit is charged before the body is read: every request counts,
	// and a refused one costs no credential check.
	now := svc.now()
	if err := svc.admit(r.Context(), httpapi.SourceIP(r), now); err != nil {
		return err // a *RateLimitError: its Retry-After is written with it
	}
	var req tokenRequest
	if err := httpapi.Decode(r, &req); err != nil {
		return err
	}
	switch {
	case req.ClientID == "":
		return field.Invalid("client_id", missingCredentials)
	case req.ClientKey == "":
		return field.Invalid("client_key", missingCredentials)
	}
	tok, err := svc.issue(r.Context(), req.ClientID, req.ClientKey, now)
	if err != nil {
		return err
	}
	httpapi.Write(w, http.StatusOK, tok) // Cache-Control no-store, as every answer of the router
	return nil
}

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
// missing or non-Bearer header, a malformed or expired token, any
// algorithm but ES256, a kid that names no key accepted, a bad signature,
// another issuer, another mode, an unknown or inactive company, and a token
// minted from a client_key since rotated.
func (s *Service) Authenticate(ctx context.Context, header string) (string, error) {
	scheme, raw, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(raw) == "" {
		return "", fmt.Errorf("%w: no bearer token", httpapi.ErrUnauthorized)
	}
	var claims Claims
	if _, err := s.parser.ParseWithClaims(strings.TrimSpace(raw), &claims, s.key); err != nil {
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
