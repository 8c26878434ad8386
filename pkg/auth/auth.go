// Package auth issues access tokens for client credentials (POST
// /auth/token, rate limited per source IP) and checks them on every other
// route (Service.Guard).
//
// A token is an ES256 JWT, signed by a key only the auth function may use
// (Signer) and named by its kid, bound to one company, one mode and the
// version of the client_key it was minted from. The public keys are
// published (Service.JWKS); every other function checks tokens with them
// alone. See docs/auth.md.
package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"payments/pkg/cache"
	"payments/pkg/companies"
)

// DefaultIssuer is the iss claim of every token where the stage has no
// public base URL (Config.Issuer).
const DefaultIssuer = "payments"

// Audience is the aud claim of every token, which the guard requires: the
// audience an HTTP API JWT authorizer is configured with (docs/auth.md).
const Audience = "payments"

// TokenType is the token_type of every token response.
const TokenType = "Bearer"

// RateWindow is the sliding window of the token endpoint's rate limit.
const RateWindow = 60 * time.Second

// DefaultRateLimit is the number of token requests admitted per source IP
// per RateWindow when the configuration does not say.
const DefaultRateLimit = 10

// CompanyCacheTTL is how long the guard trusts a company it has read: a
// disabled company or a rotated key takes effect in other processes within
// this time. It is the one staleness rule of pkg/cache.
const CompanyCacheTTL = cache.Staleness

// Errors of this package.
var (
	// ErrInvalidCredentials is an unknown client_id, a wrong client_key or a
	// disabled company, answered identically.
	ErrInvalidCredentials = errors.New("auth: invalid client credentials")
	// ErrRateLimited is a token request past the per-IP limit. The error
	// returned is a *RateLimitError carrying the wait.
	ErrRateLimited = errors.New("auth: rate limit exceeded")
	// ErrConfig is a missing or unusable setting.
	ErrConfig = errors.New("auth: configuration")
	// ErrUnknownKey is a token whose kid names no key accepted.
	ErrUnknownKey = errors.New("auth: unknown token key")
	// ErrNoSigner is a token asked of a service that only checks them.
	ErrNoSigner = errors.New("auth: no token signer")
	// ErrUnauthorized is an Authorization header that proves no company:
	// the HTTP layer answers it as httpapi.ErrUnauthorized.
	ErrUnauthorized = errors.New("auth: unauthorized")
)

// RateLimitError is a refused token request with the time after which a new
// one may be admitted.
type RateLimitError struct {
	RetryAfter time.Duration
}

// Error returns the refusal with its wait.
func (e *RateLimitError) Error() string {
	return fmt.Sprintf("%v: retry after %v", ErrRateLimited, e.RetryAfter)
}

// Unwrap returns ErrRateLimited.
func (e *RateLimitError) Unwrap() error { return ErrRateLimited }

// RetryAfterSeconds returns the wait in whole seconds, rounded up, at least 1.
func (e *RateLimitError) RetryAfterSeconds() int {
	return max(1, int(math.Ceil(e.RetryAfter.Seconds())))
}

// RateLimiter admits or refuses one request for key at now. When it refuses,
// retryAfter is how long until a request would be admitted. A refused
// request is not counted.
type RateLimiter interface {
	Allow(ctx context.Context, key string, now time.Time) (allowed bool, retryAfter time.Duration, err error)
}

// Companies is what the service needs of the companies package;
// *companies.Service implements it.
type Companies interface {
	Verify(ctx context.Context, clientID, clientKey string) (companies.Company, error)
	Get(ctx context.Context, id string) (companies.Company, error)
}

// Config is the service's settings.
type Config struct {
	// Signer signs the tokens issued: the auth function's alone. nil for
	// a service that only checks tokens.
	Signer Signer
	// Keys are the public keys accepted besides the Signer's: every key
	// tokens still alive may be signed with (the other key during a
	// rotation, docs/auth.md). The Signer's key and these are the ones
	// published and the only ones accepted.
	Keys   []*ecdsa.PublicKey
	Issuer string        // the iss claim: the API's base URL; "" is DefaultIssuer
	Mode   string        // the mode claim every token carries and the guard requires
	TTL    time.Duration // token lifetime, expires_in
	// Now is the clock tokens are issued and checked on (default
	// time.Now); tests give one they move.
	Now func() time.Time
}

// Service issues and checks tokens.
type Service struct {
	cfg       Config
	companies Companies
	limiter   RateLimiter
	cache     *CompanyCache
	kid       string                      // the Signer's key's kid
	keys      map[string]*ecdsa.PublicKey // accepted keys by kid
	jwks      JWKS                        // the accepted keys, published
	// parser and key check tokens; built once, as every request needs
	// them (the parser reads the time from Now at each check).
	parser *jwt.Parser
	key    jwt.Keyfunc
	now    func() time.Time
}

// NewService returns a Service reading companies from comps through cache,
// the function's company cache (NewCompanyCache), which the console's
// companies service of the same process forgets a company it changes
// through. limiter may be nil for a process that only checks tokens.
func NewService(cfg Config, comps Companies, limiter RateLimiter, cache *CompanyCache) (*Service, error) {
	if cfg.Mode == "" {
		return nil, fmt.Errorf("%w: mode is not set", ErrConfig)
	}
	if cfg.TTL <= 0 {
		return nil, fmt.Errorf("%w: token TTL must be positive", ErrConfig)
	}
	if cache == nil {
		return nil, fmt.Errorf("%w: no company cache", ErrConfig)
	}
	if cfg.Issuer == "" {
		cfg.Issuer = DefaultIssuer
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	s := &Service{cfg: cfg, companies: comps, limiter: limiter, cache: cache, keys: map[string]*ecdsa.PublicKey{}, now: now}
	keys := cfg.Keys
	if cfg.Signer != nil {
		keys = append([]*ecdsa.PublicKey{cfg.Signer.Public()}, keys...)
	}
	for i, pub := range keys {
		jwk, err := PublicJWK(pub)
		if err != nil {
			return nil, err
		}
		if i == 0 && cfg.Signer != nil {
			s.kid = jwk.Kid
		}
		if _, dup := s.keys[jwk.Kid]; dup {
			continue
		}
		s.keys[jwk.Kid] = pub
		s.jwks.Keys = append(s.jwks.Keys, jwk)
	}
	if len(s.keys) == 0 {
		return nil, fmt.Errorf("%w: no token key", ErrConfig)
	}
	s.key = func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		if pub, ok := s.keys[kid]; ok {
			return pub, nil
		}
		return nil, fmt.Errorf("%w: unknown kid %q", ErrUnknownKey, kid)
	}
	s.parser = jwt.NewParser(
		jwt.WithValidMethods([]string{Algorithm}),
		jwt.WithIssuer(cfg.Issuer),
		jwt.WithAudience(Audience),
		jwt.WithExpirationRequired(),
		jwt.WithStrictDecoding(), // one spelling per token: unused bits of base64url zero, no padding
		jwt.WithTimeFunc(func() time.Time { return s.now() }),
	)
	return s, nil
}

// Token is the token endpoint's response body (raw, no envelope).
type Token struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int    `json:"expires_in"`
}

// Claims are the claims of an access token: sub is the company id, mode the
// deployment mode, kv the version of the client_key it was minted from.
type Claims struct {
	Mode       string `json:"mode"`
	KeyVersion int    `json:"kv"`
	jwt.RegisteredClaims
}

// Issue mints a token for the company whose credentials these are, after
// charging the request to sourceIP's rate limit. Every request is charged,
// valid or not, except those refused by the limit.
func (s *Service) Issue(ctx context.Context, sourceIP, clientID, clientKey string) (Token, error) {
	now := s.now()
	if err := s.Admit(ctx, sourceIP, now); err != nil {
		return Token{}, err
	}
	return s.IssueAt(ctx, clientID, clientKey, now)
}

// Admit charges one request to sourceIP's rate limit, or refuses it with a
// *RateLimitError.
func (s *Service) Admit(ctx context.Context, sourceIP string, now time.Time) error {
	if s.limiter == nil {
		return nil
	}
	ok, wait, err := s.limiter.Allow(ctx, sourceIP, now)
	if err != nil {
		return fmt.Errorf("auth: rate limit: %w", err)
	}
	if !ok {
		return &RateLimitError{RetryAfter: wait}
	}
	return nil
}

// IssueAt mints a token for the company whose credentials these are, at
// now, its request already charged to the rate limit (Admit).
func (s *Service) IssueAt(ctx context.Context, clientID, clientKey string, now time.Time) (Token, error) {
	c, err := s.companies.Verify(ctx, clientID, clientKey)
	if errors.Is(err, companies.ErrInvalidCredentials) {
		return Token{}, ErrInvalidCredentials
	}
	if err != nil {
		return Token{}, fmt.Errorf("auth: verify credentials: %w", err)
	}
	jti := make([]byte, 16)
	if _, err := rand.Read(jti); err != nil {
		return Token{}, fmt.Errorf("auth: random jti: %w", err)
	}
	claims := Claims{
		Mode:       s.cfg.Mode,
		KeyVersion: c.KeyVersion,
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    s.cfg.Issuer,
			Subject:   c.ID,
			Audience:  jwt.ClaimStrings{Audience},
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(s.cfg.TTL)),
			ID:        hex.EncodeToString(jti),
		},
	}
	signed, err := s.sign(ctx, claims)
	if err != nil {
		return Token{}, err
	}
	return Token{AccessToken: signed, TokenType: TokenType, ExpiresIn: int(s.cfg.TTL / time.Second)}, nil
}

// sign returns the token of claims: header {"alg":"ES256","kid":…,
// "typ":"JWT"}, signed by the Signer.
func (s *Service) sign(ctx context.Context, claims Claims) (string, error) {
	if s.cfg.Signer == nil {
		return "", ErrNoSigner
	}
	t := jwt.NewWithClaims(jwt.SigningMethodES256, claims)
	t.Header["kid"] = s.kid
	input, err := t.SigningString()
	if err != nil {
		return "", fmt.Errorf("auth: encode token: %w", err)
	}
	digest := sha256.Sum256([]byte(input))
	sig, err := s.cfg.Signer.Sign(ctx, digest[:])
	if err != nil {
		return "", fmt.Errorf("auth: sign token: %w", err)
	}
	if len(sig) != SignatureSize {
		return "", fmt.Errorf("auth: sign token: a signature of %d bytes, not %d", len(sig), SignatureSize)
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// Issuer returns the iss claim of the service's tokens.
func (s *Service) Issuer() string { return s.cfg.Issuer }

// KeyID returns the kid of the tokens the service signs, "" when it signs
// none.
func (s *Service) KeyID() string { return s.kid }

// JWKS returns the public keys the service accepts, the signing key's
// first.
func (s *Service) JWKS() JWKS { return s.jwks }

// Now is the time on the service's clock (Config.Now).
func (s *Service) Now() time.Time { return s.now() }
