// Package localtest gives tests of the local stack what a deployment would
// have: the template, a fresh table, the template's queues under a unique
// prefix, a fresh bucket, and local secrets, all in the emulators that
// `make test` starts (AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_SQS,
// AWS_ENDPOINT_URL_S3), and a server of sample identity documents (Main). A
// test that needs them fails, not skips, when they are not there. In a
// `go test -short` run (make test-unit) the table, queues and buckets are
// in the in-memory DynamoDB, SQS and S3 of the test process (storetest,
// queuetest).
package localtest

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"payments/infra/local/devserver"
	"payments/infra/local/localca"
	"payments/infra/local/samples"
	"payments/infra/local/samtemplate"
	"payments/infra/local/stack"
	"payments/pkg/identity/cognitopool/cognitotest"
	"payments/pkg/outbound"
	"payments/pkg/providers/operator/pawapay/pawapaysim"
	"payments/pkg/queue/queuetest"
	"payments/pkg/store/storetest"
)

// AdminAPIKey is the admin key of test deployments; sample events under
// events/admin carry it in X-Admin-Key.
const AdminAPIKey = "local-admin-key"

// DashboardSessionKey seals the dashboard's session cookies in test
// deployments.
const DashboardSessionKey = "local-dashboard-session-key-0123456789abcdef"

// CardKey is the local key that seals card secrets in test deployments.
const CardKey = "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100"

// TokenKeyA and TokenKeyB are the local token keys of test deployments
// (P-256 private keys, auth.LocalKeyFromHex): A signs.
const (
	TokenKeyA = "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
	TokenKeyB = "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2"
)

// WebhookKey is the local key that seals webhook signing secrets in test
// deployments.
const WebhookKey = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"

// IssuerWebhookSecret is the card issuer's webhook secret of test
// deployments; SampleEvents signs the sample notifications with it.
const IssuerWebhookSecret = "local-issuer-webhook-secret-0123456789abcdef0123456789abcdef"

// OperatorAPIToken is the aggregator's API token of test deployments: the
// functions send it to the simulated pawaPay in production mode.
const OperatorAPIToken = "local-operator-api-token-0123456789abcdef"

// IssuerAPIKey is the card issuer's API key of the test stacks (production
// mode): the functions send it, the simulated Stripe checks it.
const IssuerAPIKey = "sk_test_local_issuer_api_key"

// Root returns the repository root.
func Root(t testing.TB) string {
	t.Helper()
	root, err := stack.FindRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// Template loads template.yaml.
func Template(t testing.TB) *samtemplate.Template {
	t.Helper()
	tpl, err := samtemplate.Load(filepath.Join(Root(t), "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}

// SQSEndpoint returns the SQS emulator's address, failing t when it is
// unset; in -short runs, the in-memory SQS's (queuetest.MemorySQS).
func SQSEndpoint(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		queuetest.MemorySQS()
	}
	ep := os.Getenv("AWS_ENDPOINT_URL_SQS")
	if ep == "" {
		t.Fatal("AWS_ENDPOINT_URL_SQS is not set: run the tests with `make test`, which starts the SQS emulator")
	}
	return ep
}

// SQSClient returns a client of the SQS emulator.
func SQSClient(t testing.TB) *sqs.Client {
	return stack.SQSClient(SQSEndpoint(t))
}

// NewQueue creates a queue with a unique name and the given attributes,
// deleted when the test ends, and returns its URL.
func NewQueue(t testing.TB, attrs map[string]string) string {
	t.Helper()
	c := SQSClient(t)
	out, err := c.CreateQueue(context.Background(), &sqs.CreateQueueInput{
		QueueName:  aws.String("test-" + storetest.RandomSuffix()),
		Attributes: attrs,
	})
	if err != nil {
		t.Fatalf("create queue: %v", err)
	}
	url := aws.ToString(out.QueueUrl)
	t.Cleanup(func() { c.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: aws.String(url)}) })
	return url
}

// Resources creates what the template declares for one test deployment — a
// fresh table, the template's queues under a unique prefix and a fresh
// bucket for each of its buckets, all removed when the test ends — and
// returns them with the test secrets and the
// emulators' environment.
func Resources(t testing.TB, tpl *samtemplate.Template) devserver.Resources {
	t.Helper()
	db := storetest.NewDB(t)
	c := SQSClient(t)
	var qs []stack.Queue
	for _, q := range tpl.Queues() {
		qs = append(qs, stack.Queue{Name: q.Name, DLQ: q.DLQ, MaxReceiveCount: q.MaxReceiveCount,
			VisibilityTimeout: q.VisibilityTimeout, MessageRetentionPeriod: q.MessageRetentionPeriod})
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	urls, err := stack.CreateQueues(ctx, c, "test-"+storetest.RandomSuffix()+"-", qs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, u := range urls {
			c.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: aws.String(u)})
		}
	})
	buckets := map[string]string{}
	for _, name := range tpl.Buckets() {
		buckets[name] = storetest.NewBucket(t)
	}
	pool := cognitotest.NewResources(t)
	return devserver.Resources{
		UserPoolID: pool.PoolID, UserPoolClientID: pool.ClientID,
		Stage:     "local",
		TableName: db.Table,
		// The audit trail's table, made as the service's.
		AuditTableName: storetest.NewDB(t).Table,
		QueueURLs:      urls,
		Buckets:        buckets,
		Secrets: map[string]string{
			"TOKEN_KEY_A": TokenKeyA, "TOKEN_KEY_B": TokenKeyB, "ADMIN_API_KEY": AdminAPIKey, "CARD_KEY": CardKey, "WEBHOOK_KEY": WebhookKey,
			"ISSUER_WEBHOOK_SECRET": IssuerWebhookSecret, "OPERATOR_API_TOKEN": OperatorAPIToken,
			"ISSUER_API_KEY": IssuerAPIKey, "DASHBOARD_SESSION_KEY": DashboardSessionKey,
		},
		Base: Env(),
		// Callbacks are verified (the sample ones refused) with the key of
		// a simulated pawaPay of the test's own. The company limits are
		// generous: tests fire requests faster than a stage admits.
		Params: map[string]string{"OperatorCallbackPublicKey": string(callbackKey(t)),
			"RateLimitRead": GenerousLimit, "RateLimitMoney": GenerousLimit, "RateLimitReveal": GenerousLimit},
	}
}

// GenerousLimit is every company limit of the local stack's tests
// (rate/burst): none of their requests is refused 429 RATE_LIMITED, its
// burst spanning 1000 s at its rate (apptest.GenerousLimits).
const GenerousLimit = "1000000/1000000000"

// callbackKey returns the public key of a new simulated pawaPay, as PEM.
func callbackKey(t testing.TB) []byte {
	t.Helper()
	sim, err := pawapaysim.New(pawapaysim.Config{Token: OperatorAPIToken})
	if err != nil {
		t.Fatal(err)
	}
	return sim.PublicKeyPEM()
}

// Env returns the environment that points the AWS SDK at the emulators
// named by the current AWS_ENDPOINT_URL_* variables (see stack.EndpointEnv)
// and, under Main, trusts the sample document server.
func Env() []string {
	env := stack.EndpointEnv(os.Getenv("AWS_ENDPOINT_URL_DYNAMODB"), os.Getenv("AWS_ENDPOINT_URL_SQS"), os.Getenv("AWS_ENDPOINT_URL_S3"))
	if ep := os.Getenv(stack.CognitoEndpointEnv); ep != "" { // cognito-local, or the in-memory stand-in (Resources)
		env = append(env, stack.CognitoEndpointEnv+"="+ep)
	}
	if documents != nil {
		env = append(env, "SSL_CERT_FILE="+os.Getenv("SSL_CERT_FILE"), outbound.AllowLoopbackEnv+"=true")
	}
	return env
}

// documents is the sample document server of this test process (Main).
var documents *samples.Server

// localCA is the CA of Main, which the functions of the tests trust.
var localCA *localca.CA

// NewTLSServer starts an HTTPS server of h on a loopback port with a
// certificate the functions trust (a webhook receiver), failing t when
// the package's tests do not run under Main, and returns its base URL.
func NewTLSServer(t testing.TB, h http.Handler) string {
	t.Helper()
	if localCA == nil {
		t.Fatal("localtest: NewTLSServer needs the package's TestMain to call localtest.Main")
	}
	cert, err := localCA.Issue()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv.URL
}

// Main runs the tests of a package that enrols customers from document
// URLs: before any test runs, it starts the sample document server, points
// SSL_CERT_FILE at a bundle that trusts its CA (Go reads the system roots
// once, at the first verification) and allows outbound calls to loopback,
// as `make run` does; then it runs m and exits with its code.
func Main(m *testing.M) {
	os.Exit(runWithDocuments(m))
}

func runWithDocuments(m *testing.M) int {
	ca, err := localca.New()
	if err != nil {
		fmt.Fprintln(os.Stderr, "localtest:", err)
		return 1
	}
	s, err := samples.Start("127.0.0.1:0", ca)
	if err != nil {
		fmt.Fprintln(os.Stderr, "localtest:", err)
		return 1
	}
	defer s.Close()
	dir, err := os.MkdirTemp("", "localtest-ca-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "localtest:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	bundle := filepath.Join(dir, "bundle.pem")
	if err := samples.TrustBundle(s.CA, bundle); err != nil {
		fmt.Fprintln(os.Stderr, "localtest:", err)
		return 1
	}
	os.Setenv("SSL_CERT_FILE", bundle)
	os.Setenv(outbound.AllowLoopbackEnv, "true")
	documents = s
	localCA = ca
	return m.Run()
}

// DocumentsURL returns the base URL of the sample document server, failing
// t when the package's tests do not run under Main.
func DocumentsURL(t testing.TB) string {
	t.Helper()
	if documents == nil {
		t.Fatal("no sample document server: the package's TestMain must call localtest.Main")
	}
	return documents.URL
}
