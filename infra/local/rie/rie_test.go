package rie_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"payments/infra/local/localtest"
	"payments/infra/local/rie"
)

// TestMain serves the sample identity documents the sample events enrol
// customers from (TestBootstraps), and lets the test binary stand in for a
// bootstrap: with RIE_ROLE set it is a function that echoes its invocation
// ("echo"), fails it ("error"), never answers ("block") or exits at init
// ("exit").
func TestMain(m *testing.M) {
	switch os.Getenv("RIE_ROLE") {
	case "":
		localtest.Main(m)
	case "exit":
		os.Exit(3)
	case "error":
		lambda.Start(func(context.Context, json.RawMessage) (string, error) { return "", errors.New("boom") })
	case "block":
		lambda.Start(func(ctx context.Context, _ json.RawMessage) (string, error) { <-ctx.Done(); return "", ctx.Err() })
	case "echo":
		lambda.Start(func(ctx context.Context, in json.RawMessage) (echo, error) {
			lc, _ := lambdacontext.FromContext(ctx)
			deadline, _ := ctx.Deadline()
			return echo{
				Payload: in, RequestID: lc.AwsRequestID, FunctionARN: lc.InvokedFunctionArn,
				DeadlineIn: time.Until(deadline), Memory: os.Getenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE"),
				Mine: os.Getenv("MINE"), Home: os.Getenv("HOME"),
			}, nil
		})
	}
}

// echo is what the "echo" function answers: what it was given.
type echo struct {
	Payload     json.RawMessage
	RequestID   string
	FunctionARN string
	DeadlineIn  time.Duration
	Memory      string
	Mine        string
	Home        string // inherited by the test: must not reach the function
}

// start runs the test binary as a function in role under the emulator.
func start(t *testing.T, role string) *rie.Instance {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inst, err := rie.Start(ctx, rie.Options{
		Emulator:  rie.Binary(localtest.Root(t)),
		Bootstrap: self,
		Env: map[string]string{
			"RIE_ROLE": role, "MINE": "mine", "AWS_LAMBDA_FUNCTION_NAME": "EchoFunction",
			"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256", "AWS_REGION": "us-east-1",
			"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local",
		},
		Timeout: 3 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		out := inst.Stop()
		if t.Failed() {
			t.Logf("output:\n%s", out)
		}
	})
	return inst
}

func invoke(t *testing.T, inst *rie.Instance, payload string) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return inst.Invoke(ctx, []byte(payload))
}

func TestInvoke(t *testing.T) {
	inst := start(t, "echo")
	var ids []string
	for i := range 2 { // the first starts the bootstrap, the second finds it waiting
		out, err := invoke(t, inst, `{"in":`+strconv.Itoa(i)+`}`)
		if err != nil {
			t.Fatalf("invocation %d: %v", i, err)
		}
		var got echo
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("invocation %d: %v: %s", i, err, out)
		}
		if string(got.Payload) != `{"in":`+strconv.Itoa(i)+`}` {
			t.Errorf("invocation %d: payload %s", i, got.Payload)
		}
		if got.RequestID == "" || got.FunctionARN != "arn:aws:lambda:us-east-1:012345678912:function:EchoFunction" {
			t.Errorf("invocation %d: request id %q, function ARN %q", i, got.RequestID, got.FunctionARN)
		}
		if got.DeadlineIn <= 0 || got.DeadlineIn > 3*time.Second {
			t.Errorf("invocation %d: deadline in %v, not within the timeout", i, got.DeadlineIn)
		}
		if got.Memory != "256" || got.Mine != "mine" || got.Home != "" {
			t.Errorf("invocation %d: environment memory %q, MINE %q, HOME %q: want the one given, nothing inherited", i, got.Memory, got.Mine, got.Home)
		}
		ids = append(ids, got.RequestID)
	}
	if ids[0] == ids[1] {
		t.Errorf("both invocations had the request id %s", ids[0])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if d, err := inst.Init(ctx); err != nil || d <= 0 {
		t.Errorf("Init = %v, %v; want the init's duration", d, err)
	}
}

func TestFunctionError(t *testing.T) {
	inst := start(t, "error")
	_, err := invoke(t, inst, `{}`)
	var fe *rie.FunctionError
	if !errors.As(err, &fe) || fe.Message != "boom" || fe.Type != "errorString" {
		t.Fatalf("err = %v, want the function's error boom", err)
	}
}

func TestInitError(t *testing.T) {
	inst := start(t, "exit")
	_, err := invoke(t, inst, `{}`)
	var fe *rie.FunctionError
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v, want a function error", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := inst.Init(ctx); !errors.As(err, &fe) {
		t.Errorf("Init: err = %v, want the init's failure", err)
	}
}

func TestInvokeContextAndStop(t *testing.T) {
	inst := start(t, "block")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := inst.Invoke(ctx, []byte(`{}`)); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("no answer: err = %v, want the context's", err)
	}
	inst.Stop()
	if _, err := invoke(t, inst, `{}`); !errors.Is(err, rie.ErrExited) {
		t.Errorf("stopped: err = %v, want ErrExited", err)
	}
}

func TestNotInstalled(t *testing.T) {
	_, err := rie.Start(context.Background(), rie.Options{Emulator: t.TempDir() + "/aws-lambda-rie"})
	if !errors.Is(err, rie.ErrNotInstalled) {
		t.Errorf("err = %v, want ErrNotInstalled", err)
	}
}
