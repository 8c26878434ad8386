// Command loadtest measures the payout path and the card authorization
// path against their floors (make loadtest; docs/performance.md):
//
//	(a) CLIENTS concurrent clients make payouts through the dev server
//	    (HTTP → API Gateway event → the payments function's handler →
//	    DynamoDB Local and the SQS emulator) for DURATION, on one wallet
//	    and on -wallets wallets (one company each);
//	(b) the same clients call store.Payments.CreatePayout, the code that
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
//	(d) store.Cards.Record of the approval Decide writes for the same
//	    request, on the card as read once, against the same DynamoDB
//	    Local.
//
// It prints their table, the ratio (c)/(d) and whether the targets are
// met: (c)/(d) >= Target on many cards, (c)'s p99 <= AuthP99Target.
//
// It runs inside `devstack exec` (make loadtest), which gives it the
// emulators' endpoints; each wallet or card count gets a fresh table,
// fresh queues and a fresh bucket, and the dev server serves only the HTTP routes (the queue
// consumers and schedules do not run, so the payouts stay PENDING and
// the background work of settling them does not compete).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"

	"payments/infra/local/devserver"
	"payments/infra/local/samtemplate"
	"payments/infra/local/stack"
	"payments/pkg/contention"
	"payments/pkg/documents"
	"payments/pkg/events"
	"payments/pkg/fees"
	"payments/pkg/ids"
	"payments/pkg/money"
	"payments/pkg/payments"
	"payments/pkg/store"
	"payments/pkg/timestamp"
	"payments/pkg/wallets"
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
}

func main() {
	var o options
	flag.IntVar(&o.clients, "clients", 8, "concurrent clients in each throughput scenario")
	flag.IntVar(&o.conflictClients, "conflict-clients", 16, "concurrent clients in the conflict scenarios (the last has 3 times as many)")
	flag.DurationVar(&o.duration, "duration", 30*time.Second, "how long each throughput scenario runs")
	flag.DurationVar(&o.conflictDuration, "conflict-duration", 5*time.Second, "how long each conflict scenario runs (0: none)")
	flag.IntVar(&o.rounds, "rounds", 6, "the turns (a) and (b) take within -duration each")
	flag.IntVar(&o.wallets, "wallets", 100, "the wallets of the many-wallet scenarios")
	flag.IntVar(&o.subItems, "sub-items", 16, "the sub-items of the split wallet in the conflict scenario")
	flag.IntVar(&o.authClients, "auth-clients", 16, "concurrent clients in the card authorization scenarios")
	flag.DurationVar(&o.authDuration, "auth-duration", 15*time.Second, "how long each card authorization scenario runs (0: none)")
	flag.IntVar(&o.cards, "cards", 100, "the cards of the many-card authorization scenarios")
	flag.Parse()
	if o.clients < 1 || o.conflictClients < 1 || o.rounds < 1 || o.wallets < 1 || o.subItems < 1 || o.duration <= 0 ||
		o.authClients < 1 || o.cards < 1 || o.authDuration < 0 {
		fmt.Fprintln(os.Stderr, "loadtest: -clients, -rounds, -wallets, -sub-items, -auth-clients, -cards and -duration must be positive")
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
type endpoints struct{ dynamodb, sqs, s3 string }

func run(ctx context.Context, o options, out io.Writer) error {
	ep := endpoints{os.Getenv("AWS_ENDPOINT_URL_DYNAMODB"), os.Getenv("AWS_ENDPOINT_URL_SQS"), os.Getenv("AWS_ENDPOINT_URL_S3")}
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
	for _, n := range []int{1, o.wallets} {
		d, err := deploy(ctx, tpl, ep)
		if err != nil {
			return err
		}
		defer d.stop()
		ws, err := d.setUp(ctx, n)
		if err != nil {
			return err
		}
		label := fmt.Sprintf("%d wallets", n)
		if n == 1 {
			label, hot = "1 wallet", d
		}
		// (a) and (b) take turns, so that what else the machine runs, and
		// the table's growth, weigh on both alike.
		a := Result{Name: "(a) dev server, " + label}
		b := Result{Name: "(b) CreatePayout direct, " + label}
		slice := o.duration / time.Duration(o.rounds)
		db := d.db()
		for i := range o.rounds {
			fmt.Fprintf(os.Stderr, "loadtest: %s, round %d of %d: (a) dev server, then (b) CreatePayout, %s each…\n", label, i+1, o.rounds, slice)
			a.Add(d.viaServer(ctx, ws, o.clients, slice))
			b.Add(direct(ctx, db, ws, o.clients, slice))
		}
		results = append(results, a, b)
	}

	fmt.Fprintln(out)
	writeTable(out, results)
	fmt.Fprintln(out)
	fmt.Fprintln(out, "| wallets | ratio (a)/(b) |")
	fmt.Fprintln(out, "|---:|---:|")
	for i := 0; i+1 < len(results); i += 2 {
		n := 1
		if i > 0 {
			n = o.wallets
		}
		fmt.Fprintf(out, "| %d | %.2f |\n", n, Ratio(results[i], results[i+1]))
	}
	verdict := "met"
	if r := Ratio(results[2], results[3]); r < Target {
		verdict = "NOT met"
	}
	fmt.Fprintf(out, "\nTarget (a)/(b) >= %.2f on %d wallets: %s.\n", Target, o.wallets, verdict)

	if o.conflictDuration > 0 {
		if err := conflicts(ctx, hot, o, out); err != nil {
			return err
		}
	}
	if o.authDuration > 0 {
		return authorizations(ctx, tpl, ep, o, out)
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

func deploy(ctx context.Context, tpl *samtemplate.Template, ep endpoints) (*deployment, error) {
	suffix := strconv.FormatInt(time.Now().UnixNano(), 36)
	table := "loadtest-" + suffix
	if err := stack.CreateTable(ctx, ep.dynamodb, table); err != nil {
		return nil, err
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
		Stage: "local", TableName: table, QueueURLs: urls, Buckets: buckets,
		Secrets: map[string]string{
			"TOKEN_SECRET": "loadtest-token-secret-0123456789abcdef0123456789abcdef", "ADMIN_API_KEY": adminKey,
			"CARD_KEY":              "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
			"ISSUER_WEBHOOK_SECRET": issuerSecret,
			"OPERATOR_API_TOKEN":    "loadtest-operator-token",
			"ISSUER_API_KEY":        "loadtest-issuer-api-key",
		},
		// Every company's token comes from this one address.
		Params: map[string]string{"TokenRateLimit": "100000"},
		Base:   stack.EndpointEnv(ep.dynamodb, ep.sqs, ep.s3),
	}
	sctx, cancel := context.WithCancel(ctx)
	srv, err := devserver.Build(sctx, tpl, res, stack.SQSClient(ep.sqs), slog.Default())
	if err != nil {
		cancel()
		return nil, err
	}
	srv.Consumers, srv.Schedules = nil, nil
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

// viaServer is scenario (a): payouts through the dev server.
func (d *deployment) viaServer(ctx context.Context, ws []wallet, clients int, dur time.Duration) Result {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}}
	defer client.CloseIdleConnections()
	body := []byte(fmt.Sprintf(`{"operator":%q,"country":%q,"phone_number":%q,"amount":%d,"currency":%q}`,
		payoutOperator, payoutCountry, payoutPhone, payoutAmount, payoutCurrency))
	url := d.base + "/payment/payout"
	return load(ctx, ws, clients, dur, func(ctx context.Context, w wallet) string {
		req, err := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader(body))
		if err != nil {
			return "error: " + err.Error()
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+w.token)
		resp, err := client.Do(req)
		if err != nil {
			return "error: " + shorten(err.Error())
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode == http.StatusOK {
			return ""
		}
		var e struct {
			Code string `json:"code"`
		}
		json.Unmarshal(raw, &e)
		return strings.TrimSpace(fmt.Sprintf("%d %s", resp.StatusCode, e.Code))
	})
}

// direct is scenario (b): store.Payments.CreatePayout on db, with the
// payment, reservation and event that payments.Service.Payout would make
// for the same request.
func direct(ctx context.Context, db *store.DB, ws []wallet, clients int, d time.Duration) Result {
	ps := store.NewPayments(db)
	rule, err := fees.DefaultSchedule().Match(fees.TypePayout, payoutOperator, payoutCountry, payoutCurrency)
	if err != nil {
		return Result{Refused: map[string]int{"error: " + err.Error(): 1}}
	}
	amount, err := money.ParseAmount(json.RawMessage(strconv.Itoa(payoutAmount)), payoutCurrency)
	if err != nil {
		return Result{Refused: map[string]int{"error: " + err.Error(): 1}}
	}
	fee := rule.Fee(amount)
	return load(ctx, ws, clients, d, func(ctx context.Context, w wallet) string {
		p, reservation, ev, err := newPayout(w, amount, fee)
		if err != nil {
			return "error: " + err.Error()
		}
		switch err := ps.CreatePayout(ctx, p, reservation, ev); {
		case err == nil:
			return ""
		case errors.Is(err, contention.ErrConflict):
			return "conflict"
		case errors.Is(err, wallets.ErrInsufficientBalance):
			return "insufficient balance"
		default:
			return "error: " + shorten(err.Error())
		}
	})
}

// newPayout returns what payments.Service.Payout hands to CreatePayout for
// a payout of amount + fee from w.
func newPayout(w wallet, amount, fee int64) (payments.Payment, wallets.Transaction, events.Event, error) {
	now := time.Now().UTC()
	p := payments.Payment{
		ID: ids.NewV7(now), CompanyID: w.company, Type: payments.TypePayout, Status: payments.StatusPending,
		Amount: amount, Fee: fee, Currency: payoutCurrency, Country: payoutCountry, Operator: payoutOperator,
		PhoneNumber: payoutPhone, Reason: "Mobile money payout", WalletID: w.id,
		NextPollAt: now, CreatedAt: now, UpdatedAt: now,
	}
	p.ExternalID = p.ID
	p.EntryID = ids.NewV7(now)
	reservation := wallets.Transaction{
		ID: p.EntryID, CompanyID: w.company, WalletID: w.id, Amount: amount, AmountWithFee: p.Total(),
		FeeAmount: fee, NetAmount: amount, Currency: payoutCurrency, Status: wallets.StatusPending,
		Type: wallets.TypeWithdraw, Operator: payoutOperator, PhoneNumber: payoutPhone, Reference: p.ExternalID,
		Balance: wallets.Payout, Reserved: p.Total(), PaymentID: p.ID, CreatedAt: now,
	}
	ev, err := events.NewPaymentStatusUpdated(w.company, events.PayoutStatusUpdated, events.PaymentStatusData{
		TransactionID: p.ID, ExternalID: p.ExternalID, Type: string(p.Type), Status: string(p.Status),
		Amount: money.JSON(amount, payoutCurrency), FeeAmount: money.JSON(fee, payoutCurrency),
		Currency: payoutCurrency, Country: payoutCountry, Operator: payoutOperator, PhoneNumber: payoutPhone,
		UpdatedAt: timestamp.Format(now),
	}, "", now)
	return p, reservation, ev, err
}

// shorten keeps an error text short enough for the table.
func shorten(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
