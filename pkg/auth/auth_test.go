package auth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"payments/pkg/auth"
	"payments/pkg/auth/authhttp"
	"payments/pkg/companies"
	"payments/pkg/httpapi"
)

// testKeys are two token keys: 0 signs in setup, 1 is another key.
var testKeys = func() [2]*ecdsa.PrivateKey {
	var k [2]*ecdsa.PrivateKey
	for i, h := range []string{
		"0101010101010101010101010101010101010101010101010101010101010101",
		"0202020202020202020202020202020202020202020202020202020202020202",
	} {
		var err error
		if k[i], err = auth.LocalKeyFromHex(h); err != nil {
			panic(err)
		}
	}
	return k
}()

// signer returns the Signer of testKeys[i].
func signer(t testing.TB, i int) auth.Signer {
	t.Helper()
	s, err := auth.NewLocalSigner(testKeys[i])
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// fakeCompanies is an in-memory Companies; the store is not the subject here.
type fakeCompanies struct {
	mu    sync.Mutex
	byID  map[string]companies.Company
	reads int
}

func (f *fakeCompanies) Verify(_ context.Context, clientID, clientKey string) (companies.Company, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.byID {
		if c.ClientID == clientID && clientKey == "good" && c.IsActive {
			return c, nil
		}
	}
	return companies.Company{}, companies.ErrInvalidCredentials
}

func (f *fakeCompanies) Get(_ context.Context, id string) (companies.Company, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	c, ok := f.byID[id]
	if !ok {
		return companies.Company{}, companies.ErrNotFound
	}
	return c, nil
}

func (f *fakeCompanies) set(c companies.Company) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.byID[c.ID] = c
}

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func setup(t testing.TB) (*auth.Service, *fakeCompanies, *clock, *auth.CompanyCache) {
	t.Helper()
	clk := &clock{now: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
	fc := &fakeCompanies{byID: map[string]companies.Company{
		"c1": {ID: "c1", ClientID: "cli_1", IsActive: true, KeyVersion: 3},
	}}
	cache := auth.NewCompanyCache(auth.CompanyCacheTTL, clk.Now)
	svc, err := auth.NewService(auth.Config{Signer: signer(t, 0), Mode: "sandbox", TTL: time.Hour, Now: clk.Now}, fc, nil, cache)
	if err != nil {
		t.Fatal(err)
	}
	return svc, fc, clk, cache
}

func TestNewServiceRefusesBadConfig(t *testing.T) {
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	cache := auth.NewCompanyCache(auth.CompanyCacheTTL, time.Now)
	tests := []struct {
		name  string
		cfg   auth.Config
		cache *auth.CompanyCache
	}{
		{"no key", auth.Config{Mode: "sandbox", TTL: time.Hour}, cache},
		{"a P-384 key", auth.Config{Keys: []*ecdsa.PublicKey{&p384.PublicKey}, Mode: "sandbox", TTL: time.Hour}, cache},
		{"no mode", auth.Config{Signer: signer(t, 0), TTL: time.Hour}, cache},
		{"no ttl", auth.Config{Signer: signer(t, 0), Mode: "sandbox"}, cache},
		{"no company cache", auth.Config{Signer: signer(t, 0), Mode: "sandbox", TTL: time.Hour}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := auth.NewService(tt.cfg, &fakeCompanies{}, nil, tt.cache); !errors.Is(err, auth.ErrConfig) {
				t.Fatalf("err = %v, want ErrConfig", err)
			}
		})
	}
}

func TestIssueClaims(t *testing.T) {
	svc, _, clk, _ := setup(t)
	tok, err := svc.Issue(context.Background(), "192.0.2.1", "cli_1", "good")
	if err != nil {
		t.Fatal(err)
	}
	if tok.TokenType != "Bearer" || tok.ExpiresIn != 3600 {
		t.Fatalf("token = %+v", tok)
	}
	var claims auth.Claims
	parsed, err := jwt.ParseWithClaims(tok.AccessToken, &claims, func(*jwt.Token) (any, error) { return &testKeys[0].PublicKey, nil },
		jwt.WithValidMethods([]string{"ES256"}), jwt.WithTimeFunc(clk.Now))
	if err != nil {
		t.Fatal(err)
	}
	kid, _ := auth.KeyID(&testKeys[0].PublicKey)
	if parsed.Header["alg"] != "ES256" || parsed.Header["kid"] != kid || parsed.Header["typ"] != "JWT" || svc.KeyID() != kid {
		t.Fatalf("header %v, want ES256 with kid %s", parsed.Header, kid)
	}
	if claims.Subject != "c1" || len(claims.Audience) != 1 || claims.Audience[0] != auth.Audience || claims.Mode != "sandbox" || claims.KeyVersion != 3 || claims.Issuer != "payments" ||
		claims.ID == "" || !claims.IssuedAt.Equal(clk.Now()) || !claims.ExpiresAt.Equal(clk.Now().Add(time.Hour)) {
		t.Fatalf("claims = %+v", claims)
	}
	if _, err := svc.Issue(context.Background(), "192.0.2.1", "cli_1", "bad"); !errors.Is(err, auth.ErrInvalidCredentials) {
		t.Fatalf("bad key: %v", err)
	}
}

func TestGuardCache(t *testing.T) {
	svc, fc, clk, cache := setup(t)
	tok, err := svc.Issue(context.Background(), "192.0.2.1", "cli_1", "good")
	if err != nil {
		t.Fatal(err)
	}
	guard := authhttp.Guard(svc)
	call := func() error {
		r := httptest.NewRequest("GET", "/api/v1/x", nil)
		r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		ctx, err := guard(r)
		if err == nil {
			if id, _ := httpapi.Company(r.WithContext(ctx)); id != "c1" {
				t.Fatalf("company in context = %q", id)
			}
		}
		return err
	}
	rotated := companies.Company{ID: "c1", ClientID: "cli_1", IsActive: true, KeyVersion: 4}

	steps := []struct {
		name      string
		do        func()
		wantErr   bool
		wantReads int
	}{
		{"first call reads the store", func() {}, false, 1},
		{"second call is cached", func() {}, false, 1},
		// A rotation made by another process stops the old token within 5 s.
		{"a change elsewhere is not seen within 5 s", func() { fc.set(rotated); clk.Advance(5*time.Second - time.Millisecond) }, false, 1},
		{"5 s after the read the store is read again", func() { clk.Advance(time.Millisecond) }, true, 2},
		{"Forget drops the entry", func() {
			fc.set(companies.Company{ID: "c1", ClientID: "cli_1", IsActive: true, KeyVersion: 3})
			cache.Forget("c1")
		}, false, 3},
		{"disabled company after Forget", func() {
			fc.set(companies.Company{ID: "c1", ClientID: "cli_1", IsActive: false, KeyVersion: 3})
			cache.Forget("c1")
		}, true, 4},
		{"unknown company", func() {
			fc.mu.Lock()
			delete(fc.byID, "c1")
			fc.mu.Unlock()
			cache.Forget("c1")
		}, true, 5},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			s.do()
			err := call()
			if (err != nil) != s.wantErr {
				t.Fatalf("err = %v, want error %v", err, s.wantErr)
			}
			if err != nil && !errors.Is(err, httpapi.ErrUnauthorized) {
				t.Fatalf("err = %v, want ErrUnauthorized", err)
			}
			if fc.reads != s.wantReads {
				t.Fatalf("store reads = %d, want %d", fc.reads, s.wantReads)
			}
		})
	}
}

func TestRetryAfterSeconds(t *testing.T) {
	tests := []struct {
		wait time.Duration
		want int
	}{
		{0, 1},
		{time.Millisecond, 1},
		{time.Second, 1},
		{1001 * time.Millisecond, 2},
		{59500 * time.Millisecond, 60},
	}
	for _, tt := range tests {
		t.Run(tt.wait.String(), func(t *testing.T) {
			if got := (&auth.RateLimitError{RetryAfter: tt.wait}).RetryAfterSeconds(); got != tt.want {
				t.Fatalf("RetryAfterSeconds = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestSourceIP(t *testing.T) {
	tests := []struct {
		remote, forwarded, want string
	}{
		{"203.0.113.9", "", "203.0.113.9"},
		{"203.0.113.9:4711", "", "203.0.113.9"},
		{"[2001:db8::1]:443", "", "2001:db8::1"},
		{"2001:db8::1", "", "2001:db8::1"},
		{"203.0.113.9", "198.51.100.1", "203.0.113.9"},
		{"", "198.51.100.1", "unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.remote, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/api/v1/auth/token", nil)
			r.RemoteAddr = tt.remote
			if tt.forwarded != "" {
				r.Header.Set("X-Forwarded-For", tt.forwarded)
			}
			if got := httpapi.SourceIP(r); got != tt.want {
				t.Fatalf("SourceIP = %q, want %q", got, tt.want)
			}
		})
	}
}
