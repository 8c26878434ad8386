package samtemplate

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"payments/pkg/store"
)

const templatePath = "../../../template.yaml"

func load(t *testing.T) *Template {
	t.Helper()
	tpl, err := Load(templatePath)
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}

func TestEveryFunctionHasItsFolderAndBuild(t *testing.T) {
	tpl := load(t)
	fns := tpl.Functions()
	if len(fns) == 0 {
		t.Fatal("no functions in template")
	}
	for _, fn := range fns {
		t.Run(fn.LogicalID, func(t *testing.T) {
			main := filepath.Join("../../../functions", fn.Dir, "main.go")
			if _, err := os.Stat(main); err != nil {
				t.Errorf("functions/%s: %v", fn.Dir, err)
			}
			if uri := tpl.Resources[fn.LogicalID].Properties["CodeUri"]; uri != nil {
				t.Errorf("CodeUri = %v; leave it to Globals (the project root, where the Makefile is)", uri)
			}
			if got := tpl.Resources[fn.LogicalID].Metadata["BuildMethod"]; got != "makefile" {
				t.Errorf("Metadata.BuildMethod = %v, want makefile", got)
			}
		})
	}
	g := asMap(tpl.Globals["Function"])
	want := map[string]any{"Runtime": "provided.al2023", "Handler": "bootstrap", "Architectures": []any{"arm64"}, "CodeUri": "."}
	for k, v := range want {
		if !reflect.DeepEqual(g[k], v) {
			t.Errorf("Globals.Function.%s = %v, want %v", k, g[k], v)
		}
	}
}

// TestRoutesAreUniqueAndVersioned: no route is wired twice, and every route
// is under /api/v1 but the company dashboard's pages, /dashboard and under
// it (docs/routes.md, "Outside the API").
func TestRoutesAreUniqueAndVersioned(t *testing.T) {
	seen := map[string]string{}
	for _, fn := range load(t).Functions() {
		for _, r := range fn.Routes {
			key := r.Method + " " + r.Path
			if other, dup := seen[key]; dup {
				t.Errorf("%s wired to both %s and %s", key, other, fn.LogicalID)
			}
			seen[key] = fn.LogicalID
			dashboard := r.Path == "/dashboard" || strings.HasPrefix(r.Path, "/dashboard/")
			if r.Path != "$default" && !dashboard && (len(r.Path) < 8 || r.Path[:8] != "/api/v1/") {
				t.Errorf("%s: path outside /api/v1", key)
			}
		}
	}
}

func TestAdminRoutesNeedIAM(t *testing.T) {
	for _, fn := range load(t).Functions() {
		for _, r := range fn.Routes {
			isAdmin := len(r.Path) >= 14 && r.Path[:14] == "/api/v1/admin/"
			if isAdmin != r.IAM {
				t.Errorf("%s %s: IAM = %v, want %v", r.Method, r.Path, r.IAM, isAdmin)
			}
			if isAdmin && fn.Dir != "admin" {
				t.Errorf("%s %s served by %s, not admin", r.Method, r.Path, fn.Dir)
			}
		}
	}
}

func TestQueuesHaveDeadLetterQueues(t *testing.T) {
	qs := load(t).Queues()
	names := map[string]Queue{}
	for _, q := range qs {
		names[q.Name] = q
	}
	for _, want := range []string{"payouts", "webhooks", "funds"} {
		q, ok := names[want]
		if !ok {
			t.Errorf("queue %s missing", want)
			continue
		}
		if q.DLQ == "" || q.MaxReceiveCount == 0 {
			t.Errorf("queue %s has no dead-letter queue", want)
		}
		if _, ok := names[q.DLQ]; !ok {
			t.Errorf("queue %s: DLQ %s is not a queue of the template", want, q.DLQ)
		}
		if q.VisibilityTimeout < 6*15 {
			t.Errorf("queue %s: visibility time-out %d s is under six times the function time-out", want, q.VisibilityTimeout)
		}
	}
	// Dead-letter queues come first so creating in order works.
	for i, q := range qs {
		for _, later := range qs[i+1:] {
			if q.DLQ == later.Name {
				t.Errorf("%s listed before its DLQ %s", q.Name, later.Name)
			}
		}
	}
}

func TestQueueTriggersReportBatchItemFailures(t *testing.T) {
	for _, fn := range load(t).Functions() {
		for _, q := range fn.Queues {
			if !q.ReportBatchItemFailures {
				t.Errorf("%s: trigger on %s lacks ReportBatchItemFailures", fn.LogicalID, q.Queue)
			}
			if q.Queue == "" {
				t.Errorf("%s: trigger on an unknown queue", fn.LogicalID)
			}
		}
	}
}

// TestTableMatchesStoreDefinition proves the table exists once: the template
// declares the keys and indexes that store.TableDefinition creates locally.
func TestTableMatchesStoreDefinition(t *testing.T) {
	tpl := load(t)
	p := tpl.Resources["Table"].Properties
	def := store.TableDefinition("x")

	attrs := map[string]string{}
	for _, a := range asSlice(p["AttributeDefinitions"]) {
		m := asMap(a)
		attrs[asString(m["AttributeName"])] = asString(m["AttributeType"])
	}
	wantAttrs := map[string]string{}
	for _, a := range def.AttributeDefinitions {
		wantAttrs[aws.ToString(a.AttributeName)] = string(a.AttributeType)
	}
	if !reflect.DeepEqual(attrs, wantAttrs) {
		t.Errorf("AttributeDefinitions = %v, want %v", attrs, wantAttrs)
	}

	keys := func(v any) []string {
		var out []string
		for _, k := range asSlice(v) {
			m := asMap(k)
			out = append(out, asString(m["AttributeName"])+" "+asString(m["KeyType"]))
		}
		return out
	}
	var wantKey []string
	for _, k := range def.KeySchema {
		wantKey = append(wantKey, aws.ToString(k.AttributeName)+" "+string(k.KeyType))
	}
	if got := keys(p["KeySchema"]); !reflect.DeepEqual(got, wantKey) {
		t.Errorf("KeySchema = %v, want %v", got, wantKey)
	}

	gsis := map[string][]string{}
	for _, g := range asSlice(p["GlobalSecondaryIndexes"]) {
		m := asMap(g)
		gsis[asString(m["IndexName"])] = append(keys(m["KeySchema"]), asString(asMap(m["Projection"])["ProjectionType"]))
	}
	wantGSIs := map[string][]string{}
	for _, g := range def.GlobalSecondaryIndexes {
		var k []string
		for _, e := range g.KeySchema {
			k = append(k, aws.ToString(e.AttributeName)+" "+string(e.KeyType))
		}
		wantGSIs[aws.ToString(g.IndexName)] = append(k, string(g.Projection.ProjectionType))
	}
	if !reflect.DeepEqual(gsis, wantGSIs) {
		t.Errorf("GlobalSecondaryIndexes = %v, want %v", gsis, wantGSIs)
	}

	if got := asString(p["BillingMode"]); got != string(def.BillingMode) {
		t.Errorf("BillingMode = %s, want %s", got, def.BillingMode)
	}
	ttl := asMap(p["TimeToLiveSpecification"])
	if asString(ttl["AttributeName"]) != store.AttrExpiresAt || ttl["Enabled"] != true {
		t.Errorf("TimeToLiveSpecification = %v, want %s enabled", ttl, store.AttrExpiresAt)
	}
	if asMap(p["PointInTimeRecoverySpecification"])["PointInTimeRecoveryEnabled"] != true {
		t.Error("point-in-time recovery is off")
	}
	if asMap(p["SSESpecification"])["SSEEnabled"] != true {
		t.Error("encryption is off")
	}
}

func TestParseIntrinsics(t *testing.T) {
	tpl, err := Parse([]byte(`
Resources:
  Q:
    Type: AWS::SQS::Queue
    Properties:
      QueueName: !Sub ${AWS::StackName}-jobs
      RedrivePolicy: {deadLetterTargetArn: !GetAtt D.Arn, maxReceiveCount: 3}
  D:
    Type: AWS::SQS::Queue
    Properties: {QueueName: !Sub "${AWS::StackName}-jobs-dlq"}
  WorkerFunction:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        Jobs: {Type: SQS, Properties: {Queue: !GetAtt Q.Arn, BatchSize: 5, FunctionResponseTypes: [ReportBatchItemFailures], ScalingConfig: {MaximumConcurrency: 7}}}
        Tick: {Type: Schedule, Properties: {Schedule: rate(1 minute)}}
`))
	if err != nil {
		t.Fatal(err)
	}
	qs := tpl.Queues()
	got := []string{}
	for _, q := range qs {
		got = append(got, q.Name+">"+q.DLQ)
	}
	if want := []string{"jobs-dlq>", "jobs>jobs-dlq"}; !reflect.DeepEqual(got, want) {
		t.Errorf("queues = %v, want %v", got, want)
	}
	fns := tpl.Functions()
	want := Function{
		LogicalID: "WorkerFunction", Dir: "worker",
		Queues:    []QueueTrigger{{Queue: "jobs", BatchSize: 5, ReportBatchItemFailures: true, MaximumConcurrency: 7}},
		Schedules: []Schedule{{Expression: "rate(1 minute)"}},
	}
	if len(fns) != 1 || !reflect.DeepEqual(fns[0], want) {
		t.Errorf("functions = %+v, want %+v", fns, want)
	}
}

// TestParseShortForms holds the long forms the short ones become, the
// scalars YAML gives, and Parse's safety for concurrent use (goformation
// registers its tag resolvers in a map of its own at each parse): run
// under -race, as make test does.
func TestParseShortForms(t *testing.T) {
	const src = `
Parameters:
  Mode: {Type: String, Default: sandbox}
Conditions:
  IsProd: !Equals [!Ref Mode, production]
Resources:
  T:
    Type: AWS::DynamoDB::Table
    Properties:
      A: !Ref Mode
      B: !GetAtt T.Arn
      C: !GetAtt [T, StreamArn]
      D: !Sub "${T.Arn}/index/*"
      E: !If [IsProd, !Ref AWS::NoValue, 15]
      F: !Join [",", [a, !Ref Mode]]
      G: !Not [!Condition IsProd]
      N: 3
      R: 0.5
      S: "3"
      Y: true
`
	want := map[string]any{
		"A": map[string]any{"Ref": "Mode"},
		"B": map[string]any{"Fn::GetAtt": []any{"T", "Arn"}},
		"C": map[string]any{"Fn::GetAtt": []any{"T", "StreamArn"}},
		"D": map[string]any{"Fn::Sub": "${T.Arn}/index/*"},
		"E": map[string]any{"Fn::If": []any{"IsProd", map[string]any{"Ref": "AWS::NoValue"}, 15}},
		"F": map[string]any{"Fn::Join": []any{",", []any{"a", map[string]any{"Ref": "Mode"}}}},
		"N": 3, "R": 0.5, "S": "3", "Y": true,
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			tpl, err := Parse([]byte(src))
			if err != nil {
				t.Error(err)
				return
			}
			got := tpl.Resources["T"].Properties
			for k, v := range want {
				if !reflect.DeepEqual(got[k], v) {
					t.Errorf("%s = %#v, want %#v", k, got[k], v)
				}
			}
			if yes, err := tpl.Condition("IsProd", map[string]string{"Mode": "production"}); err != nil || !yes {
				t.Errorf("IsProd with Mode=production: %v, %v", yes, err)
			}
		})
	}
	wg.Wait()
}

func TestFunctionDir(t *testing.T) {
	tests := map[string]string{
		"WalletsFunction":       "wallets",
		"PayoutWorkerFunction":  "payout-worker",
		"WebhookWorkerFunction": "webhook-worker",
		"AuthFunction":          "auth",
	}
	for id, want := range tests {
		if got := FunctionDir(id); got != want {
			t.Errorf("FunctionDir(%s) = %s, want %s", id, got, want)
		}
	}
}

func TestParsePolicies(t *testing.T) {
	tpl, err := Parse([]byte(`
Globals:
  Function:
    Environment:
      Variables: {TABLE_NAME: !Ref Table, MODE: sandbox}
Resources:
  Table: {Type: AWS::DynamoDB::Table}
  Jobs: {Type: AWS::SQS::Queue}
  Key: {Type: AWS::SecretsManager::Secret}
  WorkerFunction:
    Type: AWS::Serverless::Function
    Properties:
      Environment:
        Variables: {MODE: production, KEY_ARN: !Ref Key}
      Policies:
        - Statement:
            - Effect: Allow
              Action: [dynamodb:GetItem, dynamodb:Query]
              Resource: !GetAtt Table.Arn
            - Effect: Allow
              Action: dynamodb:Query
              Resource: [!Sub "${Table.Arn}/index/*", !GetAtt Jobs.Arn]
        - AWSSecretsManagerGetSecretValuePolicy: {SecretArn: !Ref Key}
        - AWSLambdaBasicExecutionRole
        - DynamoDBCrudPolicy: {TableName: !Ref Table}
`))
	if err != nil {
		t.Fatal(err)
	}
	fn := tpl.Functions()[0]
	wantEnv := map[string]any{"TABLE_NAME": map[string]any{"Ref": "Table"}, "MODE": "production", "KEY_ARN": map[string]any{"Ref": "Key"}}
	if env := tpl.Environment(fn); !reflect.DeepEqual(env, wantEnv) {
		t.Errorf("environment = %v, want %v", env, wantEnv)
	}
	wantStatements := []Statement{
		{Effect: "Allow", Actions: []string{"dynamodb:GetItem", "dynamodb:Query"}, Resources: []any{map[string]any{"Fn::GetAtt": []any{"Table", "Arn"}}}},
		{Effect: "Allow", Actions: []string{"dynamodb:Query"}, Resources: []any{
			map[string]any{"Fn::Sub": "${Table.Arn}/index/*"}, map[string]any{"Fn::GetAtt": []any{"Jobs", "Arn"}},
		}},
		{Effect: "Allow", Actions: []string{"secretsmanager:GetSecretValue"}, Resources: []any{map[string]any{"Ref": "Key"}}},
	}
	if !reflect.DeepEqual(fn.Statements, wantStatements) {
		t.Errorf("statements = %+v, want %+v", fn.Statements, wantStatements)
	}
	if want := []any{"AWSLambdaBasicExecutionRole", map[string]any{"DynamoDBCrudPolicy": map[string]any{"TableName": map[string]any{"Ref": "Table"}}}}; !reflect.DeepEqual(fn.OtherPolicies, want) {
		t.Errorf("other policies = %v, want %v", fn.OtherPolicies, want)
	}

	tests := []struct {
		name       string
		v          any
		id, suffix string
		err        bool
	}{
		{"GetAtt Arn", map[string]any{"Fn::GetAtt": []any{"Table", "Arn"}}, "Table", "", false},
		{"Sub index", map[string]any{"Fn::Sub": "${Table.Arn}/index/*"}, "Table", "/index/*", false},
		{"Ref of a secret", map[string]any{"Ref": "Key"}, "Key", "", false},
		{"Ref of a queue is its URL", map[string]any{"Ref": "Jobs"}, "", "", true},
		{"GetAtt of another attribute", map[string]any{"Fn::GetAtt": []any{"Jobs", "QueueName"}}, "", "", true},
		{"Sub of two references", map[string]any{"Fn::Sub": "${Table.Arn}/${Jobs.Arn}"}, "", "", true},
		{"Sub not starting with an ARN", map[string]any{"Fn::Sub": "arn:aws:s3:::${Table}"}, "", "", true},
		{"unknown resource", map[string]any{"Fn::GetAtt": []any{"Nope", "Arn"}}, "", "", true},
		{"plain string", "*", "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, suffix, err := tpl.ARN(tt.v)
			if (err != nil) != tt.err || id != tt.id || suffix != tt.suffix {
				t.Fatalf("ARN(%v) = %q, %q, %v", tt.v, id, suffix, err)
			}
		})
	}
}

// TestCardDecisionsHaveReservedConcurrency: every function that decides
// card authorizations (the sandbox network's, the sandbox-format endpoint's
// and Stripe's real-time requests) reserves its concurrency, from the stage
// parameter, so that a flood of other requests never starves one.
func TestCardDecisionsHaveReservedConcurrency(t *testing.T) {
	tpl := load(t)
	if _, ok := tpl.Parameters["CardDecisionReservedConcurrency"]; !ok {
		t.Fatal("no parameter CardDecisionReservedConcurrency")
	}
	want := map[string]any{"Fn::If": []any{"ReservesCardDecisions",
		map[string]any{"Ref": "CardDecisionReservedConcurrency"}, map[string]any{"Ref": "AWS::NoValue"}}}
	for _, id := range []string{"CardNetworkFunction", "IssuerAuthorizationsFunction", "StripeWebhooksFunction"} {
		if got := tpl.Resources[id].Properties["ReservedConcurrentExecutions"]; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: ReservedConcurrentExecutions = %v, want %v", id, got, want)
		}
	}
}

// TestRouteThrottlesNameRoutes: the HTTP API throttles the expensive routes
// on their own, and each throttle's key names a route of the template (API
// Gateway refuses the stage otherwise) with both limits set.
func TestRouteThrottlesNameRoutes(t *testing.T) {
	tpl := load(t)
	routes := map[string]bool{}
	for _, fn := range tpl.Functions() {
		for _, r := range fn.Routes {
			routes[r.Method+" "+r.Path] = true
		}
	}
	settings := asMap(tpl.Resources["HttpApi"].Properties["RouteSettings"])
	for _, key := range []string{"POST /api/v1/payment/payouts/bulk", "POST /api/v1/cards", "POST /api/v1/customers/enroll"} {
		if settings[key] == nil {
			t.Errorf("no throttle for %s", key)
		}
	}
	for key, v := range settings {
		if !routes[key] {
			t.Errorf("RouteSettings %q names no route", key)
		}
		s := asMap(v)
		burst, bok := s["ThrottlingBurstLimit"].(int)
		rate, rok := s["ThrottlingRateLimit"].(int)
		if !bok || !rok || burst < 1 || rate < 1 {
			t.Errorf("RouteSettings %q = %v, want ThrottlingBurstLimit and ThrottlingRateLimit of at least 1", key, v)
		}
	}
}
