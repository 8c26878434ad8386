package apptest

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"payments/pkg/function"
)

// CallsEnv is the environment variable naming the folder where Main saves
// the AWS calls of a package whose tests all ran and passed. make test sets
// it for go test ./... and then runs grantcheck, which fails unless every
// action that function.Functions grants was made by some package's tests.
const CallsEnv = "APPTEST_CALLS"

// Main makes the process trust the CA of the tests' document servers
// (TrustDocumentCA), runs the package's tests, then checks the AWS calls
// they recorded against function.Functions: every call a function made must
// be granted to it. When the whole package ran and passed and CallsEnv
// names a folder, it saves the calls there for grantcheck. A package whose
// tests build functions with Recording calls it from its TestMain.
func Main(m *testing.M) {
	cleanup, err := TrustDocumentCA()
	if err != nil {
		fmt.Fprintln(os.Stderr, "trust the document servers' CA:", err)
		os.Exit(1)
	}
	code := m.Run()
	cleanup()
	if problems := AWSCalls.Check(function.Functions, false); len(problems) > 0 {
		fmt.Fprintln(os.Stderr, "AWS calls of the functions (function.Functions):")
		for _, p := range problems {
			fmt.Fprintln(os.Stderr, "  "+p)
		}
		code = 1
	}
	full := code == 0 && flag.Lookup("test.run").Value.String() == "" && flag.Lookup("test.skip").Value.String() == ""
	if dir := os.Getenv(CallsEnv); dir != "" && full {
		if err := AWSCalls.Save(dir); err != nil {
			fmt.Fprintln(os.Stderr, "save the AWS calls:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// Save writes the calls of l to a new file in dir, for CheckSaved.
func (l *CallLog) Save(dir string) error {
	l.mu.Lock()
	out := map[string][]AWSCall{}
	for name, calls := range l.calls {
		out[name] = SortedCalls(calls)
	}
	l.mu.Unlock()
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "calls-*.json")
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// CheckSaved reads the calls that Save wrote to dir and returns a line for
// each call that fns does not grant to its function and for each granted
// action that none of them made (an unused permission, or a path to test).
func CheckSaved(dir string, fns map[string]function.Function) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "calls-*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no saved calls in %s", dir)
	}
	all := &CallLog{calls: map[string]map[AWSCall]bool{}}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		var saved map[string][]AWSCall
		if err := json.Unmarshal(b, &saved); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		for name, calls := range saved {
			all.add(name, calls...)
		}
	}
	return all.Check(fns, true), nil
}

// AWSCall is one action on one resource, named as in a function.Grant.
type AWSCall struct {
	Resource string // "TABLE_NAME", "TABLE_NAME/index/*", "PAYOUTS_QUEUE_URL", …
	Action   string // "dynamodb:PutItem", …
}

// String returns the call as "action on resource".
func (c AWSCall) String() string { return c.Action + " on " + c.Resource }

// CallLog holds the AWS calls each function made during the tests.
type CallLog struct {
	mu    sync.Mutex
	calls map[string]map[AWSCall]bool // function -> calls
}

// AWSCalls is what the package's tests record.
var AWSCalls = &CallLog{calls: map[string]map[AWSCall]bool{}}

func (l *CallLog) add(name string, calls ...AWSCall) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.calls[name] == nil {
		l.calls[name] = map[AWSCall]bool{}
	}
	for _, c := range calls {
		l.calls[name][c] = true
	}
}

// RecordFollowed records a request a test made with a URL that function
// pre-signed (the console's links to documents): S3 authorizes it as
// function's own call, with function's grants, though function's SDK
// clients never sent it.
func RecordFollowed(function string, call AWSCall) { AWSCalls.add(function, call) }

// Check returns a line for each recorded call that fns does not grant to
// its function (nor list among its Unsigned calls) and, when all is set,
// for each granted action never called.
func (l *CallLog) Check(fns map[string]function.Function, all bool) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var problems []string
	for _, name := range slices.Sorted(maps.Keys(l.calls)) {
		granted := GrantedCalls(fns[name])
		for _, g := range fns[name].Unsigned {
			for _, a := range g.Actions {
				granted[AWSCall{g.Resource, a}] = true
			}
		}
		for _, c := range SortedCalls(l.calls[name]) {
			if !granted[c] {
				problems = append(problems, fmt.Sprintf("%s calls %s, which function.Functions does not grant it", name, c))
			}
		}
	}
	if !all {
		return problems
	}
	for _, name := range slices.Sorted(maps.Keys(fns)) {
		for _, c := range SortedCalls(GrantedCalls(fns[name])) {
			if !l.calls[name][c] {
				problems = append(problems, fmt.Sprintf("%s is granted %s, which no test saw it call: an unused permission, or a path to test", name, c))
			}
		}
	}
	return problems
}

// GrantedCalls returns every action on every resource fn's grants allow.
func GrantedCalls(fn function.Function) map[AWSCall]bool {
	out := map[AWSCall]bool{}
	for _, g := range fn.Grants {
		for _, a := range g.Actions {
			out[AWSCall{g.Resource, a}] = true
		}
	}
	return out
}

// SortedCalls returns the calls of set in the order of their text.
func SortedCalls(set map[AWSCall]bool) []AWSCall {
	return slices.SortedFunc(maps.Keys(set), func(a, b AWSCall) int {
		return strings.Compare(a.String(), b.String())
	})
}

// Recording returns cfg with every AWS call made through its clients
// recorded as made by function. Resources are named by the variable of cfg
// that holds them (a table name, a queue URL).
func Recording(cfg function.Config, name string) function.Config {
	cfg.AWS.APIOptions = append(slices.Clone(cfg.AWS.APIOptions), RecordCalls(name, ResourceNames(cfg)))
	return cfg
}

// ResourceNames maps each table name, queue URL, bucket and key of cfg to
// the variable that holds it.
func ResourceNames(cfg function.Config) map[string]string {
	names := map[string]string{}
	for variable, value := range map[string]string{
		"TABLE_NAME":              cfg.TableName,
		"AUDIT_TABLE_NAME":        cfg.AuditTableName,
		"PAYOUTS_QUEUE_URL":       cfg.PayoutsQueueURL,
		"BULK_PAYOUTS_QUEUE_URL":  cfg.BulkPayoutsQueueURL,
		"WEBHOOKS_QUEUE_URL":      cfg.WebhooksQueueURL,
		"ISSUER_EVENTS_QUEUE_URL": cfg.IssuerEventsQueueURL,
		"FUNDS_QUEUE_URL":         cfg.FundsQueueURL,
		"DOCUMENTS_BUCKET":        cfg.DocumentsBucket,
		"CARD_KEY_ARN":            cfg.CardKeyARN,
		"TOKEN_KEY_A_ARN":         cfg.TokenKeyARNs[0],
		"TOKEN_KEY_B_ARN":         cfg.TokenKeyARNs[1],
		"WEBHOOK_KEY_ARN":         cfg.WebhookKeyARN,
		"USER_POOL_ID":            cfg.UserPoolID,
	} {
		if value != "" {
			names[value] = variable
		}
	}
	// The app client's calls (Cognito's sign-in, which name the client
	// alone) act on its pool.
	if cfg.UserPoolClientID != "" {
		names[cfg.UserPoolClientID] = "USER_POOL_ID"
	}
	return names
}

// RecordCalls is SDK middleware that records each operation as the IAM
// actions it needs, on the resources it names; names maps a table name,
// queue URL or secret id to the variable that holds it, and a deployment
// id or function name to the resource of function.StackResources it is
// in ("@deployment-groups", "@functions").
func RecordCalls(name string, names map[string]string) func(*middleware.Stack) error {
	return func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("RecordAWSCall",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				AWSCalls.add(name, callsOf(awsmiddleware.GetServiceID(ctx), awsmiddleware.GetOperationName(ctx), in.Parameters, names)...)
				return next.HandleInitialize(ctx, in)
			}), middleware.After)
	}
}

// iamPrefixes maps an SDK service id to its IAM action prefix.
var iamPrefixes = map[string]string{"DynamoDB": "dynamodb", "SQS": "sqs", "Secrets Manager": "secretsmanager", "S3": "s3", "KMS": "kms",
	"CodeDeploy": "codedeploy", "Lambda": "lambda", "Cognito Identity Provider": "cognito-idp"}

// iamActions maps an operation whose IAM action has another name to it.
var iamActions = map[string]string{"lambda:Invoke": "lambda:InvokeFunction", "sqs:SendMessageBatch": "sqs:SendMessage"}

// callsOf returns the IAM actions an operation of service needs, each on
// the resource it names. A TransactWriteItems needs the action of each kind
// of item it holds; a Query or Scan of an index needs it on the indexes; an
// object operation of S3 needs it on the bucket's objects ("/*").
// An unknown service's resource is "?", which no grant names.
func callsOf(service, operation string, input any, names map[string]string) []AWSCall {
	name := func(value string) string {
		if v, ok := names[value]; ok {
			return v
		}
		return "unknown resource " + value
	}
	prefix, ok := iamPrefixes[service]
	if !ok {
		return []AWSCall{{"?", strings.ToLower(service) + ":" + operation}}
	}
	switch in := input.(type) {
	case *dynamodb.TransactWriteItemsInput:
		var calls []AWSCall
		for _, it := range in.TransactItems {
			switch {
			case it.Put != nil:
				calls = append(calls, AWSCall{name(*it.Put.TableName), "dynamodb:PutItem"})
			case it.Update != nil:
				calls = append(calls, AWSCall{name(*it.Update.TableName), "dynamodb:UpdateItem"})
			case it.Delete != nil:
				calls = append(calls, AWSCall{name(*it.Delete.TableName), "dynamodb:DeleteItem"})
			case it.ConditionCheck != nil:
				calls = append(calls, AWSCall{name(*it.ConditionCheck.TableName), "dynamodb:ConditionCheckItem"})
			}
		}
		return calls
	case *dynamodb.BatchWriteItemInput:
		return batchCalls(in.RequestItems, "dynamodb:BatchWriteItem", name)
	case *dynamodb.BatchGetItemInput:
		return batchCalls(in.RequestItems, "dynamodb:BatchGetItem", name)
	case *dynamodb.QueryInput:
		if in.IndexName != nil {
			return []AWSCall{{name(*in.TableName) + "/index/*", "dynamodb:Query"}}
		}
	case *dynamodb.ScanInput:
		if in.IndexName != nil {
			return []AWSCall{{name(*in.TableName) + "/index/*", "dynamodb:Scan"}}
		}
	}
	if bucket := StringField(input, "Bucket"); bucket != "" && StringField(input, "Key") != "" {
		return []AWSCall{{name(bucket) + "/*", prefix + ":" + operation}}
	}
	resource := "?"
	for _, field := range []string{"TableName", "QueueUrl", "SecretId", "Bucket", "KeyId", "DeploymentId", "FunctionName", "ClientId", "UserPoolId"} {
		if v := StringField(input, field); v != "" {
			resource = name(v)
		}
	}
	action := prefix + ":" + operation
	if a, ok := iamActions[action]; ok {
		action = a
	}
	return []AWSCall{{resource, action}}
}

// batchCalls returns action on each table of a batch's requests, keyed
// by table name.
func batchCalls[V any](requests map[string]V, action string, name func(string) string) []AWSCall {
	var calls []AWSCall
	for table := range requests {
		calls = append(calls, AWSCall{name(table), action})
	}
	return calls
}

// StringField returns the *string field name of the struct *input, or "".
func StringField(input any, name string) string {
	v := reflect.ValueOf(input)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return ""
	}
	f := v.Elem().FieldByName(name)
	if !f.IsValid() || f.Kind() != reflect.Pointer || f.IsNil() || f.Elem().Kind() != reflect.String {
		return ""
	}
	return f.Elem().String()
}
