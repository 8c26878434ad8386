package cognitopool_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"payments/pkg/identity"
	"payments/pkg/identity/cognitopool"
	"payments/pkg/identity/cognitopool/cognitotest"
)

// sign returns a token of claims signed by key under kid.
func sign(t *testing.T, key *rsa.PrivateKey, kid string, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	tok.Header["kid"] = kid
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestVerifyRefusesAnotherKey: a token of the pool's issuer, audience and
// key id, signed by a key that is not the pool's, is refused.
func TestVerifyRefusesAnotherKey(t *testing.T) {
	ctx := context.Background()
	p, r := cognitotest.NewPool(t)
	genuine := signUp(t, p, companyA, "owner@a.example", identity.Owner)
	parsed, _, err := jwt.NewParser().ParseUnverified(genuine, jwt.MapClaims{})
	if err != nil {
		t.Fatal(err)
	}
	claims := parsed.Claims.(jwt.MapClaims)
	if claims["aud"] != r.ClientID || claims["iss"] != cognitopool.Issuer("", cognitotest.Endpoint(t), r.PoolID) {
		t.Fatalf("the pool's token names iss %v and aud %v, want the pool's and its client's", claims["iss"], claims["aud"])
	}
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	forged := sign(t, other, parsed.Header["kid"].(string), claims)
	if _, err := p.Verify(ctx, forged); !errors.Is(err, identity.ErrInvalidToken) {
		t.Errorf("Verify of a token signed by another key = %v, want ErrInvalidToken", err)
	}
	if _, err := p.Verify(ctx, genuine); err != nil {
		t.Errorf("Verify of the pool's own token: %v", err)
	}
}

// jwks serves key's public half under kid, counting the fetches.
func jwks(t *testing.T, kid string, key *rsa.PrivateKey) (*httptest.Server, *atomic.Int32) {
	var fetches atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/pool_1/.well-known/jwks.json" {
			http.NotFound(w, r)
			return
		}
		fetches.Add(1)
		json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{{
			"kid": kid, "kty": "RSA", "alg": "RS256", "use": "sig",
			"n": base64.RawURLEncoding.EncodeToString(key.N.Bytes()),
			"e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(key.E)).Bytes()),
		}}})
	}))
	t.Cleanup(srv.Close)
	return srv, &fetches
}

func TestVerifyClaims(t *testing.T) {
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	srv, fetches := jwks(t, "k1", key)
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	clock := now
	p, err := cognitopool.New(cognitopool.Config{
		API: cognitotestAPI{}, Endpoint: srv.URL, PoolID: "pool_1", ClientID: "client_1",
		Now: func() time.Time { return clock },
	})
	if err != nil {
		t.Fatal(err)
	}
	good := func() jwt.MapClaims {
		return jwt.MapClaims{
			"iss": srv.URL + "/pool_1", "aud": "client_1", "sub": "sub-1", "token_use": "id",
			"email": "a@a.example", "cognito:groups": []string{"developer"}, "custom:company_id": companyA,
			"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
		}
	}
	u, err := p.Verify(context.Background(), sign(t, key, "k1", good()))
	want := identity.User{Subject: "sub-1", Email: "a@a.example", CompanyID: companyA, Role: identity.Developer, Expires: now.Add(time.Hour)}
	if err != nil || u != want {
		t.Fatalf("Verify = %+v, %v; want %+v", u, err, want)
	}
	for _, tt := range []struct {
		name   string
		change func(jwt.MapClaims)
		kid    string
	}{
		{"another issuer", func(c jwt.MapClaims) { c["iss"] = srv.URL + "/pool_2" }, "k1"},
		{"another client", func(c jwt.MapClaims) { c["aud"] = "client_2" }, "k1"},
		{"an access token", func(c jwt.MapClaims) { c["token_use"] = "access" }, "k1"},
		{"expired", func(c jwt.MapClaims) { c["exp"] = now.Add(-time.Second).Unix() }, "k1"},
		{"no expiry", func(c jwt.MapClaims) { delete(c, "exp") }, "k1"},
		{"no group", func(c jwt.MapClaims) { delete(c, "cognito:groups") }, "k1"},
		{"two roles", func(c jwt.MapClaims) { c["cognito:groups"] = []string{"owner", "viewer"} }, "k1"},
		{"an unknown group", func(c jwt.MapClaims) { c["cognito:groups"] = []string{"admin"} }, "k1"},
		{"no company", func(c jwt.MapClaims) { delete(c, "custom:company_id") }, "k1"},
		{"an unknown key", func(jwt.MapClaims) {}, "k2"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := good()
			tt.change(c)
			if u, err := p.Verify(context.Background(), sign(t, key, tt.kid, c)); !errors.Is(err, identity.ErrInvalidToken) {
				t.Errorf("Verify = %+v, %v; want ErrInvalidToken", u, err)
			}
		})
	}
	if _, err := p.Verify(context.Background(), "not.a.token"); !errors.Is(err, identity.ErrInvalidToken) {
		t.Errorf("Verify of garbage = %v, want ErrInvalidToken", err)
	}

	// The keys were fetched once: the unknown kid came within
	// KeysRefetchInterval of that fetch. A minute later an unknown kid
	// fetches them again, and a second one right after does not; after
	// KeysLifetime they are fetched anew.
	if n := fetches.Load(); n != 1 {
		t.Errorf("%d fetches of the keys, want 1", n)
	}
	clock = now.Add(cognitopool.KeysRefetchInterval)
	for i, kid := range []string{"k2", "k3"} {
		if _, err := p.Verify(context.Background(), sign(t, key, kid, good())); !errors.Is(err, identity.ErrInvalidToken) {
			t.Errorf("Verify with kid %s = %v, want ErrInvalidToken", kid, err)
		}
		if n := fetches.Load(); n != 2 {
			t.Errorf("%d fetches after %d unknown kids a minute later, want 2", n, i+1)
		}
	}
	clock = now.Add(cognitopool.KeysRefetchInterval + cognitopool.KeysLifetime)
	c := good()
	c["exp"] = clock.Add(time.Hour).Unix()
	if _, err := p.Verify(context.Background(), sign(t, key, "k1", c)); err != nil {
		t.Errorf("Verify after KeysLifetime: %v", err)
	}
	if n := fetches.Load(); n != 3 {
		t.Errorf("%d fetches after KeysLifetime, want 3", n)
	}
}

// cognitotestAPI is an API that Verify does not call.
type cognitotestAPI struct{ cognitopool.API }
