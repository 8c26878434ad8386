// Package auth issues access tokens for client credentials (POST
// /auth/token, rate limited per source IP) and checks them on every other
// route (Service.Guard).
//
// A token is an HS256 JWT bound to one company, one mode and the version of
// the client_key it was minted from; see docs/auth.md.
package auth

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"payments/pkg/cache"
	"payments/pkg/companies"
)

// Issuer is the iss claim of every token.
const Issuer = "payments"

// TokenType is the token_type of every token response.
const TokenType = "Bearer"

// MinSecretBytes is the shortest signing secret accepted.
const MinSecretBytes = 32

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
	Secret []byte        // HS256 signing secret, at least MinSecretBytes
	Mode   string        // the mode claim every token carries and the guard requires
	TTL    time.Duration // token lifetime, expires_in
}

// Service issues and checks tokens.
type Service struct {
	cfg       Config
	companies Companies
	limiter   RateLimiter
	cache     *CompanyCache
	// parser and key check tokens; built once, as every request needs
	// them (the parser reads the time from Now at each check).
	parser *jwt.Parser
	key    jwt.Keyfunc
	// Now returns the current time; tests may replace it.
	Now func() time.Time
}

// NewService returns a Service. limiter may be nil for a process that only
// checks tokens; cache may be nil, and then a private one is made.
func NewService(cfg Config, comps Companies, limiter RateLimiter, cache *CompanyCache) (*Service, error) {
	if len(cfg.Secret) < MinSecretBytes {
		return nil, fmt.Errorf("%w: token secret must be at least %d bytes", ErrConfig, MinSecretBytes)
	}
	if cfg.Mode == "" {
		return nil, fmt.Errorf("%w: mode is not set", ErrConfig)
	}
	if cfg.TTL <= 0 {
		return nil, fmt.Errorf("%w: token TTL must be positive", ErrConfig)
	}
	if cache == nil {
		cache = NewCompanyCache(CompanyCacheTTL, time.Now)
	}
	s := &Service{cfg: cfg, companies: comps, limiter: limiter, cache: cache, Now: time.Now}
	s.key = func(*jwt.Token) (any, error) { return s.cfg.Secret, nil }
	s.parser = jwt.NewParser(
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithIssuer(Issuer),
		jwt.WithExpirationRequired(),
		jwt.WithStrictDecoding(), // one spelling per token: unused bits of base64url zero, no padding
		jwt.WithTimeFunc(func() time.Time { return s.Now() }),
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
	now := s.Now()
	if err := s.admit(ctx, sourceIP, now); err != nil {
		return Token{}, err
	}
	return s.issue(ctx, clientID, clientKey, now)
}

// admit charges one request to sourceIP's rate limit, or refuses it with a
// *RateLimitError.
func (s *Service) admit(ctx context.Context, sourceIP string, now time.Time) error {
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

func (s *Service) issue(ctx context.Context, clientID, clientKey string, now time.Time) (Token, error) {
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
			Issuer:    Issuer,
			Subject:   c.ID,
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(s.cfg.TTL)),
			ID:        hex.EncodeToString(jti),
		},
	}
	signed, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(s.cfg.Secret)
	if err != nil {
		return Token{}, fmt.Errorf("auth: sign token: %w", err)
	}
	return Token{AccessToken: signed, TokenType: TokenType, ExpiresIn: int(s.cfg.TTL / time.Second)}, nil
}
