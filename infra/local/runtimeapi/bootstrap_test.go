package runtimeapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"payments/infra/local/devserver"
	"payments/infra/local/localtest"
	"payments/infra/local/runtimeapi"
	"payments/infra/local/samtemplate"
)

// TestBootstraps builds each function's real bootstrap binary as `make build`
// does (for this machine's OS and architecture), starts it against the
// Runtime API emulator with the environment the template gives it, pointed
// at a fresh table and queues, and invokes it with one of its sample events.
// A binary that fails at init, mis-reads its environment or does not answer
// fails the test.
func TestBootstraps(t *testing.T) {
	tpl := localtest.Template(t)
	res := localtest.Resources(t, tpl)
	token := localtest.Token(t, localtest.HTTPHandlers(t, tpl, res))
	samples := map[string]localtest.SampleEvent{}
	for _, s := range localtest.SampleEvents(t, token) {
		if _, ok := samples[s.Function]; !ok {
			samples[s.Function] = s
		}
	}

	bin := t.TempDir()
	build := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-o", bin+string(filepath.Separator), "./functions/...")
	build.Dir = localtest.Root(t)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./functions/...: %v\n%s", err, out)
	}

	for _, fn := range tpl.Functions() {
		t.Run(fn.Dir, func(t *testing.T) {
			t.Parallel()
			s, ok := samples[fn.Dir]
			if !ok {
				s = syntheticEvent(t, fn)
			}
			out, err := invokeBinary(t, filepath.Join(bin, fn.Dir), tpl, fn, res, s.Payload)
			if err != nil {
				t.Fatal(err)
			}
			if len(fn.Routes) == 0 {
				return // a queue or schedule function: answering at all is the check
			}
			var resp events.APIGatewayV2HTTPResponse
			if err := json.Unmarshal(out, &resp); err != nil {
				t.Fatalf("%s: not an HTTP API v2 response: %v: %s", s, err, out)
			}
			if s.Expected != 0 && resp.StatusCode != s.Expected {
				t.Errorf("%s: status %d, want %d; body %s", s, resp.StatusCode, s.Expected, resp.Body)
			}
			if resp.StatusCode < 200 || resp.StatusCode > 599 {
				t.Errorf("%s: status %d", s, resp.StatusCode)
			}
		})
	}
}

// syntheticEvent returns an event for a function without sample events:
// an unauthenticated request to its first route, or an empty SQS or
// scheduled event.
func syntheticEvent(t *testing.T, fn samtemplate.Function) localtest.SampleEvent {
	t.Logf("events/%s has no sample event: using a synthetic one", fn.Dir)
	var v any
	switch {
	case len(fn.Routes) > 0:
		r := httptest.NewRequest(fn.Routes[0].Method, fn.Routes[0].Path, nil)
		v = devserver.NewEvent(r, nil, fn.Routes[0].Method+" "+fn.Routes[0].Path, nil)
	case len(fn.Queues) > 0:
		v = events.SQSEvent{Records: []events.SQSMessage{}}
	default:
		v = devserver.NewScheduledEvent(fn.Dir, time.Now())
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return localtest.SampleEvent{Function: fn.Dir, File: "(synthetic)", Payload: b}
}

// invokeBinary runs the bootstrap at path as Lambda would and returns its
// response to payload.
func invokeBinary(t *testing.T, path string, tpl *samtemplate.Template, fn samtemplate.Function, res devserver.Resources, payload []byte) ([]byte, error) {
	t.Helper()
	api := runtimeapi.New(devserver.FunctionARN(fn.Dir))
	api.Timeout = time.Duration(devserver.FunctionInt(tpl, fn, "Timeout", 3)) * time.Second
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: api}
	go srv.Serve(l)
	defer srv.Close()
	defer api.Close()

	env, err := devserver.FunctionEnv(tpl, fn, res)
	if err != nil {
		t.Fatal(err)
	}
	env["AWS_LAMBDA_RUNTIME_API"] = l.Addr().String()
	cmd := exec.Command(path)
	for k, v := range env { // only what Lambda would set: nothing inherited
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("output of %s:\n%s", filepath.Base(path), logs.String())
		}
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := api.Invoke(ctx, payload)
		done <- result{out, err}
	}()
	select {
	case r := <-done:
		return r.out, r.err
	case err := <-exited:
		exited <- err // for the deferred wait
		t.Fatalf("%s exited before answering: %v", filepath.Base(path), err)
		return nil, nil
	}
}
