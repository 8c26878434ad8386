package rie_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"payments/infra/local/devserver"
	"payments/infra/local/localtest"
	"payments/infra/local/rie"
	"payments/infra/local/samtemplate"
	"payments/pkg/app"
	"payments/pkg/function"
	"payments/pkg/function/deploycheck/deploychecktest"
)

// TestBootstraps builds each function's real bootstrap binary with `make
// build`, its flags and tags (for this machine's OS and architecture), starts it under AWS's
// Runtime Interface Emulator with the environment the template gives it, pointed
// at a fresh table and queues holding the records the sample events name
// (localtest.Fixture) (the deploy-check function at a fake CodeDeploy and
// Lambda, deploychecktest.Sample), asks it for its health
// (function.HealthCheckEvent) and invokes it with each of its sample events
// in turn. Each answer must be the one events/<function>/expected.json gives:
// the HTTP status, the number of batch item failures of a queue consumer,
// no error from a scheduled function; and a queue consumer or scheduled
// function must log nothing at WARN or above (a dropped message). A binary
// that fails at init, mis-reads its environment or does not answer fails
// the test.
func TestBootstraps(t *testing.T) {
	tpl := localtest.Template(t)
	res := localtest.Resources(t, tpl)
	fixture := localtest.NewFixture(t, tpl, res, localtest.HTTPHandlers(t, tpl, res))
	samples := map[string][]localtest.SampleEvent{}
	for _, s := range localtest.SampleEvents(t, fixture) {
		samples[s.Function] = append(samples[s.Function], s)
	}

	bin := t.TempDir()
	build := exec.Command("make", "build", "LAMBDA_ENV=CGO_ENABLED=0", "BIN_DIR="+bin)
	build.Dir = localtest.Root(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}

	for _, fn := range tpl.Functions() {
		t.Run(fn.Dir, func(t *testing.T) {
			t.Parallel()
			if len(samples[fn.Dir]) == 0 {
				t.Fatalf("events/%s has no sample event", fn.Dir)
			}
			extra := map[string]string{}
			var hook *deploychecktest.Fake
			if app.HookFunctions[fn.Dir] != nil { // CodeDeploy and the version it deploys, faked
				hook = deploychecktest.Sample()
				srv := hook.Start()
				t.Cleanup(srv.Close)
				extra["AWS_ENDPOINT_URL_CODEDEPLOY"], extra["AWS_ENDPOINT_URL_LAMBDA"] = srv.URL, srv.URL
			}
			inst := startBinary(t, filepath.Join(bin, fn.Dir, "bootstrap"), tpl, fn, res, extra)
			checkHealth(t, inst, fn.Dir)
			for _, s := range samples[fn.Dir] {
				out, err := inst.invoke(t, s.Payload)
				if err != nil {
					t.Errorf("%s: %v", s, err)
					continue
				}
				checkAnswer(t, fn, s, out)
			}
			if hook != nil {
				if r := hook.Reports(); len(r) != len(samples[fn.Dir]) || r[0].Status != "Succeeded" {
					t.Errorf("%s reported %+v, want Succeeded for each sample", fn.Dir, r)
				}
			}
			if len(fn.Routes) > 0 {
				return
			}
			sc := bufio.NewScanner(bytes.NewReader(inst.stop()))
			for sc.Scan() {
				if warnLine.Match(sc.Bytes()) {
					t.Errorf("events/%s: logged %s", fn.Dir, sc.Text())
				}
			}
		})
	}
}

// warnLine matches a log line at WARN or above, in the JSON or the text
// format.
var warnLine = regexp.MustCompile(`"level":"(WARN|ERROR)|level=(WARN|ERROR)`)

// checkHealth asks the instance of function name for its health
// (function.HealthCheckEvent): the binary's Start must answer it.
func checkHealth(t *testing.T, inst *instance, name string) {
	t.Helper()
	out, err := inst.invoke(t, []byte(function.HealthCheckEvent))
	if err != nil {
		t.Fatalf("health check: %v", err)
	}
	var h function.Health
	if err := json.Unmarshal(out, &h); err != nil || h != (function.Health{Status: function.HealthOK, Function: name}) {
		t.Errorf("health check answered %s, want status %q and function %q", out, function.HealthOK, name)
	}
}

// checkAnswer checks fn's answer out to s against s.Expected.
func checkAnswer(t *testing.T, fn samtemplate.Function, s localtest.SampleEvent, out []byte) {
	t.Helper()
	switch {
	case len(fn.Routes) > 0:
		var resp events.APIGatewayV2HTTPResponse
		if err := json.Unmarshal(out, &resp); err != nil {
			t.Errorf("%s: not an HTTP API v2 response: %v: %s", s, err, out)
		} else if resp.StatusCode != s.Expected {
			t.Errorf("%s: status %d, want %d; body %s", s, resp.StatusCode, s.Expected, resp.Body)
		}
	case len(fn.Queues) > 0:
		var resp events.SQSEventResponse
		if err := json.Unmarshal(out, &resp); err != nil {
			t.Errorf("%s: not an SQS batch response: %v: %s", s, err, out)
		} else if len(resp.BatchItemFailures) != s.Expected {
			t.Errorf("%s: %d batch item failures, want %d: %+v", s, len(resp.BatchItemFailures), s.Expected, resp.BatchItemFailures)
		}
	default: // a scheduled function answered without an error
		if s.Expected != 0 {
			t.Errorf("%s: events/%s/expected.json gives %d; a scheduled function can only answer without an error (0)", s, fn.Dir, s.Expected)
		}
	}
}

// instance is a function's bootstrap running under its own Runtime
// Interface Emulator, as one Lambda instance.
type instance struct {
	name string
	rie  *rie.Instance
}

// startBinary starts the bootstrap at path as Lambda would, with only the
// environment the template gives fn, and extra; it is stopped when the test
// ends.
func startBinary(t *testing.T, path string, tpl *samtemplate.Template, fn samtemplate.Function, res devserver.Resources, extra map[string]string) *instance {
	t.Helper()
	env, err := devserver.FunctionEnv(tpl, fn, res)
	if err != nil {
		t.Fatal(err)
	}
	maps.Copy(env, extra)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inst, err := rie.Start(ctx, rie.Options{
		Emulator:  rie.Binary(localtest.Root(t)),
		Bootstrap: path,
		Env:       env, // only what Lambda would set: nothing inherited
		Timeout:   time.Duration(devserver.FunctionInt(tpl, fn, "Timeout", 3)) * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		logs := inst.Stop()
		if t.Failed() {
			t.Logf("output of %s:\n%s", fn.Dir, logs)
		}
	})
	return &instance{name: fn.Dir, rie: inst}
}

// invoke hands payload to the instance and returns its answer.
func (inst *instance) invoke(t *testing.T, payload []byte) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := inst.rie.Invoke(ctx, payload)
	if errors.Is(err, rie.ErrExited) {
		t.Fatalf("%s exited before answering: %v", inst.name, err)
	}
	return out, err
}

// stop stops the instance and returns all it wrote.
func (inst *instance) stop() []byte { return inst.rie.Stop() }
