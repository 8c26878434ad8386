// Command loadtest measures the payout path and the card authorization
// path against their floors (make loadtest; docs/performance.md):
//
//	(a) CLIENTS concurrent clients make payouts through the dev server
//	    (HTTP → API Gateway event → the payments function's handler →
//	    DynamoDB Local and the SQS emulator) for DURATION, on one wallet
//	    and on -wallets wallets (one company each);
//	(b) the same clients call moneystore.Payments.CreatePayout, the code that
//	    builds and sends the payout's TransactWriteItems, directly against
//	    the same DynamoDB Local on the same wallets for DURATION.
//
// (a) and (b) take turns (-rounds, each DURATION/rounds long), so that
// the other work of the machine and the growth of the table weigh on
// both alike.
//
// It prints, per scenario, the payouts accepted per second, p50 and p99
// latency and the answers that were not acceptances, then the ratio
// (a)/(b). Then, with DynamoDB's transaction conflicts simulated
// (ConflictSimulation), it makes payouts on one wallet for
// CONFLICT_DURATION twice: with the wallet as one item, as the service
// stores it, and with the prototype of the split wallet (SubItems), and
// prints the conflict rates; and it prints the items of one payout's
// transaction with their sizes and write units.
//
// Then the card authorizations (auth.go), on 1 card and on -cards cards
// (one company each), -auth-clients clients for AUTH_DURATION, in turns:
//
//	(c) the card network's authorization requests, signed as the issuer
//	    signs them, through the dev server (POST /issuer/authorizations,
//	    the issuer-authorizations function: cards.Service.Decide);
//	(d) moneystore.Cards.Record of the approval Decide writes for the same
//	    request, on the card as read once, against the same DynamoDB
//	    Local.
//
// It prints their table, the ratio (c)/(d) and whether the targets are
// met: (c)/(d) >= Target on many cards, (c)'s p99 <= AuthP99Target.
//
// Last, the bulk payouts (bulk.go): one batch of -bulk-items payouts on
// one wallet (POST /payment/payouts/bulk) to a deployment whose payout
// worker runs; it prints the seconds to the 202 (every item reserved),
// until every item is written as a payout and until the batch is
// COMPLETED, and the reservations and payouts written per second against
// (a)'s accepted payouts per second on one wallet (measured apart, on
// -clients clients for 15 s, when -duration is 0).
//
// It runs inside `devstack exec` (make loadtest), which gives it the
// emulators' endpoints; each wallet or card count gets a fresh table,
// fresh queues and a fresh bucket, and the dev server serves only the HTTP routes (the queue
// consumers and schedules do not run, so the payouts stay PENDING and
// the background work of settling them does not compete), but for the
// bulk scenario's payout worker.
//
// A duration of 0 (-duration, -conflict-duration, -auth-duration) or
// -bulk-items 0 leaves the scenarios out.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"

	"payments/infra/local/devserver"
	"payments/infra/local/samtemplate"
	"payments/infra/local/stack"
	"payments/pkg/bulk"
	"payments/pkg/documents"
	"payments/pkg/store"
)

// The payout every client makes: 100 XAF to a number the sandbox
// operator accepts, from the company's XAF wallet in Cameroon.
const (
	payoutAmount   = 100 // XAF, major units (XAF has no minor unit)
	payoutCurrency = "XAF"
	payoutCountry  = "CM"
	payoutOperator = "mtn"
	payoutPhone    = "237670000001"
	// funding is credited to each wallet's payout balance, enough for
	// every payout of the run.
	funding = 1_000_000_000
)

// Target is the least ratio (a)/(b) on many wallets that the service
// aims for (docs/performance.md).
const Target = 0.5

// adminKey is the admin key of the load test's deployment, issuerSecret
// the card issuer's webhook secret it runs with (ISSUER_WEBHOOK_SECRET),
// with which the authorization requests are signed.
const (
	adminKey     = "loadtest-admin-key"
	issuerSecret = "loadtest-issuer-webhook-secret-0123456789abcdef0123456789abcdef"
)

type options struct {
	clients          int
	duration         time.Duration
	conflictDuration time.Duration
	rounds           int
	conflictClients  int
	wallets          int
	subItems         int
	authClients      int
	authDuration     time.Duration
	cards            int
	bulkItems        int
	bulkWait         time.Duration
}

func main() {
	var o options
	flag.IntVar(&o.clients, "clients", 8, "concurrent clients in each throughput scenario")
	flag.IntVar(&o.conflictClients, "conflict-clients", 16, "concurrent clients in the conflict scenarios (the last has 3 times as many)")
	flag.DurationVar(&o.duration, "duration", 30*time.Second, "how long each throughput scenario runs (0: none)")
	flag.DurationVar(&o.conflictDuration, "conflict-duration", 5*time.Second, "how long each conflict scenario runs (0: none)")
	flag.IntVar(&o.rounds, "rounds", 6, "the turns (a) and (b) take within -duration each")
	flag.IntVar(&o.wallets, "wallets", 100, "the wallets of the many-wallet scenarios")
	flag.IntVar(&o.subItems, "sub-items", 16, "the sub-items of the split wallet in the conflict scenario")
	flag.IntVar(&o.authClients, "auth-clients", 16, "concurrent clients in the card authorization scenarios")
	flag.DurationVar(&o.authDuration, "auth-duration", 15*time.Second, "how long each card authorization scenario runs (0: none)")
	flag.IntVar(&o.cards, "cards", 100, "the cards of the many-card authorization scenarios")
	flag.IntVar(&o.bulkItems, "bulk-items", 10000, "the items of the bulk payout batch, at most bulk.MaxItems (0: none)")
	flag.DurationVar(&o.bulkWait, "bulk-wait", 90*time.Second, "how long the bulk scenario waits for its batch to be COMPLETED")
	flag.Parse()
	if o.clients < 1 || o.conflictClients < 1 || o.rounds < 1 || o.wallets < 1 || o.subItems < 1 || o.duration < 0 ||
		o.authClients < 1 || o.cards < 1 || o.authDuration < 0 || o.bulkItems < 0 || o.bulkItems > bulk.MaxItems || o.bulkWait <= 0 {
		fmt.Fprintln(os.Stderr, "loadtest: -clients, -rounds, -wallets, -sub-items, -auth-clients, -cards and -bulk-wait must be positive, -duration not negative, -bulk-items 0 to", bulk.MaxItems)
		os.Exit(2)
	}
	// The functions' logs (one line per payout) would cost more than
	// what is measured: only warnings and errors are kept.
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err := run(context.Background(), o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
}

// endpoints are the emulators' base URLs that devstack exec gives.
// endpoints are the emulators' base URLs, from the environment
// devstack exec gives (fromEnv).
type endpoints struct{ dynamodb, sqs, s3, cognito string }

// fromEnv returns the endpoints the environment names.
func fromEnv() endpoints {
	return endpoints{os.Getenv("AWS_ENDPOINT_URL_DYNAMODB"), os.Getenv("AWS_ENDPOINT_URL_SQS"), os.Getenv("AWS_ENDPOINT_URL_S3"),
		os.Getenv(stack.CognitoEndpointEnv)}
}

func run(ctx context.Context, o options, out io.Writer) error {
	ep := fromEnv()
	if ep.dynamodb == "" || ep.sqs == "" {
		return errors.New("AWS_ENDPOINT_URL_DYNAMODB and AWS_ENDPOINT_URL_SQS are not set: run it with `make loadtest`, which starts the emulators")
	}
	root, err := stack.FindRoot()
	if err != nil {
		return err
	}
	tpl, err := samtemplate.Load(filepath.Join(root, "template.yaml"))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "loadtest: %d clients, %s per scenario, GOMAXPROCS %d\n", o.clients, o.duration, runtime.GOMAXPROCS(0))

	var results []Result
	var hot *deployment
	if o.duration > 0 {
		var err error
		if results, hot, err = payouts(ctx, tpl, ep, o, out); err != nil {
			return err
		}
		defer hot.stop()
	}
	if o.conflictDuration > 0 {
		if hot == nil {
			d, err := deploy(ctx, tpl, ep)
			if err != nil {
				return err
			}
			defer d.stop()
			hot = d
		}
		if err := conflicts(ctx, hot, o, out); err != nil {
			return err
		}
	}
	if o.authDuration > 0 {
		if err := authorizations(ctx, tpl, ep, o, out); err != nil {
			return err
		}
	}
	if o.bulkItems > 0 {
		var single Result
		if len(results) > 0 {
			single = results[0]
		}
		return bulkScenario(ctx, tpl, ep, o, single, out)
	}
	return nil
}

// deployment is one local deployment of the template: a fresh table and
// queues, and the dev server serving its HTTP routes on a loopback port.
type deployment struct {
	res  devserver.Resources
	ep   endpoints
	base string // http://127.0.0.1:<port>/api/v1
	stop func()
}

// deploy makes a deployment; of the queue consumers, only those of the
// functions named in consumers run, and no schedule.
func deploy(ctx context.Context, tpl *samtemplate.Template, ep endpoints, consumers ...string) (*deployment, error) {
	suffix := strconv.FormatInt(time.Now().UnixNano(), 36)
	table, auditTable := "loadtest-"+suffix, "loadtest-"+suffix+"-audit"
	for _, name := range []string{table, auditTable} {
		if err := stack.CreateTable(ctx, ep.dynamodb, name); err != nil {
			return nil, err
		}
	}
	var qs []stack.Queue
	for _, q := range tpl.Queues() {
		qs = append(qs, stack.Queue{Name: q.Name, DLQ: q.DLQ, MaxReceiveCount: q.MaxReceiveCount,
			VisibilityTimeout: q.VisibilityTimeout, MessageRetentionPeriod: q.MessageRetentionPeriod})
	}
	urls, err := stack.CreateQueues(ctx, stack.SQSClient(ep.sqs), "loadtest-"+suffix+"-", qs)
	if err != nil {
		return nil, err
	}
	// The customers' documents go to a fresh bucket of each of the
	// template's buckets.
	buckets := map[string]string{}
	if ep.s3 != "" {
		s3c := documents.NewClient(stack.AWSConfig(), ep.s3)
		for _, name := range tpl.Buckets() {
			b := "loadtest-" + suffix + "-" + name
			if _, err := s3c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(b)}); err != nil {
				return nil, fmt.Errorf("create bucket %s: %w", b, err)
			}
			buckets[name] = b
		}
	}
	res := devserver.Resources{
		Stage: "local", TableName: table, AuditTableName: auditTable, QueueURLs: urls, Buckets: buckets,
		Secrets: map[string]string{
			"TOKEN_KEY_A":           "3a3b3c3d3e3f404142434445464748494a4b4c4d4e4f50515253545556575859",
			"TOKEN_KEY_B":           "4a4b4c4d4e4f505152535455565758595a5b5c5d5e5f60616263646566676869",
			"ADMIN_API_KEY":         adminKey,
			"CARD_KEY":              "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
			"WEBHOOK_KEY":           "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100",
			"ISSUER_WEBHOOK_SECRET": issuerSecret,
			"OPERATOR_API_TOKEN":    "loadtest-operator-token",
			"ISSUER_API_KEY":        "loadtest-issuer-api-key",
			"DASHBOARD_SESSION_KEY": "loadtest-dashboard-session-key-0123456789",
		},
		// Every company's token comes from this one address; the load is
		// measured, not limited per company.
		Params: map[string]string{"TokenRateLimit": "100000",
			"RateLimitRead": "1000000/1000000000", "RateLimitMoney": "1000000/1000000000", "RateLimitReveal": "1000000/1000000000"},
		Base: stack.EndpointEnv(ep.dynamodb, ep.sqs, ep.s3),
	}
	// The dashboard's user pool, which the console's owners are made in
	// and the dashboard signs in with: a fresh one in cognito-local.
	if ep.cognito != "" {
		pool, err := stack.CreateUserPool(ctx, ep.cognito, "loadtest-"+suffix)
		if err != nil {
			return nil, err
		}
		res.UserPoolID, res.UserPoolClientID = pool.PoolID, pool.ClientID
		res.Base = append(res.Base, stack.CognitoEndpointEnv+"="+ep.cognito)
	}
	sctx, cancel := context.WithCancel(ctx)
	srv, err := devserver.Build(sctx, tpl, res, stack.SQSClient(ep.sqs), slog.Default())
	if err != nil {
		cancel()
		return nil, err
	}
	srv.Consumers = slices.DeleteFunc(srv.Consumers, func(c devserver.Consumer) bool { return !slices.Contains(consumers, c.Function) })
	srv.Schedules = nil
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		return nil, err
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(sctx, l) }()
	return &deployment{
		res: res, ep: ep, base: "http://" + l.Addr().String() + "/api/v1",
		stop: func() { cancel(); <-served },
	}, nil
}

// db returns a store on the deployment's table with a client of its own,
// as a function builds it; opts are added to the client's APIOptions.
func (d *deployment) db(opts ...func(*middleware.Stack) error) *store.DB {
	client := store.NewClient(stack.AWSConfig(), d.ep.dynamodb)
	if len(opts) > 0 {
		client = dynamodb.New(client.Options(), func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, opts...) })
	}
	return store.New(client, d.res.TableName)
}

// load runs clients goroutines for d, each calling once in a loop with a
// wallet (or card) picked at random from ws; once returns "" for an
// accepted payout (an approved authorization) or the kind of the refusal.
// It returns what they measured.
func load[T any](ctx context.Context, ws []T, clients int, d time.Duration, once func(ctx context.Context, w T) string) Result {
	type part struct {
		lat     []time.Duration
		refused map[string]int
	}
	parts := make([]part, clients)
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for i := range parts {
		wg.Go(func() {
			p := part{refused: map[string]int{}}
			ctx := WithClient(ctx)
			for time.Now().Before(deadline) {
				w := ws[rand.IntN(len(ws))]
				t0 := time.Now()
				kind := once(ctx, w)
				if kind == "" {
					p.lat = append(p.lat, time.Since(t0))
				} else {
					p.refused[kind]++
				}
			}
			parts[i] = p
		})
	}
	wg.Wait()
	r := Result{Elapsed: time.Since(start), Refused: map[string]int{}}
	for _, p := range parts {
		r.Latencies = append(r.Latencies, p.lat...)
		for k, n := range p.refused {
			r.Refused[k] += n
		}
	}
	r.Accepted = len(r.Latencies)
	return r
}

// shorten keeps an error text short enough for the table.
func shorten(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
