package auth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"payments/pkg/app/apptest"
	"payments/pkg/auth"
	"payments/pkg/function"
	"payments/pkg/function/adminapi"
	"payments/pkg/function/authapi"
	"payments/pkg/function/tokenkeys"
	"payments/pkg/store"
	"payments/pkg/store/storetest"
)

func TestAuthRefusesWeakConfig(t *testing.T) {
	tests := []struct {
		name string
		edit func(*function.Config)
	}{
		{"no key", func(c *function.Config) { c.TokenKeys = [2]string{} }},
		{"no signing key", func(c *function.Config) { c.TokenKeys[0] = "" }},
		{"a short key", func(c *function.Config) { c.TokenKeys[0] = "1111" }},
		{"no mode", func(c *function.Config) { c.Mode = "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := function.Config{Mode: function.ModeSandbox, TableName: "t", TokenKeys: apptest.AuthTestKeys, AdminAPIKey: "k", AWS: storetest.AWSConfig()}
			tt.edit(&cfg)
			if _, err := authapi.New(context.Background(), cfg); err == nil {
				t.Error("authapi.New accepted the configuration")
			}
			if _, err := tokenkeys.Guard(context.Background(), cfg, store.New(nil, "t"), auth.NewCompanyCache(auth.CompanyCacheTTL, time.Now)); err == nil {
				t.Error("tokenkeys.Guard accepted the configuration")
			}
		})
	}
	if _, err := adminapi.New(context.Background(), function.Config{Mode: function.ModeSandbox, TableName: "t", AWS: storetest.AWSConfig()}); err == nil {
		t.Error("adminapi.New started without an admin key")
	}
}

func TestTokenEndpoint(t *testing.T) {
	env := apptest.NewAuthTestEnv(t)
	id, clientID, clientKey := env.CreateCompany(t, "Acme")
	disabledID, disabledClient, disabledKey := env.CreateCompany(t, "Dormant")
	res := apptest.AuthTestCall(t, env.Admin, apptest.AuthTestEvent("PATCH", "/api/v1/admin/companies/"+disabledID, "10.0.0.1",
		map[string]string{"x-admin-key": apptest.AuthTestAdminKey}, `{"is_active":false}`))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("disable: %d %s", res.StatusCode, res.Body)
	}

	t.Run("issues a token", func(t *testing.T) {
		res := env.Token(t, "198.51.100.10", clientID, clientKey)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("status %d: %s", res.StatusCode, res.Body)
		}
		var raw map[string]any
		if err := json.Unmarshal([]byte(res.Body), &raw); err != nil {
			t.Fatal(err)
		}
		if _, wrapped := raw["data"]; wrapped || raw["token_type"] != "Bearer" || raw["expires_in"] != float64(3600) {
			t.Fatalf("body %s", res.Body)
		}
		var claims auth.Claims
		tok, err := jwt.ParseWithClaims(raw["access_token"].(string), &claims,
			func(*jwt.Token) (any, error) { return &apptest.AuthTestKey(t, 0).PublicKey, nil }, jwt.WithValidMethods([]string{"ES256"}))
		if err != nil {
			t.Fatal(err)
		}
		if tok.Header["alg"] != "ES256" || tok.Header["kid"] != testKID(t, 0) {
			t.Fatalf("header %v, want ES256 and the kid of key A", tok.Header)
		}
		if claims.Subject != id || !slices.Equal(claims.Audience, jwt.ClaimStrings{auth.Audience}) || claims.Mode != function.ModeSandbox || claims.KeyVersion != 1 || claims.Issuer != "payments" || claims.ID == "" {
			t.Fatalf("claims %+v", claims)
		}
	})

	bad := []struct {
		name      string
		body      string
		wantField string
	}{
		{"missing client_id", `{"client_key":"x"}`, "client_id"},
		{"empty client_id", `{"client_id":"","client_key":"x"}`, "client_id"},
		{"missing client_key", `{"client_id":"x"}`, "client_key"},
		{"empty client_key", `{"client_id":"x","client_key":""}`, "client_key"},
		{"both missing", `{}`, "client_id"},
		{"malformed JSON", `{"client_id":`, "body"},
		{"not an object", `[1]`, "body"},
		{"number id", `{"client_id":1,"client_key":"x"}`, "client_id"},
		{"empty body", ``, "body"},
	}
	for i, tt := range bad {
		t.Run("400 "+tt.name, func(t *testing.T) {
			res := apptest.AuthTestCall(t, env.Auth, apptest.AuthTestEvent("POST", "/api/v1/auth/token", fmt.Sprintf("198.51.100.%d", 100+i), nil, tt.body))
			b := apptest.DecodeErrorBody(t, res.Body)
			if res.StatusCode != http.StatusBadRequest || b.Field != tt.wantField || !strings.Contains(b.Message, tt.wantField) {
				t.Fatalf("%d %s, want 400 naming %s", res.StatusCode, res.Body, tt.wantField)
			}
			if (tt.wantField == "client_id" || tt.wantField == "client_key") && !strings.Contains(tt.body, ":1") &&
				!strings.Contains(b.Message, "missing or empty client_id or client_key") {
				t.Fatalf("message %q", b.Message)
			}
		})
	}

	t.Run("401 identical for unknown id, wrong key, disabled company", func(t *testing.T) {
		cases := []struct{ name, id, key string }{
			{"unknown id", "cli_000000000000000000000000", clientKey},
			{"wrong key", clientID, disabledKey},
			{"key of another company", disabledClient, clientKey},
			{"disabled company", disabledClient, disabledKey},
		}
		var first string
		for i, c := range cases {
			res := env.Token(t, fmt.Sprintf("198.51.100.%d", 200+i), c.id, c.key)
			if res.StatusCode != http.StatusUnauthorized {
				t.Fatalf("%s: %d %s", c.name, res.StatusCode, res.Body)
			}
			b := apptest.DecodeErrorBody(t, res.Body)
			if b.Message != "invalid client credentials" || b.Error != "Unauthorized" || b.StatusCode != 401 {
				t.Fatalf("%s: body %s", c.name, res.Body)
			}
			if first == "" {
				first = res.Body
			} else if res.Body != first {
				t.Fatalf("%s: body %s differs from %s", c.name, res.Body, first)
			}
		}
	})

	t.Run("429 past 10 requests a minute from one IP", func(t *testing.T) {
		const ip = "203.0.113.50"
		for i := range 10 {
			key := clientKey
			if i%2 == 1 {
				key = "wrong" // failed attempts count too
			}
			if res := env.Token(t, ip, clientID, key); res.StatusCode == http.StatusTooManyRequests {
				t.Fatalf("request %d refused early", i+1)
			}
		}
		res := env.Token(t, ip, clientID, clientKey)
		if res.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("11th request: %d %s", res.StatusCode, res.Body)
		}
		b := apptest.DecodeErrorBody(t, res.Body)
		if b.Message != "rate limit exceeded" || b.Code != "RATE_LIMIT_EXCEEDED" {
			t.Fatalf("body %s", res.Body)
		}
		ra, err := strconv.Atoi(res.Headers["Retry-After"])
		if err != nil || ra < 1 || ra > 60 {
			t.Fatalf("Retry-After %q", res.Headers["Retry-After"])
		}
		// Malformed requests are refused too once the limit is reached.
		if res := apptest.AuthTestCall(t, env.Auth, apptest.AuthTestEvent("POST", "/api/v1/auth/token", ip, nil, `{`)); res.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("malformed request past the limit: %d", res.StatusCode)
		}
		// X-Forwarded-For does not change the source.
		ev := apptest.AuthTestEvent("POST", "/api/v1/auth/token", ip, map[string]string{"x-forwarded-for": "198.51.100.77"},
			fmt.Sprintf(`{"client_id":%q,"client_key":%q}`, clientID, clientKey))
		if res := apptest.AuthTestCall(t, env.Auth, ev); res.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("X-Forwarded-For escaped the limit: %d", res.StatusCode)
		}
		if res := env.Token(t, "203.0.113.51", clientID, clientKey); res.StatusCode != http.StatusOK {
			t.Fatalf("other IP: %d %s", res.StatusCode, res.Body)
		}
	})
}

// testKID returns the kid of the test functions' token key of slot.
func testKID(t *testing.T, slot int) string {
	t.Helper()
	kid, err := auth.KeyID(&apptest.AuthTestKey(t, slot).PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return kid
}

// signed returns a token with claims signed with method and key, its kid
// the one of the test functions' signing key.
func signed(t *testing.T, method jwt.SigningMethod, key any, claims jwt.Claims) string {
	t.Helper()
	return signedAs(t, method, key, testKID(t, 0), claims)
}

// signedAs is signed with the kid given.
func signedAs(t *testing.T, method jwt.SigningMethod, key any, kid string, claims jwt.Claims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, claims)
	tok.Header["kid"] = kid
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestTokenGuard(t *testing.T) {
	env := apptest.NewAuthTestEnv(t)
	id, clientID, clientKey := env.CreateCompany(t, "Acme")
	good := env.MustToken(t, clientID, clientKey)

	now := time.Now()
	claims := func(edit func(*auth.Claims)) *auth.Claims {
		c := &auth.Claims{Mode: function.ModeSandbox, KeyVersion: 1, RegisteredClaims: jwt.RegisteredClaims{
			Issuer: "payments", Subject: id, Audience: jwt.ClaimStrings{auth.Audience}, IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour)),
		}}
		if edit != nil {
			edit(c)
		}
		return c
	}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	key, standby := apptest.AuthTestKey(t, 0), apptest.AuthTestKey(t, 1)
	strange, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	strange384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	// Change one character in the middle of the signature (the last one may
	// carry only padding bits).
	parts := strings.Split(good, ".")
	sig := []byte(parts[2])
	if mid := len(sig) / 2; sig[mid] == 'A' {
		sig[mid] = 'B'
	} else {
		sig[mid] = 'A'
	}
	tampered := parts[0] + "." + parts[1] + "." + string(sig)
	// The same signature spelled otherwise: its last character's unused
	// bits set (RFC 4648 §3.5 has them zero).
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := len(parts[2]) - 1
	noncanonical := parts[0] + "." + parts[1] + "." + parts[2][:last] + string(alphabet[strings.IndexByte(alphabet, parts[2][last])^1])
	none := signed(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, claims(nil))

	tests := []struct {
		name          string
		authorization string
		want          int
	}{
		{"valid token", "Bearer " + good, http.StatusOK},
		{"lower-case scheme", "bearer " + good, http.StatusOK},
		{"hand-made valid token", "Bearer " + signed(t, jwt.SigningMethodES256, key, claims(nil)), http.StatusOK},
		{"missing header", "", http.StatusUnauthorized},
		{"no scheme", good, http.StatusUnauthorized},
		{"basic scheme", "Basic " + good, http.StatusUnauthorized},
		{"empty bearer", "Bearer ", http.StatusUnauthorized},
		{"garbage", "Bearer not.a.jwt", http.StatusUnauthorized},
		{"expired", "Bearer " + signed(t, jwt.SigningMethodES256, key, claims(func(c *auth.Claims) {
			c.IssuedAt = jwt.NewNumericDate(now.Add(-2 * time.Hour))
			c.ExpiresAt = jwt.NewNumericDate(now.Add(-time.Hour))
		})), http.StatusUnauthorized},
		{"no expiry", "Bearer " + signed(t, jwt.SigningMethodES256, key, claims(func(c *auth.Claims) { c.ExpiresAt = nil })), http.StatusUnauthorized},
		{"alg none", "Bearer " + none, http.StatusUnauthorized},
		{"RS256", "Bearer " + signed(t, jwt.SigningMethodRS256, rsaKey, claims(nil)), http.StatusUnauthorized},
		{"HS256", "Bearer " + signed(t, jwt.SigningMethodHS256, []byte("a-secret-a-secret-a-secret-a-secret!"), claims(nil)), http.StatusUnauthorized},
		{"ES384", "Bearer " + signed(t, jwt.SigningMethodES384, strange384, claims(nil)), http.StatusUnauthorized},
		{"standby key", "Bearer " + signedAs(t, jwt.SigningMethodES256, standby, testKID(t, 1), claims(nil)), http.StatusOK},
		{"other key under the signing key's kid", "Bearer " + signed(t, jwt.SigningMethodES256, strange, claims(nil)), http.StatusUnauthorized},
		{"other key under its own kid", "Bearer " + signedAs(t, jwt.SigningMethodES256, strange, kidOfKey(t, strange), claims(nil)), http.StatusUnauthorized},
		{"standby key under the signing key's kid", "Bearer " + signed(t, jwt.SigningMethodES256, standby, claims(nil)), http.StatusUnauthorized},
		{"unknown kid", "Bearer " + signedAs(t, jwt.SigningMethodES256, key, "kid-1", claims(nil)), http.StatusUnauthorized},
		{"other mode", "Bearer " + signed(t, jwt.SigningMethodES256, key, claims(func(c *auth.Claims) { c.Mode = function.ModeProduction })), http.StatusUnauthorized},
		{"no audience", "Bearer " + signed(t, jwt.SigningMethodES256, key, claims(func(c *auth.Claims) { c.Audience = nil })), http.StatusUnauthorized},
		{"other audience", "Bearer " + signed(t, jwt.SigningMethodES256, key, claims(func(c *auth.Claims) { c.Audience = jwt.ClaimStrings{"someone"} })), http.StatusUnauthorized},
		{"other issuer", "Bearer " + signed(t, jwt.SigningMethodES256, key, claims(func(c *auth.Claims) { c.Issuer = "someone" })), http.StatusUnauthorized},
		{"unknown company", "Bearer " + signed(t, jwt.SigningMethodES256, key, claims(func(c *auth.Claims) {
			c.Subject = "00000000-0000-4000-8000-000000000000"
		})), http.StatusUnauthorized},
		{"other key version", "Bearer " + signed(t, jwt.SigningMethodES256, key, claims(func(c *auth.Claims) { c.KeyVersion = 2 })), http.StatusUnauthorized},
		{"tampered signature", "Bearer " + tampered, http.StatusUnauthorized},
		{"signature not in canonical base64url", "Bearer " + noncanonical, http.StatusUnauthorized},
	}
	var unauthorized string
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := env.ProbeWith(t, tt.authorization)
			if res.StatusCode != tt.want {
				t.Fatalf("status %d, want %d: %s", res.StatusCode, tt.want, res.Body)
			}
			if tt.want == http.StatusOK {
				if !strings.Contains(res.Body, id) {
					t.Fatalf("company id not in context: %s", res.Body)
				}
				return
			}
			if unauthorized == "" {
				unauthorized = res.Body
			} else if res.Body != unauthorized {
				t.Fatalf("401 body %s differs from %s", res.Body, unauthorized)
			}
		})
	}

	adminHeaders := map[string]string{"x-admin-key": apptest.AuthTestAdminKey}
	t.Run("rotation revokes older tokens at once", func(t *testing.T) {
		if res := env.ProbeWith(t, "Bearer "+good); res.StatusCode != http.StatusOK { // cached now
			t.Fatalf("before rotation: %d", res.StatusCode)
		}
		res := apptest.AuthTestCall(t, env.Admin, apptest.AuthTestEvent("POST", "/api/v1/admin/companies/"+id+"/client-key", "10.0.0.1", adminHeaders, ""))
		if res.StatusCode != http.StatusOK {
			t.Fatalf("rotate: %d %s", res.StatusCode, res.Body)
		}
		var out struct {
			Data struct {
				ClientID  string `json:"client_id"`
				ClientKey string `json:"client_key"`
			} `json:"data"`
		}
		if err := json.Unmarshal([]byte(res.Body), &out); err != nil {
			t.Fatal(err)
		}
		if out.Data.ClientID != clientID || out.Data.ClientKey == clientKey || out.Data.ClientKey == "" {
			t.Fatalf("rotation body %s", res.Body)
		}
		if res := env.ProbeWith(t, "Bearer "+good); res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("old token after rotation: %d", res.StatusCode)
		}
		if res := env.Token(t, "198.51.100.20", clientID, clientKey); res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("old key after rotation: %d", res.StatusCode)
		}
		fresh := env.MustToken(t, clientID, out.Data.ClientKey)
		if res := env.ProbeWith(t, "Bearer "+fresh); res.StatusCode != http.StatusOK {
			t.Fatalf("new token: %d %s", res.StatusCode, res.Body)
		}
	})

	t.Run("disabling a company revokes its tokens at once", func(t *testing.T) {
		_, cid, ckey := env.CreateCompany(t, "Soon disabled")
		tok := env.MustToken(t, cid, ckey)
		if res := env.ProbeWith(t, "Bearer "+tok); res.StatusCode != http.StatusOK {
			t.Fatalf("before: %d", res.StatusCode)
		}
		var claims auth.Claims
		jwt.NewParser().ParseUnverified(tok, &claims)
		res := apptest.AuthTestCall(t, env.Admin, apptest.AuthTestEvent("PATCH", "/api/v1/admin/companies/"+claims.Subject, "10.0.0.1", adminHeaders, `{"is_active":false}`))
		if res.StatusCode != http.StatusOK {
			t.Fatalf("disable: %d %s", res.StatusCode, res.Body)
		}
		if res := env.ProbeWith(t, "Bearer "+tok); res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("after: %d", res.StatusCode)
		}
	})
}

// kidOfKey returns the kid of k's public key.
func kidOfKey(t *testing.T, k *ecdsa.PrivateKey) string {
	t.Helper()
	kid, err := auth.KeyID(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return kid
}
