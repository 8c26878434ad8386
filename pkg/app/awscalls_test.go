package app

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"payments/pkg/function"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

// TestMain makes the process trust the CA of the tests' document servers
// (trustDocumentCA), runs the package's tests, then checks the AWS calls
// they recorded against function.Functions: every call a function made is granted
// to it, and, when the whole package ran and passed, every granted action
// was made at least once (otherwise it is a permission no code uses).
func TestMain(m *testing.M) {
	cleanup, err := trustDocumentCA()
	if err != nil {
		fmt.Fprintln(os.Stderr, "trust the document servers' CA:", err)
		os.Exit(1)
	}
	code := m.Run()
	cleanup()
	full := code == 0 && flag.Lookup("test.run").Value.String() == "" && flag.Lookup("test.skip").Value.String() == ""
	if problems := awsCalls.check(function.Functions, full); len(problems) > 0 {
		fmt.Fprintln(os.Stderr, "AWS calls of the functions (function.Functions):")
		for _, p := range problems {
			fmt.Fprintln(os.Stderr, "  "+p)
		}
		code = 1
	}
	os.Exit(code)
}

// awsCall is one action on one resource, named as in a function.Grant.
type awsCall struct {
	Resource string // "TABLE_NAME", "TABLE_NAME/index/*", "PAYOUTS_QUEUE_URL", …
	Action   string // "dynamodb:PutItem", …
}

func (c awsCall) String() string { return c.Action + " on " + c.Resource }

// callLog holds the AWS calls each function made during the tests.
type callLog struct {
	mu    sync.Mutex
	calls map[string]map[awsCall]bool // function -> calls
}

// awsCalls is what the package's tests record.
var awsCalls = &callLog{calls: map[string]map[awsCall]bool{}}

func (l *callLog) add(name string, calls ...awsCall) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.calls[name] == nil {
		l.calls[name] = map[awsCall]bool{}
	}
	for _, c := range calls {
		l.calls[name][c] = true
	}
}

// check returns a line for each recorded call that fns does not grant to
// its function and, when all is set, for each granted action never called.
func (l *callLog) check(fns map[string]function.Function, all bool) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var problems []string
	for _, name := range slices.Sorted(maps.Keys(l.calls)) {
		granted := grantedCalls(fns[name])
		for _, c := range sortedCalls(l.calls[name]) {
			if !granted[c] {
				problems = append(problems, fmt.Sprintf("%s calls %s, which function.Functions does not grant it", name, c))
			}
		}
	}
	if !all {
		return problems
	}
	for _, name := range slices.Sorted(maps.Keys(fns)) {
		for _, c := range sortedCalls(grantedCalls(fns[name])) {
			if !l.calls[name][c] {
				problems = append(problems, fmt.Sprintf("%s is granted %s, which no test saw it call: an unused permission, or a path to test", name, c))
			}
		}
	}
	return problems
}

// grantedCalls returns every action on every resource fn's grants allow.
func grantedCalls(fn function.Function) map[awsCall]bool {
	out := map[awsCall]bool{}
	for _, g := range fn.Grants {
		for _, a := range g.Actions {
			out[awsCall{g.Resource, a}] = true
		}
	}
	return out
}

func sortedCalls(set map[awsCall]bool) []awsCall {
	return slices.SortedFunc(maps.Keys(set), func(a, b awsCall) int {
		return strings.Compare(a.String(), b.String())
	})
}

// recording returns cfg with every AWS call made through its clients
// recorded as made by function. Resources are named by the variable of cfg
// that holds them (a table name, a queue URL).
func recording(cfg function.Config, name string) function.Config {
	cfg.AWS.APIOptions = append(slices.Clone(cfg.AWS.APIOptions), recordCalls(name, resourceNames(cfg)))
	return cfg
}

// resourceNames maps each table name, queue URL, bucket and key of cfg to
// the variable that holds it.
func resourceNames(cfg function.Config) map[string]string {
	names := map[string]string{}
	for variable, value := range map[string]string{
		"TABLE_NAME":              cfg.TableName,
		"PAYOUTS_QUEUE_URL":       cfg.PayoutsQueueURL,
		"WEBHOOKS_QUEUE_URL":      cfg.WebhooksQueueURL,
		"ISSUER_EVENTS_QUEUE_URL": cfg.IssuerEventsQueueURL,
		"FUNDS_QUEUE_URL":         cfg.FundsQueueURL,
		"DOCUMENTS_BUCKET":        cfg.DocumentsBucket,
		"CARD_KEY_ARN":            cfg.CardKeyARN,
	} {
		if value != "" {
			names[value] = variable
		}
	}
	return names
}

// recordCalls is SDK middleware that records each operation as the IAM
// actions it needs, on the resources it names; names maps a table name,
// queue URL or secret id to the variable that holds it.
func recordCalls(name string, names map[string]string) func(*middleware.Stack) error {
	return func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("RecordAWSCall",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				awsCalls.add(name, callsOf(awsmiddleware.GetServiceID(ctx), awsmiddleware.GetOperationName(ctx), in.Parameters, names)...)
				return next.HandleInitialize(ctx, in)
			}), middleware.After)
	}
}

// iamPrefixes maps an SDK service id to its IAM action prefix.
var iamPrefixes = map[string]string{"DynamoDB": "dynamodb", "SQS": "sqs", "Secrets Manager": "secretsmanager", "S3": "s3", "KMS": "kms"}

// callsOf returns the IAM actions an operation of service needs, each on
// the resource it names. A TransactWriteItems needs the action of each kind
// of item it holds; a Query or Scan of an index needs it on the indexes; an
// object operation of S3 needs it on the bucket's objects ("/*").
// An unknown service's resource is "?", which no grant names.
func callsOf(service, operation string, input any, names map[string]string) []awsCall {
	name := func(value string) string {
		if v, ok := names[value]; ok {
			return v
		}
		return "unknown resource " + value
	}
	prefix, ok := iamPrefixes[service]
	if !ok {
		return []awsCall{{"?", strings.ToLower(service) + ":" + operation}}
	}
	switch in := input.(type) {
	case *dynamodb.TransactWriteItemsInput:
		var calls []awsCall
		for _, it := range in.TransactItems {
			switch {
			case it.Put != nil:
				calls = append(calls, awsCall{name(*it.Put.TableName), "dynamodb:PutItem"})
			case it.Update != nil:
				calls = append(calls, awsCall{name(*it.Update.TableName), "dynamodb:UpdateItem"})
			case it.Delete != nil:
				calls = append(calls, awsCall{name(*it.Delete.TableName), "dynamodb:DeleteItem"})
			case it.ConditionCheck != nil:
				calls = append(calls, awsCall{name(*it.ConditionCheck.TableName), "dynamodb:ConditionCheckItem"})
			}
		}
		return calls
	case *dynamodb.QueryInput:
		if in.IndexName != nil {
			return []awsCall{{name(*in.TableName) + "/index/*", "dynamodb:Query"}}
		}
	case *dynamodb.ScanInput:
		if in.IndexName != nil {
			return []awsCall{{name(*in.TableName) + "/index/*", "dynamodb:Scan"}}
		}
	}
	if bucket := stringField(input, "Bucket"); bucket != "" && stringField(input, "Key") != "" {
		return []awsCall{{name(bucket) + "/*", prefix + ":" + operation}}
	}
	resource := "?"
	for _, field := range []string{"TableName", "QueueUrl", "SecretId", "Bucket", "KeyId"} {
		if v := stringField(input, field); v != "" {
			resource = name(v)
		}
	}
	return []awsCall{{resource, prefix + ":" + operation}}
}

// stringField returns the *string field name of the struct *input, or "".
func stringField(input any, name string) string {
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
