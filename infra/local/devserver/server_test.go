package devserver_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"payments/infra/local/devserver"
	"payments/infra/local/localtest"
	"payments/pkg/function"
	"payments/pkg/waittest"
)

// TestFunctionEnv resolves each function's template environment locally:
// each variable function.Functions says it reads gets its local value (a secret
// by value, under the name without _ARN), and no other of them is set.
func TestFunctionEnv(t *testing.T) {
	tpl := localtest.Template(t)
	res := devserver.Resources{
		TableName: "tbl", AuditTableName: "audit",
		QueueURLs: map[string]string{"payouts": "http://q/payouts", "webhooks": "http://q/webhooks", "issuer-events": "http://q/issuer-events",
			"funds": "http://q/funds", "bulk-payouts": "http://q/bulk-payouts",
			"payouts-dlq": "x", "webhooks-dlq": "y", "issuer-events-dlq": "z", "funds-dlq": "w", "bulk-payouts-dlq": "v"},
		Secrets:    map[string]string{"TOKEN_KEY_A": "ka", "TOKEN_KEY_B": "kb", "ADMIN_API_KEY": "ak", "CARD_KEY": "ck", "WEBHOOK_KEY": "wk", "ISSUER_WEBHOOK_SECRET": "is", "OPERATOR_API_TOKEN": "ot", "ISSUER_API_KEY": "ik", "DASHBOARD_SESSION_KEY": "dk"},
		Base:       []string{"AWS_ENDPOINT_URL_DYNAMODB=http://ddb"},
		Params:     map[string]string{"Mode": "production"},
		UserPoolID: "local_Ab12Cd34", UserPoolClientID: "dashboardclient",
	}
	local := map[string]string{
		"USER_POOL_ID": "local_Ab12Cd34", "USER_POOL_CLIENT_ID": "dashboardclient",
		"TABLE_NAME": "tbl", "AUDIT_TABLE_NAME": "audit", "PAYOUTS_QUEUE_URL": "http://q/payouts", "WEBHOOKS_QUEUE_URL": "http://q/webhooks", "BULK_PAYOUTS_QUEUE_URL": "http://q/bulk-payouts",
		"TOKEN_KEY_A": "ka", "TOKEN_KEY_B": "kb", "TOKEN_SIGNING_KEY": "a", "TOKEN_STANDBY_KEY": "accepted", "TOKEN_ISSUER": "",
		"ADMIN_API_KEY": "ak", "MODE": "production", "TOKEN_TTL_SECONDS": "3600", "TOKEN_RATE_LIMIT": "10", "REVEAL_LIMIT_PER_HOUR": "100",
		"RATE_LIMIT_READ": "50/100", "RATE_LIMIT_MONEY": "10/20", "RATE_LIMIT_REVEAL": "1/5",
		"PAYMENT_DEADLINE_SECONDS": "900", "CARD_HOLD_EXPIRY_SECONDS": "604800", "ISSUER_DECISION_DEADLINE_MS": "2000", "ADMIN_CREDIT_IN_PRODUCTION": "false", "DOCUMENTS_BUCKET": "documents",
		"CARD_KEY": "ck", "WEBHOOK_KEY": "wk", "DASHBOARD_SESSION_KEY": "dk", "ISSUER_EVENTS_QUEUE_URL": "http://q/issuer-events", "ISSUER_WEBHOOK_SECRET": "is",
		"FUNDS_QUEUE_URL": "http://q/funds", "OPERATOR_API_TOKEN": "ot", "OPERATOR_BASE_URL": "https://api.sandbox.pawapay.io",
		"OPERATOR_CALLBACK_PUBLIC_KEY": "", "ISSUER_API_KEY": "ik", "ISSUER_BASE_URL": "https://api.stripe.com", "RECONCILIATION_FIRST_WINDOW_HOURS": "24",
		"METRICS_NAMESPACE": "payments/local",           // !Sub payments/${Stage} of the Globals, at the default stage
		"STAGE":             "local", "ALARM_EMAIL": "", // the Globals' too
	}
	for _, fn := range tpl.Functions() {
		t.Run(fn.Dir, func(t *testing.T) {
			env, err := devserver.FunctionEnv(tpl, fn, res)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{
				"AWS_ENDPOINT_URL_DYNAMODB": "http://ddb", "AWS_LAMBDA_FUNCTION_NAME": fn.LogicalID,
				"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256",
			}
			if fn.Dir == "customers" { // documents of up to 10 MB are held in memory
				want["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"] = "512"
			}
			for _, v := range function.Functions[fn.Dir].Variables() {
				v = strings.TrimSuffix(v, "_ARN")
				want[v] = local[v]
			}
			// In production mode the issuer keeps the card secrets: the
			// template gives no card key (IsSandboxMode).
			delete(want, "CARD_KEY")
			for k, v := range want {
				if env[k] != v {
					t.Errorf("%s = %q, want %q", k, env[k], v)
				}
			}
			for k := range local {
				if _, ok := want[k]; !ok && env[k] != "" {
					t.Errorf("%s = %q: the template does not give it to %s", k, env[k], fn.Dir)
				}
			}
			for k := range env {
				if strings.HasSuffix(k, "_ARN") {
					t.Errorf("%s is set: secrets are passed by value locally", k)
				}
			}
		})
	}
}

// TestBuildFromTemplate serves the template's real functions and checks
// that requests reach them through the template's routes.
func TestBuildFromTemplate(t *testing.T) {
	tpl := localtest.Template(t)
	res := localtest.Resources(t, tpl)
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := devserver.Build(ctx, tpl, res, localtest.SQSClient(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, l) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	base := "http://" + l.Addr().String()
	tests := []struct {
		method, path, body string
		header             map[string]string
		want               int
		wantBody           string
	}{
		{"POST", "/api/v1/auth/token", `{}`, nil, 400, `"success":false`},
		{"GET", "/api/v1/admin/companies/nope", "", map[string]string{"X-Admin-Key": "wrong"}, 401, `"success":false`},
		{"GET", "/api/v1/admin/companies/nope", "", map[string]string{"X-Admin-Key": localtest.AdminAPIKey}, 404, `"success":false`},
		// The caller's principal, which no SigV4 names locally, is the
		// header's: the audit trail records it.
		{"POST", "/api/v1/admin/companies", `{"name":"Audited"}`, map[string]string{"X-Admin-Key": localtest.AdminAPIKey,
			devserver.CallerPrincipalHeader: "arn:aws:iam::000000000000:user/ada"}, 201, `"success":true`},
		{"GET", "/api/v1/admin/audit?operator=arn:aws:iam::000000000000:user/ada&action=POST+/admin/companies", "",
			map[string]string{"X-Admin-Key": localtest.AdminAPIKey}, 200, `"operator":"arn:aws:iam::000000000000:user/ada"`},
		{"GET", "/api/v1/wallets", "", nil, 401, `"success":false`},
		{"GET", "/api/v1/not-a-route", "", nil, 404, `"code":"ROUTE_NOT_FOUND"`},
		{"GET", "/outside-the-api", "", nil, 404, `"code":"ROUTE_NOT_FOUND"`},
		{"DELETE", "/api/v1/auth/token", "", nil, 405, `"code":"METHOD_NOT_ALLOWED"`},
		// The dashboard's Home, through its route ANY /dashboard, sends
		// one not signed in to its sign-in page (ANY /dashboard/{proxy+}).
		{"GET", "/dashboard", "", nil, 200, "<h1>Sign in</h1>"},
		// A form posted with the page's own origin, port included, is
		// not taken for another site's.
		{"POST", "/dashboard/sign-in", "email=nobody%40example.com&password=x", map[string]string{
			"Origin": base, "Content-Type": "application/x-www-form-urlencoded"}, 401, "<h1>Sign in</h1>"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, base+tt.path, strings.NewReader(tt.body))
			req.Header.Set("Content-Type", "application/json")
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.want || !strings.Contains(string(b), tt.wantBody) {
				t.Errorf("got %d %s, want %d with %s", resp.StatusCode, b, tt.want, tt.wantBody)
			}
		})
	}
}

// TestEachQueuePolledApart: the payout worker consumes the payouts queue
// and the bulk payouts queue by two triggers, and the local stack polls
// each with pollers of its own, the bulk payouts queue's as many as its
// trigger's MaximumConcurrency: while every bulk poller is busy with a
// backlog (their handlers held), a message on the payouts queue is
// handled at once.
func TestEachQueuePolledApart(t *testing.T) {
	tpl := localtest.Template(t)
	res := localtest.Resources(t, tpl)
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := devserver.Build(ctx, tpl, res, localtest.SQSClient(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	most := 0
	for _, fn := range tpl.Functions() {
		for _, q := range fn.Queues {
			if q.Queue == "bulk-payouts" {
				most = q.MaximumConcurrency
			}
		}
	}
	if most <= 0 {
		t.Fatal("the bulk payouts queue's trigger sets no MaximumConcurrency")
	}
	var mu sync.Mutex
	bulkInFlight, payoutsHandled := 0, 0
	release := make(chan struct{})
	found := map[string]bool{}
	for i := range srv.Consumers {
		c := &srv.Consumers[i]
		if c.Function != "payout-worker" {
			continue
		}
		switch c.QueueURL {
		case res.QueueURLs["bulk-payouts"]:
			if c.Concurrency != most {
				t.Errorf("%d pollers of the bulk payouts queue, want its trigger's MaximumConcurrency %d", c.Concurrency, most)
			}
			c.Handler = func(ctx context.Context, e events.SQSEvent) (events.SQSEventResponse, error) {
				mu.Lock()
				bulkInFlight++
				mu.Unlock()
				<-release
				return events.SQSEventResponse{}, nil
			}
		case res.QueueURLs["payouts"]:
			c.Handler = func(ctx context.Context, e events.SQSEvent) (events.SQSEventResponse, error) {
				mu.Lock()
				payoutsHandled += len(e.Records)
				mu.Unlock()
				return events.SQSEventResponse{}, nil
			}
		default:
			t.Errorf("payout-worker consumes %s", c.QueueURL)
		}
		found[c.QueueURL] = true
	}
	if len(found) != 2 {
		t.Fatalf("payout-worker consumes %v, want the payouts and bulk payouts queues", found)
	}
	sqsClient := localtest.SQSClient(t)
	for i := range 10 * most {
		if _, err := sqsClient.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(res.QueueURLs["bulk-payouts"]), MessageBody: aws.String(strconv.Itoa(i))}); err != nil {
			t.Fatal(err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, l) }()
	defer func() {
		close(release)
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	waittest.Until(t, 10*time.Second, "every bulk poller holds a batch", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return bulkInFlight == most
	})
	if _, err := sqsClient.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(res.QueueURLs["payouts"]), MessageBody: aws.String("single")}); err != nil {
		t.Fatal(err)
	}
	waittest.Until(t, 10*time.Second, "the payouts queue's message is handled", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return payoutsHandled == 1
	})
	mu.Lock()
	defer mu.Unlock()
	if bulkInFlight != most {
		t.Fatalf("%d bulk batches handled, want the %d held", bulkInFlight, most)
	}
}
