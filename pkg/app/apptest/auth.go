package apptest

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"payments/pkg/apidoc/apitest"
	"payments/pkg/auth"
	"payments/pkg/function"
	"payments/pkg/function/adminapi"
	"payments/pkg/function/authapi"
	"payments/pkg/function/base"
	"payments/pkg/function/tokenkeys"
	"payments/pkg/httpapi"
	"payments/pkg/identity/cognitopool/cognitotest"
	"payments/pkg/limits"
	"payments/pkg/store"
	"payments/pkg/store/storetest"
	"payments/pkg/vault/vaulttest"
)

// AuthTestAdminKey is the admin key of the test functions.
const AuthTestAdminKey = "local-admin-key"

// TestCardKey is the local key that seals card secrets in these tests,
// unless a test uses a KMS stand-in.
const TestCardKey = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

var authTestIPs atomic.Int64

// AuthTestKeys are the local token keys of the test functions
// (TOKEN_KEY_A, TOKEN_KEY_B): A signs their access tokens, B is the standby
// key, published and accepted.
var AuthTestKeys = [2]string{
	"1111111111111111111111111111111111111111111111111111111111111111",
	"2222222222222222222222222222222222222222222222222222222222222222",
}

// AuthTestKey returns the private key of AuthTestKeys[slot], to sign
// tokens by hand.
func AuthTestKey(t testing.TB, slot int) *ecdsa.PrivateKey {
	t.Helper()
	k, err := auth.LocalKeyFromHex(AuthTestKeys[slot])
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// GenerousLimits are the company limits of the tests' functions: tests
// that fire many requests are never refused 429 RATE_LIMITED; the tests of
// the limits set their own. The burst spans 1000 s at the rate: a request
// whose clock or DynamoDB round trip lags the others' by less than that
// still finds tokens (store.TokenBuckets), however loaded the machine.
var GenerousLimits = limits.Limits{
	Read:   limits.Limit{Rate: 1_000_000, Burst: 1_000_000_000},
	Money:  limits.Limit{Rate: 1_000_000, Burst: 1_000_000_000},
	Reveal: limits.Limit{Rate: 1_000_000, Burst: 1_000_000_000},
}

// TestWebhookKey is the local key that seals webhook signing secrets where
// a test gives no KMS stand-in (the functions of NewAuthTestEnv seal them
// under FakeKMS's WebhookKeyARN).
const TestWebhookKey = "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"

// AuthTestEnv is one fresh table with the auth and admin handlers and a
// guarded probe route over it, all built as the functions build them.
type AuthTestEnv struct {
	Cfg function.Config
	// KMS is the KMS stand-in that holds the webhook key (WebhookKeyARN)
	// and, for the cards' tests, the card key.
	KMS   *vaulttest.FakeKMS
	DB    *store.DB
	Auth  function.HTTPHandler
	Admin function.HTTPHandler
	// Caches are the caches every function the env builds shares, as the
	// functions of one process do (pkg/app); they live as long as the env.
	Caches base.Caches
	probe  function.HTTPHandler // GET /probe behind base.TokenGuard: answers the company id
}

// NewAuthTestEnv returns an AuthTestEnv over a fresh table.
func NewAuthTestEnv(t *testing.T) *AuthTestEnv {
	t.Helper()
	return newAuthTestEnv(t, function.ModeSandbox)
}

// DashboardTestKey seals the dashboard's session cookies in the tests.
const DashboardTestKey = "dashboard-test-session-key-0123456789abcdef"

// newAuthTestEnv is NewAuthTestEnv in mode: the tokens it issues are bound
// to it.
func newAuthTestEnv(t *testing.T, mode string) *AuthTestEnv {
	t.Helper()
	db := storetest.NewDB(t)
	kms := vaulttest.NewFakeKMS(t)
	cfg := function.Config{
		Mode:                mode,
		TableName:           db.Table,
		AuditTableName:      storetest.NewDB(t).Table, // the audit trail's, made as the service's
		DynamoDBEndpoint:    storetest.Endpoint(t),
		AWS:                 storetest.AWSConfig(),
		TokenKeys:           AuthTestKeys,
		AdminAPIKey:         AuthTestAdminKey,
		DashboardSessionKey: DashboardTestKey,
		TokenTTL:            time.Hour,
		TokenRateLimit:      10,
		RevealLimit:         100,
		CompanyLimits:       GenerousLimits,
		CardKey:             TestCardKey,
		IssuerWebhookSecret: IssuerTestSecret,
		// Webhook signing secrets are sealed under KMS's key, as in AWS.
		WebhookKeyARN: vaulttest.WebhookKeyARN,
		KMSEndpoint:   kms.URL,
		// A throwaway user pool: a company's first owner is made there.
		CognitoEndpoint: cognitotest.Endpoint(t),
	}
	pool := cognitotest.NewResources(t)
	cfg.UserPoolID, cfg.UserPoolClientID = pool.PoolID, pool.ClientID
	if mode == function.ModeProduction { // the console's reconciliation reads the card issuer
		_, cfg.IssuerBaseURL = NewStripeSim(t, "")
		cfg.IssuerAPIKey = StripeTestKey
	}
	ctx := context.Background()
	caches := base.NewCaches(time.Now)
	a, err := authapi.NewWith(ctx, Recording(cfg, "auth"), caches)
	if err != nil {
		t.Fatal(err)
	}
	adm, err := adminapi.NewWith(ctx, Recording(cfg, "admin"), caches, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	guard, err := tokenkeys.Guard(ctx, cfg, db, caches.Companies)
	if err != nil {
		t.Fatal(err)
	}
	rt := httpapi.NewRouter(authapi.Errors, guard)
	rt.Handle("GET /probe", func(w http.ResponseWriter, r *http.Request) error {
		cid, err := httpapi.Company(r)
		if err != nil {
			return err
		}
		httpapi.Respond(w, http.StatusOK, "ok", cid)
		return nil
	})
	return &AuthTestEnv{Cfg: cfg, KMS: kms, DB: db, Auth: a, Admin: adm, Caches: caches, probe: httpadapter.NewV2(rt).ProxyWithContext}
}

// AuthTestEvent builds the API Gateway HTTP API event of a request.
func AuthTestEvent(method, path, sourceIP string, headers map[string]string, body string) events.APIGatewayV2HTTPRequest {
	h := map[string]string{"content-type": "application/json"}
	for k, v := range headers {
		h[strings.ToLower(k)] = v
	}
	return events.APIGatewayV2HTTPRequest{
		Version:  "2.0",
		RouteKey: method + " " + path,
		RawPath:  path,
		Headers:  h,
		Body:     body,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RequestID: "req-" + strconv.FormatInt(time.Now().UnixNano(), 36),
			Stage:     "$default",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method: method, Path: path, Protocol: "HTTP/1.1", SourceIP: sourceIP, UserAgent: "test",
			},
		},
	}
}

// AuthTestCall sends ev through h and checks the exchange against the
// contract (apitest.CheckEvent).
func AuthTestCall(t *testing.T, h function.HTTPHandler, ev events.APIGatewayV2HTTPRequest) events.APIGatewayV2HTTPResponse {
	t.Helper()
	res, err := h(context.Background(), ev)
	if err != nil {
		t.Fatalf("handler: %v", err)
	}
	apitest.CheckEvent(t, ev, res, true)
	return res
}

// CreateCompany creates a company through the console and returns its id,
// client_id and client_key.
func (e *AuthTestEnv) CreateCompany(t *testing.T, name string) (id, clientID, clientKey string) {
	t.Helper()
	res := AuthTestCall(t, e.Admin, AuthTestEvent("POST", "/api/v1/admin/companies", "10.0.0.1",
		map[string]string{"x-admin-key": AuthTestAdminKey}, fmt.Sprintf(`{"name":%q}`, name)))
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("create company: %d %s", res.StatusCode, res.Body)
	}
	var out struct {
		Data struct {
			ID        string `json:"id"`
			ClientID  string `json:"client_id"`
			ClientKey string `json:"client_key"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(res.Body), &out); err != nil {
		t.Fatal(err)
	}
	return out.Data.ID, out.Data.ClientID, out.Data.ClientKey
}

// Token asks the auth function for a token from ip.
func (e *AuthTestEnv) Token(t *testing.T, ip, clientID, clientKey string) events.APIGatewayV2HTTPResponse {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"client_id": clientID, "client_key": clientKey})
	return AuthTestCall(t, e.Auth, AuthTestEvent("POST", "/api/v1/auth/token", ip, nil, string(body)))
}

// MustToken returns an access token for the credentials.
func (e *AuthTestEnv) MustToken(t *testing.T, clientID, clientKey string) string {
	t.Helper()
	// A new source address each time keeps these calls clear of the limit.
	n := authTestIPs.Add(1)
	res := e.Token(t, fmt.Sprintf("100.64.%d.%d", n/250, n%250+1), clientID, clientKey)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("token: %d %s", res.StatusCode, res.Body)
	}
	var tok auth.Token
	if err := json.Unmarshal([]byte(res.Body), &tok); err != nil {
		t.Fatal(err)
	}
	return tok.AccessToken
}

// ProbeWith calls the guarded route with the Authorization header value. The
// route is the test's own, not the API's: the contract does not apply.
func (e *AuthTestEnv) ProbeWith(t *testing.T, authorization string) events.APIGatewayV2HTTPResponse {
	t.Helper()
	h := map[string]string{}
	if authorization != "" {
		h["authorization"] = authorization
	}
	res, err := e.probe(context.Background(), AuthTestEvent("GET", "/api/v1/probe", "192.0.2.1", h, ""))
	if err != nil {
		t.Fatalf("handler: %v", err)
	}
	return res
}

// DecodeErrorBody decodes an error response's body, failing t when it is
// not one.
func DecodeErrorBody(t *testing.T, body string) httpapi.ErrorBody {
	t.Helper()
	var b httpapi.ErrorBody
	if err := json.Unmarshal([]byte(body), &b); err != nil {
		t.Fatalf("error body %q: %v", body, err)
	}
	return b
}

// IssuerTestSecret is the card issuer's webhook secret in these tests.
var IssuerTestSecret = []byte("issuer-secret-issuer-secret-issuer-secret")
