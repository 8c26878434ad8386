package auth_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"

	"payments/pkg/app"
	"payments/pkg/app/apptest"
	"payments/pkg/auth"
	"payments/pkg/auth/authhttp"
	"payments/pkg/auth/kmssign"
	"payments/pkg/auth/kmssign/kmstest"
	"payments/pkg/function"
	"payments/pkg/function/tokenkeys"
)

// TestPublicKeys: the auth function publishes the keys that check tokens,
// without a token and cacheable, and names them in its discovery document;
// the kid of every token it issues is among them.
func TestPublicKeys(t *testing.T) {
	env := apptest.NewAuthTestEnv(t)
	_, clientID, clientKey := env.CreateCompany(t, "Acme")
	tok, _ := jwt.NewParser().Parse(env.MustToken(t, clientID, clientKey), nil)

	res := apptest.AuthTestCall(t, env.Auth, apptest.AuthTestEvent("GET", "/api/v1/.well-known/jwks.json", "192.0.2.7", nil, ""))
	var jwks auth.JWKS
	if err := json.Unmarshal([]byte(res.Body), &jwks); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("jwks: %d %s", res.StatusCode, res.Body)
	}
	if cc := res.Headers["Cache-Control"]; cc != "public, max-age=300" {
		t.Fatalf("jwks Cache-Control %q", cc)
	}
	var kids []string
	for _, k := range jwks.Keys {
		if k.Kty != "EC" || k.Crv != "P-256" || k.Alg != "ES256" || k.Use != "sig" || k.X == "" || k.Y == "" {
			t.Fatalf("key %+v", k)
		}
		kids = append(kids, k.Kid)
	}
	if want := []string{testKID(t, 0), testKID(t, 1)}; !slices.Equal(kids, want) || tok == nil || tok.Header["kid"] != kids[0] {
		t.Fatalf("published %v, want %v (signing key first), the token's kid among them", kids, want)
	}

	res = apptest.AuthTestCall(t, env.Auth, apptest.AuthTestEvent("GET", "/api/v1/.well-known/openid-configuration", "192.0.2.7", nil, ""))
	var d authhttp.Discovery
	if err := json.Unmarshal([]byte(res.Body), &d); err != nil || res.StatusCode != http.StatusOK || res.Headers["Cache-Control"] != "public, max-age=300" {
		t.Fatalf("openid-configuration: %d %v %s", res.StatusCode, res.Headers, res.Body)
	}
	if d.Issuer != auth.DefaultIssuer || !strings.HasSuffix(d.JWKSURI, "/api/v1/.well-known/jwks.json") ||
		!strings.HasPrefix(d.JWKSURI, "https://") || !slices.Equal(d.SigningAlgs, []string{"ES256"}) {
		t.Fatalf("discovery %+v", d)
	}
}

// TestDiscoveryUnderIssuer: where the issuer is the API's base URL, the
// discovery document's URLs are under it, as a JWT authorizer finds them.
func TestDiscoveryUnderIssuer(t *testing.T) {
	env := apptest.NewAuthTestEnv(t)
	cfg := env.Cfg
	cfg.TokenIssuer = "https://api.example.com/api/v1"
	h, err := app.HTTPFunctions["auth"].New(context.Background(), apptest.Recording(cfg, "auth"), env.Caches)
	if err != nil {
		t.Fatal(err)
	}
	res := apptest.AuthTestCall(t, h, apptest.AuthTestEvent("GET", "/api/v1/.well-known/openid-configuration", "192.0.2.7", nil, ""))
	var d authhttp.Discovery
	if err := json.Unmarshal([]byte(res.Body), &d); err != nil {
		t.Fatal(err)
	}
	if d.Issuer != cfg.TokenIssuer || d.JWKSURI != cfg.TokenIssuer+"/.well-known/jwks.json" || d.TokenEndpoint != cfg.TokenIssuer+"/auth/token" {
		t.Fatalf("discovery %+v", d)
	}
}

// tokenFunctions are the functions that sign (auth) or check tokens.
var tokenFunctions = []string{"auth", "wallets", "payments", "customers", "cards", "card-network", "webhooks"}

// TestKMSTokenKeys runs the token functions on KMS keys, as in AWS: the
// auth function signs with the signing key (kms:Sign) and every function
// reads the public keys (kms:GetPublicKey) at start; a token signed by KMS
// is accepted by a function that only checks tokens, and one signed by a
// key outside KMS is not. Switching the signing key and refusing the
// standby one rotates the keys.
func TestKMSTokenKeys(t *testing.T) {
	ctx := context.Background()
	env := apptest.NewAuthTestEnv(t)
	_, clientID, clientKey := env.CreateCompany(t, "Acme")
	kms := kmstest.New(t)
	arns := [2]string{
		"arn:aws:kms:us-east-1:000000000000:key/aaaaaaaa-0000-4000-8000-000000000000",
		"arn:aws:kms:us-east-1:000000000000:key/bbbbbbbb-0000-4000-8000-000000000000",
	}
	keyA, keyB := kms.AddKey(t, arns[0]), kms.AddKey(t, arns[1])
	kidA, kidB := kidOfKey(t, keyA), kidOfKey(t, keyB)
	cfg := env.Cfg
	cfg.TokenKeys, cfg.TokenKeyARNs, cfg.KMSEndpoint = [2]string{}, arns, kms.URL

	handlers := map[string]function.HTTPHandler{}
	for _, fn := range tokenFunctions {
		h, err := app.HTTPFunctions[fn].New(ctx, apptest.Recording(cfg, fn), env.Caches)
		if err != nil {
			t.Fatalf("%s: %v", fn, err)
		}
		handlers[fn] = h
		asked := kms.Asked()
		want := []string{"TrentService.GetPublicKey " + arns[0], "TrentService.GetPublicKey " + arns[1]}
		if !slices.Equal(asked, want) {
			t.Fatalf("%s asked KMS %v at start, want %v", fn, asked, want)
		}
	}
	issue := func(h function.HTTPHandler) string {
		t.Helper()
		body, _ := json.Marshal(map[string]string{"client_id": clientID, "client_key": clientKey})
		res := apptest.AuthTestCall(t, h, apptest.AuthTestEvent("POST", "/api/v1/auth/token", "198.51.100.61", nil, string(body)))
		var tok auth.Token
		if err := json.Unmarshal([]byte(res.Body), &tok); err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("token: %d %s", res.StatusCode, res.Body)
		}
		return tok.AccessToken
	}
	signedByA := issue(handlers["auth"])
	if asked := kms.Asked(); !slices.Equal(asked, []string{"TrentService.Sign " + arns[0]}) {
		t.Fatalf("auth asked KMS %v to issue a token", asked)
	}
	parsed, _ := jwt.NewParser().Parse(signedByA, nil)
	if parsed == nil || parsed.Header["alg"] != "ES256" || parsed.Header["kid"] != kidA {
		t.Fatalf("token header %v, want ES256 with kid %s", parsed, kidA)
	}
	res := apptest.AuthTestCall(t, handlers["wallets"], apptest.AuthTestEvent("GET", "/api/v1/wallets", "192.0.2.9",
		map[string]string{"authorization": "Bearer " + signedByA}, ""))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("wallets with the KMS-signed token: %d %s", res.StatusCode, res.Body)
	}
	// The test functions' local key A is no key of this deployment.
	local := env.MustToken(t, clientID, clientKey)
	res = apptest.AuthTestCall(t, handlers["wallets"], apptest.AuthTestEvent("GET", "/api/v1/wallets", "192.0.2.9",
		map[string]string{"authorization": "Bearer " + local}, ""))
	if res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("wallets with a token of another key: %d %s", res.StatusCode, res.Body)
	}

	// Rotation: B signs, A stays accepted; later A is refused.
	call := func(h function.HTTPHandler, token string) int {
		t.Helper()
		return apptest.AuthTestCall(t, h, apptest.AuthTestEvent("GET", "/api/v1/wallets", "192.0.2.9",
			map[string]string{"authorization": "Bearer " + token}, "")).StatusCode
	}
	rotated := cfg
	rotated.TokenSigningKey = 1
	authB, err := app.HTTPFunctions["auth"].New(ctx, apptest.Recording(rotated, "auth"), env.Caches)
	if err != nil {
		t.Fatal(err)
	}
	signedByB := issue(authB)
	if asked := kms.Asked(); !slices.Contains(asked, "TrentService.Sign "+arns[1]) {
		t.Fatalf("auth after the switch asked KMS %v, want a Sign with key B", asked)
	}
	if parsed, _ := jwt.NewParser().Parse(signedByB, nil); parsed == nil || parsed.Header["kid"] != kidB {
		t.Fatalf("token after the switch: %v, want kid %s", parsed, kidB)
	}
	withdrawn := rotated
	withdrawn.TokenStandbyRefused = true
	walletsWithdrawn, err := app.HTTPFunctions["wallets"].New(ctx, apptest.Recording(withdrawn, "wallets"), env.Caches)
	if err != nil {
		t.Fatal(err)
	}
	if asked := kms.Asked(); !slices.Equal(asked, []string{"TrentService.GetPublicKey " + arns[1]}) {
		t.Fatalf("wallets with the standby key refused asked KMS %v, want key B's public key alone", asked)
	}
	for _, c := range []struct {
		name  string
		h     function.HTTPHandler
		token string
		want  int
	}{
		{"key B's token, before the switch", handlers["wallets"], signedByB, http.StatusOK},
		{"key A's token, after the switch", handlers["wallets"], signedByA, http.StatusOK},
		{"key B's token, key A withdrawn", walletsWithdrawn, signedByB, http.StatusOK},
		{"key A's token, key A withdrawn", walletsWithdrawn, signedByA, http.StatusUnauthorized},
	} {
		if got := call(c.h, c.token); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	res = apptest.AuthTestCall(t, authB, apptest.AuthTestEvent("GET", "/api/v1/.well-known/jwks.json", "192.0.2.7", nil, ""))
	var jwks auth.JWKS
	json.Unmarshal([]byte(res.Body), &jwks)
	if len(jwks.Keys) != 2 || jwks.Keys[0].Kid != kidB || jwks.Keys[1].Kid != kidA {
		t.Fatalf("published after the switch: %s, want B then A", res.Body)
	}

	// A key KMS does not hold stops the function at start.
	missing := cfg
	missing.TokenKeyARNs[1] = "arn:aws:kms:us-east-1:000000000000:key/cccccccc-0000-4000-8000-000000000000"
	if _, err := tokenkeys.Load(ctx, missing, false); !errors.Is(err, function.ErrConfig) {
		t.Fatalf("unknown KMS key: %v, want function.ErrConfig", err)
	}
}

// TestRawSignature: KMS's DER signature becomes JWS's r||s; anything else
// is refused.
func TestRawSignature(t *testing.T) {
	tests := []struct {
		name string
		der  []byte
		ok   bool
	}{
		{"short r and s", []byte{0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x02}, true},
		{"trailing bytes", []byte{0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x02, 0x00}, false},
		{"zero r", []byte{0x30, 0x06, 0x02, 0x01, 0x00, 0x02, 0x01, 0x02}, false},
		{"not DER", []byte("signature"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := kmssign.RawSignature(tt.der)
			if (err == nil) != tt.ok {
				t.Fatalf("err = %v, want ok %v", err, tt.ok)
			}
			if tt.ok && (len(raw) != 64 || raw[31] != 1 || raw[63] != 2) {
				t.Fatalf("raw %x", raw)
			}
		})
	}
}
