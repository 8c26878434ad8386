package auth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"payments/pkg/auth"
)

// newService returns a service over fc's companies at clk's time, signing
// with signer (nil: none) and accepting keys besides.
func newService(t *testing.T, fc *fakeCompanies, clk *clock, s auth.Signer, keys ...*ecdsa.PublicKey) *auth.Service {
	t.Helper()
	svc, err := auth.NewService(auth.Config{Signer: s, Keys: keys, Mode: "sandbox", TTL: time.Hour, Now: clk.Now}, fc, nil,
		auth.NewCompanyCache(auth.CompanyCacheTTL, clk.Now))
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// handMade returns a token of company c1 signed with method and key, its
// header given kid unless kid is "".
func handMade(t *testing.T, clk *clock, method jwt.SigningMethod, key any, kid string) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, auth.Claims{Mode: "sandbox", KeyVersion: 3, RegisteredClaims: jwt.RegisteredClaims{
		Issuer: auth.DefaultIssuer, Subject: "c1", Audience: jwt.ClaimStrings{auth.Audience}, IssuedAt: jwt.NewNumericDate(clk.Now()), ExpiresAt: jwt.NewNumericDate(clk.Now().Add(time.Hour)),
	}})
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func kidOf(t *testing.T, i int) string {
	t.Helper()
	kid, err := auth.KeyID(&testKeys[i].PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return kid
}

func TestKeyIDIsTheJWKThumbprint(t *testing.T) {
	jwk, err := auth.PublicJWK(&testKeys[0].PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	// RFC 7638 §3.2: the required members, in lexicographic order, no
	// white space.
	sum := sha256.Sum256(fmt.Appendf(nil, `{"crv":"P-256","kty":"EC","x":"%s","y":"%s"}`, jwk.X, jwk.Y))
	x, _ := base64.RawURLEncoding.DecodeString(jwk.X)
	y, _ := base64.RawURLEncoding.DecodeString(jwk.Y)
	if jwk.Kid != base64.RawURLEncoding.EncodeToString(sum[:]) || kidOf(t, 0) != jwk.Kid || kidOf(t, 1) == jwk.Kid ||
		len(x) != 32 || len(y) != 32 || jwk.Kty != "EC" || jwk.Crv != "P-256" || jwk.Alg != "ES256" || jwk.Use != "sig" {
		t.Fatalf("jwk %+v", jwk)
	}
}

func TestLocalKeyFromHex(t *testing.T) {
	for _, bad := range []string{"", "11", strings.Repeat("zz", 32), strings.Repeat("00", 32), strings.Repeat("ff", 32)} {
		if _, err := auth.LocalKeyFromHex(bad); !errors.Is(err, auth.ErrConfig) {
			t.Errorf("LocalKeyFromHex(%q): %v, want ErrConfig", bad, err)
		}
	}
}

// TestOnlyPublishedKeysSign: a token is accepted when it is ES256, its kid
// names a key the service publishes and that key signed it; anything else
// is 401.
func TestOnlyPublishedKeysSign(t *testing.T) {
	_, fc, clk, _ := setup(t)
	svc := newService(t, fc, clk, signer(t, 0))
	other := testKeys[1]
	tests := []struct {
		name  string
		token string
		ok    bool
	}{
		{"its own key", handMade(t, clk, jwt.SigningMethodES256, testKeys[0], kidOf(t, 0)), true},
		{"another key under its kid", handMade(t, clk, jwt.SigningMethodES256, other, kidOf(t, 0)), false},
		{"another key under that key's kid", handMade(t, clk, jwt.SigningMethodES256, other, kidOf(t, 1)), false},
		{"no kid", handMade(t, clk, jwt.SigningMethodES256, testKeys[0], ""), false},
		{"unknown kid", handMade(t, clk, jwt.SigningMethodES256, testKeys[0], "not-a-key"), false},
		{"HS256 keyed with the public key's kid", handMade(t, clk, jwt.SigningMethodHS256, []byte(kidOf(t, 0)), kidOf(t, 0)), false},
		{"alg none", handMade(t, clk, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, kidOf(t, 0)), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := svc.Authenticate(context.Background(), "Bearer "+tt.token)
			if tt.ok && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !tt.ok && !errors.Is(err, auth.ErrUnauthorized) {
				t.Fatalf("err = %v, want ErrUnauthorized", err)
			}
		})
	}
}

// TestKeyRotation: after the signing key changes, tokens of the old key
// are accepted while it is published beside the new one, and refused once
// it is withdrawn; the keys published are the ones accepted, the signing
// key's first.
func TestKeyRotation(t *testing.T) {
	ctx := context.Background()
	_, fc, clk, _ := setup(t)
	before := newService(t, fc, clk, signer(t, 0))
	old, err := before.Issue(ctx, "192.0.2.1", "cli_1", "good")
	if err != nil {
		t.Fatal(err)
	}
	rotated := newService(t, fc, clk, signer(t, 1), &testKeys[0].PublicKey)
	guard := newService(t, fc, clk, nil, &testKeys[1].PublicKey, &testKeys[0].PublicKey) // a function that only checks
	withdrawn := newService(t, fc, clk, signer(t, 1))
	fresh, err := rotated.Issue(ctx, "192.0.2.1", "cli_1", "good")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := guard.Issue(ctx, "192.0.2.1", "cli_1", "good"); !errors.Is(err, auth.ErrNoSigner) {
		t.Fatalf("a service without a signer issued: %v", err)
	}
	var kids []string
	for _, k := range rotated.JWKS().Keys {
		kids = append(kids, k.Kid)
	}
	if want := []string{kidOf(t, 1), kidOf(t, 0)}; fmt.Sprint(kids) != fmt.Sprint(want) || rotated.KeyID() != want[0] {
		t.Fatalf("published %v signing %s, want %v", kids, rotated.KeyID(), want)
	}
	tests := []struct {
		name  string
		svc   *auth.Service
		token string
		ok    bool
	}{
		{"old token, old key published", rotated, old.AccessToken, true},
		{"old token at a function that only checks", guard, old.AccessToken, true},
		{"new token at a function that only checks", guard, fresh.AccessToken, true},
		{"new token before the rotation", before, fresh.AccessToken, false},
		{"old token, old key withdrawn", withdrawn, old.AccessToken, false},
		{"new token, old key withdrawn", withdrawn, fresh.AccessToken, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.svc.Authenticate(ctx, "Bearer "+tt.token)
			if (err == nil) != tt.ok {
				t.Fatalf("err = %v, want accepted %v", err, tt.ok)
			}
		})
	}
	clk.Advance(time.Hour)
	if _, err := rotated.Authenticate(ctx, "Bearer "+old.AccessToken); !errors.Is(err, auth.ErrUnauthorized) {
		t.Fatalf("old token after its expiry: %v", err)
	}
}

// TestIssuerChecked: the iss claim is the configured issuer and a token of
// another issuer is refused.
func TestIssuerChecked(t *testing.T) {
	ctx := context.Background()
	_, fc, clk, _ := setup(t)
	cache := auth.NewCompanyCache(auth.CompanyCacheTTL, clk.Now)
	api, err := auth.NewService(auth.Config{Signer: signer(t, 0), Issuer: "https://api.example.com/api/v1", Mode: "sandbox", TTL: time.Hour, Now: clk.Now}, fc, nil, cache)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := api.Issue(ctx, "192.0.2.1", "cli_1", "good")
	if err != nil {
		t.Fatal(err)
	}
	var claims auth.Claims
	jwt.NewParser().ParseUnverified(tok.AccessToken, &claims)
	if claims.Issuer != "https://api.example.com/api/v1" || api.Issuer() != claims.Issuer {
		t.Fatalf("iss %q", claims.Issuer)
	}
	if _, err := api.Authenticate(ctx, "Bearer "+tok.AccessToken); err != nil {
		t.Fatal(err)
	}
	if _, err := newService(t, fc, clk, signer(t, 0)).Authenticate(ctx, "Bearer "+tok.AccessToken); !errors.Is(err, auth.ErrUnauthorized) {
		t.Fatalf("token of another issuer: %v", err)
	}
}
