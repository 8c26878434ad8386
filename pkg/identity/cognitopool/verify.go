package cognitopool

import (
	"context"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"payments/pkg/identity"
)

// KeysLifetime is how long the pool's published keys are trusted before
// they are fetched again. Cognito publishes a pool's keys for as long as
// it signs with them; a token signed by a key not yet seen fetches them at
// once (at most once every KeysRefetchInterval), so a new key is taken
// without waiting.
const KeysLifetime = time.Hour

// KeysRefetchInterval is the least time between two fetches of the keys
// caused by tokens of unknown keys, so that a stream of forged tokens does
// not become a stream of fetches.
const KeysRefetchInterval = time.Minute

// Verify implements identity.Pool: the token must be an RS256 ID token of
// the pool (iss), for the dashboard client (aud), unexpired, signed by one
// of the pool's published keys, with one role among its groups and a
// company.
func (p *Pool) Verify(ctx context.Context, idToken string) (identity.User, error) {
	var claims struct {
		jwt.RegisteredClaims
		TokenUse  string   `json:"token_use"`
		Email     string   `json:"email"`
		Groups    []string `json:"cognito:groups"`
		CompanyID string   `json:"custom:company_id"`
	}
	_, err := jwt.ParseWithClaims(idToken, &claims, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		return p.keys.key(ctx, kid)
	},
		jwt.WithValidMethods([]string{"RS256"}), jwt.WithIssuer(p.issuer), jwt.WithAudience(p.clientID),
		jwt.WithExpirationRequired(), jwt.WithTimeFunc(p.now))
	if err != nil {
		var fetch *fetchError
		if errors.As(err, &fetch) {
			return identity.User{}, fmt.Errorf("cognitopool: verify: %w", fetch.err)
		}
		return identity.User{}, fmt.Errorf("cognitopool: verify: %w: %v", identity.ErrInvalidToken, err)
	}
	invalid := func(why string) (identity.User, error) {
		return identity.User{}, fmt.Errorf("cognitopool: verify: %w: %s", identity.ErrInvalidToken, why)
	}
	switch {
	case claims.TokenUse != "id":
		return invalid("token_use is not id")
	case claims.Subject == "":
		return invalid("no sub")
	case claims.CompanyID == "":
		return invalid("no company")
	case len(claims.Groups) != 1 || !identity.Role(claims.Groups[0]).Valid():
		return invalid("not exactly one role among its groups")
	}
	return identity.User{
		Subject: claims.Subject, Email: claims.Email, CompanyID: claims.CompanyID,
		Role: identity.Role(claims.Groups[0]), Expires: claims.ExpiresAt.Time.UTC(),
	}, nil
}

// keySet is the pool's published keys (its JWKS), fetched and kept for
// KeysLifetime.
type keySet struct {
	http *http.Client
	url  string
	now  func() time.Time

	mu      sync.Mutex
	keys    map[string]*rsa.PublicKey
	fetched time.Time // when keys were fetched
	tried   time.Time // when a fetch was last tried
}

func newKeySet(c *http.Client, url string, now func() time.Time) *keySet {
	return &keySet{http: c, url: url, now: now}
}

// fetchError is a failure to fetch the keys: the pool's trouble, not the
// token's.
type fetchError struct{ err error }

func (e *fetchError) Error() string { return e.err.Error() }

// key returns the key kid names, fetching the keys when they are older
// than KeysLifetime or, at most every KeysRefetchInterval, when kid is
// not among them.
func (s *keySet) key(ctx context.Context, kid string) (*rsa.PublicKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	k, ok := s.keys[kid]
	stale := s.keys == nil || now.Sub(s.fetched) >= KeysLifetime
	if (stale || !ok) && (s.keys == nil || now.Sub(s.tried) >= KeysRefetchInterval) {
		s.tried = now
		keys, err := s.fetch(ctx)
		if err != nil {
			if s.keys == nil || !ok {
				return nil, &fetchError{err}
			}
			return k, nil // keep trusting a known key while the keys cannot be read
		}
		s.keys, s.fetched = keys, now
		k, ok = s.keys[kid]
	}
	if !ok {
		return nil, fmt.Errorf("unknown key %q", kid)
	}
	return k, nil
}

func (s *keySet) fetch(ctx context.Context) (map[string]*rsa.PublicKey, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch the pool's keys: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch the pool's keys: %s answered %d", s.url, resp.StatusCode)
	}
	var set struct {
		Keys []struct {
			Kid, Kty, Alg, Use, N, E string
		} `json:"keys"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&set); err != nil {
		return nil, fmt.Errorf("fetch the pool's keys: %w", err)
	}
	keys := map[string]*rsa.PublicKey{}
	for _, k := range set.Keys {
		if k.Kty != "RSA" || (k.Use != "" && k.Use != "sig") {
			continue
		}
		n, err1 := base64.RawURLEncoding.DecodeString(k.N)
		e, err2 := base64.RawURLEncoding.DecodeString(k.E)
		if err1 != nil || err2 != nil || len(e) == 0 || len(e) > 4 {
			return nil, fmt.Errorf("fetch the pool's keys: key %q is not a valid RSA key", k.Kid)
		}
		keys[k.Kid] = &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
	}
	return keys, nil
}
