package local_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"payments/infra/local/devserver"
	"payments/infra/local/localtest"
	"payments/pkg/app"
	"payments/pkg/function"
	functionbase "payments/pkg/function/base"
	"payments/pkg/function/deploycheck/deploychecktest"
)

// TestSampleEvents feeds every events/<function>/*.json through that
// function's handler, built from pkg/app as its main builds it, against a
// fresh table and queues holding the records the events name
// (localtest.Fixture), and checks what events/<function>/expected.json
// gives the file: the HTTP status for an HTTP function, the number of batch
// item failures for a queue consumer; a scheduled function must return no
// error; a CodeDeploy hook, run against a fake CodeDeploy and Lambda
// (deploychecktest.Sample), must report Succeeded. Each file must decode,
// field for field, into its event type (aws-lambda-go's, or
// function.DeployHookEvent). A queue consumer or scheduled function must
// also log nothing at WARN or above: that is how a message naming a record
// that does not exist is dropped, which would otherwise pass as handled.
func TestSampleEvents(t *testing.T) {
	tpl := localtest.Template(t)
	res := localtest.Resources(t, tpl)
	handlers := localtest.HTTPHandlers(t, tpl, res)
	samples := localtest.SampleEvents(t, localtest.NewFixture(t, tpl, res, handlers))
	if len(samples) == 0 {
		t.Fatal("no sample events under events/")
	}
	warned := &warnings{}
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(warned))
	for _, s := range samples {
		t.Run(s.Function+"/"+s.File, func(t *testing.T) {
			ctx := devserver.LambdaContext(t.Context(), s.Function)
			warned.take()
			switch {
			case handlers[s.Function] != nil:
				var e events.APIGatewayV2HTTPRequest
				decodeStrict(t, s, &e)
				resp, err := handlers[s.Function](ctx, e)
				if err != nil {
					t.Fatalf("%s: %v", s, err)
				}
				if resp.StatusCode != s.Expected {
					t.Errorf("%s: status %d, want %d; body %s", s, resp.StatusCode, s.Expected, resp.Body)
				}
				return
			case app.SQSFunctions[s.Function] != nil:
				h, err := app.SQSFunctions[s.Function](ctx, localtest.FunctionConfig(t, tpl, res, s.Function), functionbase.NewCaches(time.Now))
				if err != nil {
					t.Fatalf("%s: init: %v", s.Function, err)
				}
				var e events.SQSEvent
				decodeStrict(t, s, &e)
				resp, err := h(ctx, e)
				if err != nil {
					t.Fatalf("%s: %v", s, err)
				}
				if len(resp.BatchItemFailures) != s.Expected {
					t.Errorf("%s: %d batch item failures, want %d: %+v", s, len(resp.BatchItemFailures), s.Expected, resp.BatchItemFailures)
				}
			case app.ScheduleFunctions[s.Function] != nil:
				h, err := app.ScheduleFunctions[s.Function](ctx, localtest.FunctionConfig(t, tpl, res, s.Function), functionbase.NewCaches(time.Now))
				if err != nil {
					t.Fatalf("%s: init: %v", s.Function, err)
				}
				var e events.EventBridgeEvent
				decodeStrict(t, s, &e)
				resp, err := h(ctx, e)
				if err != nil {
					t.Errorf("%s: %v", s, err)
				}
				if out, _ := json.Marshal(resp); resp == nil || len(out) < 3 {
					t.Errorf("%s: answered %s: a scheduled function says what it did", s, out)
				}
			case app.HookFunctions[s.Function] != nil:
				// CodeDeploy and the version it deploys, faked.
				fake := deploychecktest.Sample()
				srv := fake.Start()
				defer srv.Close()
				cfg := localtest.FunctionConfig(t, tpl, res, s.Function)
				cfg.CodeDeployEndpoint, cfg.LambdaEndpoint = srv.URL, srv.URL
				h, err := app.HookFunctions[s.Function](ctx, cfg)
				if err != nil {
					t.Fatalf("%s: init: %v", s.Function, err)
				}
				var e function.DeployHookEvent
				decodeStrict(t, s, &e)
				if err := h(ctx, e); err != nil {
					t.Errorf("%s: %v", s, err)
				}
				if r := fake.Reports(); len(r) != 1 || r[0].Status != "Succeeded" {
					t.Errorf("%s: reported %+v, want Succeeded", s, r)
				}
			default:
				t.Fatalf("%s: no function %q in pkg/app", s, s.Function)
			}
			for _, w := range warned.take() {
				t.Errorf("%s: logged %s", s, w)
			}
		})
	}
}

// decodeStrict decodes the sample into v, an event type of aws-lambda-go,
// refusing fields that type does not have: the sample must be the event
// Lambda would deliver.
func decodeStrict(t *testing.T, s localtest.SampleEvent, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(s.Payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: not a %T: %v", s, v, err)
	}
}

// warnings is a log handler that keeps the records at WARN and above and
// drops the rest.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (w *warnings) Handle(_ context.Context, r slog.Record) error {
	msg := r.Level.String() + " " + r.Message
	r.Attrs(func(a slog.Attr) bool {
		msg += fmt.Sprintf(" %s=%v", a.Key, a.Value)
		return true
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, msg)
	return nil
}

func (w *warnings) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w *warnings) WithGroup(string) slog.Handler      { return w }

// take returns the records kept since the last call.
func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	msgs := w.msgs
	w.msgs = nil
	return msgs
}
