// Command devstack runs the service locally, with no Docker and no AWS
// account (see docs/local.md).
//
// Usage:
//
//	devstack run [-make-pid PID]  the persistent stack and the dev server (make run)
//	devstack exec -- CMD…         a throwaway stack: run CMD with the emulators'
//	                              environment, stop the stack, exit with CMD's
//	                              status (make test)
//
// run starts DynamoDB Local (data in .cache/dynamodb), the SQS emulator,
// s3rver (data in .cache/s3), cognito-local (data in .cache/cognito) and
// stripe-mock on 127.0.0.1, creates the table, the template's queues and
// buckets and the dashboard's user pool (its groups and app client: ids
// given to the functions as the template's USER_POOL_ID and
// USER_POOL_CLIENT_ID) when missing, and serves the API
// on http://127.0.0.1:$PORT/api/v1 with the template's routes, queue
// pollers and schedules (in MODE=production, beside simulated pawaPay and
// simulated Stripe Issuing unless real ones are configured). SIGINT or SIGTERM stops everything it started. With -make-pid,
// the make process that runs it (`make run`), it also stops when that make
// starts handling SIGINT, SIGTERM, SIGHUP or SIGQUIT, or exits: GNU make
// does not pass SIGINT on to its children (see package makewatch).
//
// Environment: PORT (3000), DYNAMODB_PORT (8000), SQS_PORT (9324), S3_PORT
// (4568), STRIPE_MOCK_PORT (12111), COGNITO_PORT (9229, cognito-local's
// own default), DOCS_PORT (4443), OPERATOR_PORT (4570:
// the simulated pawaPay of MODE=production, devserver.StartAggregator),
// ISSUER_PORT (4571: the simulated Stripe Issuing of MODE=production,
// devserver.StartIssuer, whose stand-in and dropped deliveries
// SIM_STRIPE_STAND_IN and SIM_STRIPE_DROP_EVENTS set), DATA_DIR (.cache: the data, logs, secrets, local
// CA and state, stack.DataDir), ADMIN_API_KEY, TOKEN_KEY_A, TOKEN_KEY_B,
// CARD_KEY, WEBHOOK_KEY, ISSUER_WEBHOOK_SECRET, OPERATOR_API_TOKEN and
// ISSUER_API_KEY (default: generated once into admin-api-key, token-key-a,
// token-key-b, card-key, webhook-key, issuer-webhook-secret,
// operator-api-token and issuer-api-key of the data
// folder: stack.SecretFiles), LOG_LEVEL (info), and the stack parameters of
// paramVariables (MODE, PAYMENT_DEADLINE_SECONDS, …; default: the
// template's).
// exec uses free ports and in-memory storage, so it runs beside `run`.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"payments/infra/local/devserver"
	"payments/infra/local/localca"
	"payments/infra/local/makewatch"
	"payments/infra/local/samples"
	"payments/infra/local/samtemplate"
	"payments/infra/local/stack"
	"payments/pkg/correlation"
	"payments/pkg/metrics"
	"payments/pkg/outbound"
)

// TableName is the local table's name.
const TableName = "payments-local"

// AuditTableName is the local audit trail's table (pkg/audit), made as the
// service's is (its indexes unused).
const AuditTableName = "payments-local-audit"

// MetricsLog is the file of the logs folder that keeps the functions'
// metrics of the current run, one EMF line each (`make metrics` reads it).
const MetricsLog = "metrics.log"

func main() {
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: devstack run [-make-pid PID] | devstack exec -- command [args…] | devstack metrics")
	}
	flag.Parse()
	log := slog.New(correlation.LogHandler(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel()})))
	slog.SetDefault(log)
	var code int
	switch flag.Arg(0) {
	case "run":
		fs := flag.NewFlagSet("run", flag.ExitOnError)
		makePid := fs.Int("make-pid", 0, "the `pid` of the make that runs devstack: stop when it is stopping or gone")
		fs.Parse(flag.Args()[1:])
		if err := run(log, *makePid); err != nil {
			fmt.Fprintln(os.Stderr, "devstack:", err)
			code = 1
		}
	case "exec":
		args := flag.Args()[1:]
		if len(args) > 0 && args[0] == "--" {
			args = args[1:]
		}
		if len(args) == 0 {
			flag.Usage()
			os.Exit(2)
		}
		code = execWithStack(log, args)
	case "metrics":
		if err := summarize(os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "devstack:", err)
			code = 1
		}
	default:
		flag.Usage()
		code = 2
	}
	os.Exit(code)
}

func logLevel() slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(os.Getenv("LOG_LEVEL"))); err != nil {
		return slog.LevelInfo
	}
	return l
}

func envPort(name string, def int) (int, error) {
	v := os.Getenv(name)
	if v == "" {
		return def, nil
	}
	p, err := strconv.Atoi(v)
	if err != nil || p <= 0 || p > 65535 {
		return 0, fmt.Errorf("%s=%q is not a port number", name, v)
	}
	return p, nil
}

// run is `make run`; makePid, when not 0, is the make that runs it.
func run(log *slog.Logger, makePid int) (err error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if makePid > 0 {
		var cancel context.CancelFunc
		ctx, cancel = makewatch.Context(ctx, makePid, log)
		defer cancel()
	}
	defer func() {
		if err != nil && ctx.Err() != nil {
			log.Info("interrupted", "while", err)
			err = nil
		}
	}()

	root, err := stack.FindRoot()
	if err != nil {
		return err
	}
	cache := filepath.Join(root, ".cache")
	data, err := stack.DataDir(root)
	if err != nil {
		return err
	}
	ports := map[string]int{}
	for _, p := range []struct {
		env string
		def int
	}{{"PORT", 3000}, {"DYNAMODB_PORT", 8000}, {"SQS_PORT", 9324}, {"S3_PORT", 4568}, {"STRIPE_MOCK_PORT", 12111}, {"COGNITO_PORT", 9229}, {"DOCS_PORT", 4443}} {
		if ports[p.env], err = envPort(p.env, p.def); err != nil {
			return err
		}
		if err := stack.CheckPort(ports[p.env]); err != nil {
			return fmt.Errorf("%w: is `make run` already running? Set %s to use another port", err, p.env)
		}
	}
	secrets := map[string]string{}
	for name, file := range stack.SecretFiles {
		if v := os.Getenv(name); v != "" {
			secrets[name] = v
		} else if secrets[name], err = stack.Secret(filepath.Join(data, file)); err != nil {
			return err
		}
	}
	tpl, err := samtemplate.Load(filepath.Join(root, "template.yaml"))
	if err != nil {
		return err
	}

	log.Info("starting the emulators", "logs", filepath.Join(data, "logs"))
	st, err := stack.Start(ctx, stack.Options{
		Root: root, Cache: cache, DataDir: data, LogDir: filepath.Join(data, "logs"),
		DynamoDBPort: ports["DYNAMODB_PORT"], SQSPort: ports["SQS_PORT"], S3Port: ports["S3_PORT"],
		StripeMockPort: ports["STRIPE_MOCK_PORT"], CognitoPort: ports["COGNITO_PORT"], Buckets: tpl.Buckets(),
	})
	if err != nil {
		return err
	}
	defer st.Stop()
	exited := st.Exited()
	setEnv(st.Env())
	// Locally a webhook receiver usually runs on this machine: let the
	// outbound client dial loopback unless told otherwise. Never set in AWS.
	if os.Getenv(outbound.AllowLoopbackEnv) == "" {
		os.Setenv(outbound.AllowLoopbackEnv, "true")
	}
	docs, err := serveSampleDocuments(data, ports["DOCS_PORT"])
	if err != nil {
		return err
	}
	defer docs.Close()

	if err := st.WaitReady(ctx); err != nil {
		return err
	}
	for _, name := range []string{TableName, AuditTableName} {
		if err := stack.CreateTable(ctx, st.DynamoDBEndpoint, name); err != nil {
			return err
		}
	}
	urls, err := stack.CreateQueues(ctx, stack.SQSClient(st.SQSEndpoint), "", templateQueues(tpl))
	if err != nil {
		return err
	}
	pool, err := stack.CreateUserPool(ctx, st.CognitoEndpoint, stack.UserPoolName)
	if err != nil {
		return err
	}
	res := devserver.Resources{
		Stage: "local", TableName: TableName, AuditTableName: AuditTableName, QueueURLs: urls, Secrets: secrets, Base: st.Env(),
		Params: stackParams(os.Getenv), UserPoolID: pool.PoolID, UserPoolClientID: pool.ClientID,
	}
	base := fmt.Sprintf("http://127.0.0.1:%d/api/v1", ports["PORT"])
	if res.Params["PublicIssuerUrl"] == "" { // tokens name the local API as their issuer
		res.Params["PublicIssuerUrl"] = base
	}
	operatorPort, err := envPort("OPERATOR_PORT", 4570)
	if err != nil {
		return err
	}
	aggregator, err := devserver.StartAggregator(ctx, res, base, operatorPort, log)
	if err != nil {
		return err
	}
	if aggregator != nil {
		defer aggregator.Close()
	}
	issuerPort, err := envPort("ISSUER_PORT", 4571)
	if err != nil {
		return err
	}
	issuer, err := devserver.StartIssuer(ctx, res, base, st.StripeMockURL, issuerPort, filepath.Join(data, devserver.StateFile), log)
	if err != nil {
		return err
	}
	if issuer != nil {
		defer issuer.Close()
	}
	srv, err := devserver.Build(ctx, tpl, res, stack.SQSClient(st.SQSEndpoint), log)
	if err != nil {
		return err
	}
	// The functions' metrics are printed as they write them, and kept for
	// `make metrics` in the logs folder, new at each run.
	metricsLog, err := os.Create(filepath.Join(data, "logs", MetricsLog))
	if err != nil {
		return err
	}
	defer metricsLog.Close()
	srv.Metrics = io.MultiWriter(os.Stdout, metricsLog)
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(ports["PORT"])))
	if err != nil {
		return fmt.Errorf("dev server: %w (set PORT to use another port)", err)
	}
	state := stack.State{
		Pid: os.Getpid(), DynamoDBEndpoint: st.DynamoDBEndpoint, SQSEndpoint: st.SQSEndpoint, S3Endpoint: st.S3Endpoint,
		CognitoEndpoint: st.CognitoEndpoint, UserPoolID: pool.PoolID, UserPoolClientID: pool.ClientID,
		TableName: TableName, AuditTableName: AuditTableName, QueueURLs: urls, BaseURL: base,
		DocumentsURL: docs.URL, CAFile: os.Getenv("SSL_CERT_FILE"),
	}
	if err := stack.WriteState(data, state); err != nil {
		return err
	}
	defer os.Remove(filepath.Join(data, stack.StateFile))

	serveCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(serveCtx, l) }()

	fmt.Printf("API:           %s\n", base)
	fmt.Printf("Dashboard:     http://127.0.0.1:%d/dashboard (sign in as a company's owner: docs/dashboard.md)\n", ports["PORT"])
	fmt.Printf("Admin API key: %s (header X-Admin-Key; admin routes skip IAM/SigV4 locally)\n", secrets["ADMIN_API_KEY"])
	fmt.Printf("DynamoDB:      %s (table %s)\nSQS:           %s\nS3:            %s\n", st.DynamoDBEndpoint, TableName, st.SQSEndpoint, st.S3Endpoint)
	fmt.Printf("Cognito:       %s (cognito-local; user pool %s, dashboard client %s)\n", st.CognitoEndpoint, pool.PoolID, pool.ClientID)
	fmt.Printf("stripe-mock:   %s (checks the requests to the simulated Stripe Issuing)\n", st.StripeMockURL)
	fmt.Printf("Documents:     %s%s and %s%s (sample identity documents, HTTPS)\n", docs.URL, samples.FrontPath, docs.URL, samples.BackPath)
	if aggregator != nil {
		fmt.Printf("Aggregator:    %s (simulated pawaPay; its callbacks go to %s/operator/callbacks/pawapay)\n", aggregator.URL, base)
	}
	if issuer != nil {
		fmt.Printf("Issuer:        %s (simulated Stripe Issuing; its events go to %s/issuer/stripe/webhooks)\n", issuer.URL, base)
	}
	if os.Getenv(stack.DataDirEnv) != "" {
		fmt.Printf("Data:          %s (%s)\n", data, stack.DataDirEnv)
	}
	fmt.Println("ready")

	var runErr error
	select {
	case <-ctx.Done():
		log.Info("stopping")
	case runErr = <-exited:
	case runErr = <-served:
		if runErr == nil {
			runErr = errors.New("the dev server stopped")
		}
	}
	stop() // a second Ctrl-C kills at once; children die with us
	cancel()
	select {
	case err := <-served:
		if runErr == nil {
			runErr = err
		}
	case <-time.After(devserver.DefaultTimeout + 5*time.Second):
	}
	return runErr
}

// serveSampleDocuments starts the sample identity documents server on
// port, with a certificate of the local CA kept in the data folder, and has
// this process, whose functions fetch document URLs and deliver webhooks,
// trust that CA: SSL_CERT_FILE names a bundle (data/local-ca.pem) of the
// roots trusted so far and the CA, set before any certificate is verified.
// Any certificate the CA issues later (make listen's) is trusted too.
func serveSampleDocuments(data string, port int) (*samples.Server, error) {
	ca, err := localca.Load(data)
	if err != nil {
		return nil, err
	}
	docs, err := samples.Start(net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), ca)
	if err != nil {
		return nil, fmt.Errorf("%w (set DOCS_PORT to use another port)", err)
	}
	bundle := filepath.Join(data, "local-ca.pem")
	if err := samples.TrustBundle(ca.PEM, bundle); err != nil {
		docs.Close()
		return nil, err
	}
	os.Setenv("SSL_CERT_FILE", bundle)
	return docs, nil
}

// templateQueues returns the template's queues as the stack creates them.
func templateQueues(t *samtemplate.Template) []stack.Queue {
	var qs []stack.Queue
	for _, q := range t.Queues() {
		qs = append(qs, stack.Queue{
			Name: q.Name, DLQ: q.DLQ, MaxReceiveCount: q.MaxReceiveCount,
			VisibilityTimeout: q.VisibilityTimeout, MessageRetentionPeriod: q.MessageRetentionPeriod,
		})
	}
	return qs
}

func setEnv(env []string) {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			os.Setenv(k, v)
		}
	}
}

// execWithStack is `make test`: start a throwaway stack, run args with its
// environment in their own process group, stop everything, and return the
// command's exit status.
func execWithStack(log *slog.Logger, args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "devstack:", err)
		return 1
	}
	root, err := stack.FindRoot()
	if err != nil {
		return fail(err)
	}
	start := time.Now()
	st, err := stack.Start(ctx, stack.Options{Root: root})
	if err != nil {
		return fail(err)
	}
	defer st.Stop()
	if err := st.WaitReady(ctx); err != nil {
		return fail(err)
	}
	log.Info("emulators ready", "dynamodb", st.DynamoDBEndpoint, "sqs", st.SQSEndpoint, "s3", st.S3Endpoint, "cognito", st.CognitoEndpoint, "stripe-mock", st.StripeMockURL, "took", time.Since(start).Round(time.Millisecond))
	path, err := exec.LookPath(args[0])
	if err != nil {
		return fail(err)
	}
	p, err := stack.StartProcess(args[0], "", "", st.Env(), append([]string{path}, args[1:]...)...)
	if err != nil {
		return fail(err)
	}
	defer p.Stop(5 * time.Second) // and whatever it left in its group
	exited := st.Exited()
	select {
	case <-p.Done():
	case <-ctx.Done():
		p.Stop(10 * time.Second)
		return 130
	case err := <-exited:
		p.Stop(5 * time.Second)
		return fail(err)
	}
	var ee *exec.ExitError
	switch err := p.Err(); {
	case err == nil:
		return 0
	case errors.As(err, &ee) && ee.ExitCode() > 0:
		return ee.ExitCode()
	default:
		return fail(fmt.Errorf("%s: %w", args[0], err))
	}
}

// paramVariables maps the environment variables `make run` reads to the
// template parameters they set, so that the local stack is configured as a
// deployment is: PAYMENT_DEADLINE_SECONDS=20 make run shortens the payment
// deadline of every function that reads it.
var paramVariables = map[string]string{
	"MODE":              "Mode",
	"TOKEN_TTL_SECONDS": "TokenTtlSeconds",
	"TOKEN_RATE_LIMIT":  "TokenRateLimit",
	// Which local token key signs, whether the other is accepted, and the
	// iss of tokens (default: the local API's base URL).
	"TOKEN_SIGNING_KEY":           "TokenSigningKey",
	"TOKEN_STANDBY_KEY":           "TokenStandbyKey",
	"TOKEN_ISSUER":                "PublicIssuerUrl",
	"REVEAL_LIMIT_PER_HOUR":       "RevealLimitPerHour",
	"RATE_LIMIT_READ":             "RateLimitRead",
	"RATE_LIMIT_MONEY":            "RateLimitMoney",
	"RATE_LIMIT_REVEAL":           "RateLimitReveal",
	"PAYMENT_DEADLINE_SECONDS":    "PaymentDeadlineSeconds",
	"CARD_HOLD_EXPIRY_SECONDS":    "CardHoldExpirySeconds",
	"ISSUER_DECISION_DEADLINE_MS": "IssuerDecisionDeadlineMs",
	"ADMIN_CREDIT_IN_PRODUCTION":  "AdminCreditInProduction",
	// Where a provider's first reconciliation starts.
	"RECONCILIATION_FIRST_WINDOW_HOURS": "ReconciliationFirstWindowHours",
	// A real aggregator's API (e.g. pawaPay's sandbox) instead of the
	// simulated one, with OPERATOR_API_TOKEN and its callback key.
	"OPERATOR_BASE_URL":            "OperatorBaseUrl",
	"OPERATOR_CALLBACK_PUBLIC_KEY": "OperatorCallbackPublicKey",
	// A real Stripe Issuing (e.g. Stripe's test mode) instead of the
	// simulated one, with ISSUER_API_KEY and ISSUER_WEBHOOK_SECRET.
	"ISSUER_BASE_URL": "IssuerBaseUrl",
}

// stackParams returns the template parameters set by the variables of
// paramVariables that getenv gives a value.
func stackParams(getenv func(string) string) map[string]string {
	params := map[string]string{}
	for variable, param := range paramVariables {
		if v := getenv(variable); v != "" {
			params[param] = v
		}
	}
	return params
}

// summarize writes the table of the metrics in the EMF lines that the
// functions of `make run` wrote to MetricsLog (`make metrics`).
func summarize(w io.Writer) error {
	root, err := stack.FindRoot()
	if err != nil {
		return err
	}
	data, err := stack.DataDir(root)
	if err != nil {
		return err
	}
	file := filepath.Join(data, "logs", MetricsLog)
	f, err := os.Open(file)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no metrics yet: %s is written by `make run`", file)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	rows, invalid, err := metrics.Summarize(f)
	if err != nil {
		return err
	}
	if invalid > 0 {
		fmt.Fprintf(os.Stderr, "devstack: %d lines of %s are not valid EMF\n", invalid, file)
	}
	if len(rows) == 0 {
		fmt.Fprintf(w, "no metrics in %s yet\n", file)
		return nil
	}
	return metrics.WriteTable(w, rows)
}
