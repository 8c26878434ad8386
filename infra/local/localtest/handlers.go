package localtest

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"payments/infra/local/devserver"
	"payments/infra/local/samples"
	"payments/infra/local/samtemplate"
	"payments/pkg/app"
	"payments/pkg/function"
	"payments/pkg/function/base"
)

// FunctionConfig returns the function.Config that the function in functions/dir
// reads from the environment the template gives it.
func FunctionConfig(t testing.TB, tpl *samtemplate.Template, res devserver.Resources, dir string) function.Config {
	t.Helper()
	for _, fn := range tpl.Functions() {
		if fn.Dir != dir {
			continue
		}
		env, err := devserver.FunctionEnv(tpl, fn, res)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := devserver.Config(context.Background(), dir, env)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		return cfg
	}
	t.Fatalf("no function with CodeUri functions/%s in the template", dir)
	return function.Config{}
}

// HTTPHandlers builds the handler of every HTTP function of the template
// that app.HTTPFunctions knows, each from the Config its template
// environment gives it, keyed by folder name. They share one set of caches,
// which lives as long as the handlers.
func HTTPHandlers(t testing.TB, tpl *samtemplate.Template, res devserver.Resources) map[string]function.HTTPHandler {
	t.Helper()
	hs := map[string]function.HTTPHandler{}
	caches := base.NewCaches(time.Now)
	for _, fn := range tpl.Functions() {
		newHandler := app.HTTPFunctions[fn.Dir].New
		if len(fn.Routes) == 0 || newHandler == nil {
			continue
		}
		var err error
		if hs[fn.Dir], err = newHandler(context.Background(), FunctionConfig(t, tpl, res, fn.Dir), caches); err != nil {
			t.Fatalf("%s: init: %v", fn.Dir, err)
		}
	}
	return hs
}

// Call sends a request through h as API Gateway would and returns the
// response; body is sent as JSON when not nil.
func Call(t testing.TB, h function.HTTPHandler, method, path string, header map[string]string, body any) events.APIGatewayV2HTTPResponse {
	t.Helper()
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			t.Fatal(err)
		}
	}
	r, err := http.NewRequest(method, "http://127.0.0.1:3000"+path, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	r.RemoteAddr = "127.0.0.1:40000"
	r.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		r.Header.Set(k, v)
	}
	// The route key does not matter to the handlers: their own mux routes.
	e := devserver.NewEvent(r, b, method+" "+path, nil)
	resp, err := h(devserver.LambdaContext(context.Background(), "test"), e)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp
}

// SampleEvent is one file of events/<function>/.
type SampleEvent struct {
	Function string // the folder name under events/ (and functions/)
	File     string // the file name, e.g. "create.json"
	Payload  []byte // the event, its placeholders replaced
	// Expected is the value events/<function>/expected.json gives File: the
	// HTTP status of an HTTP function's answer, the number of batch item
	// failures of a queue consumer's, 0 for a scheduled function (which
	// answers nothing but an error).
	Expected int
}

// SampleEvents reads every events/<function>/*.json but expected.json,
// sorted, replacing the placeholders (Fixture.Placeholders) with the
// records of f, then the placeholder of the issuer's signature
// (samples.IssuerSignature) with the signature of the body, made now with
// IssuerWebhookSecret. It fails t when expected.json gives no value for a
// file or names a file that does not exist.
func SampleEvents(t testing.TB, f *Fixture) []SampleEvent {
	t.Helper()
	root := filepath.Join(Root(t), "events")
	dirs, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var out []SampleEvent
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		dir := filepath.Join(root, d.Name())
		expected := map[string]int{}
		b, err := os.ReadFile(filepath.Join(dir, "expected.json"))
		if err != nil {
			t.Fatalf("events/%s: %v", d.Name(), err)
		}
		if err := json.Unmarshal(b, &expected); err != nil {
			t.Fatalf("events/%s/expected.json: %v", d.Name(), err)
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		sort.Strings(files)
		seen := map[string]bool{}
		for _, file := range files {
			name := filepath.Base(file)
			if name == "expected.json" {
				continue
			}
			seen[name] = true
			want, ok := expected[name]
			if !ok {
				t.Errorf("events/%s/expected.json gives no value for %s", d.Name(), name)
			}
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			for placeholder, id := range f.Placeholders() {
				b = bytes.ReplaceAll(b, []byte(placeholder), []byte(id))
			}
			if b, err = samples.SignIssuerEvent(b, IssuerWebhookSecret, time.Now()); err != nil {
				t.Fatalf("events/%s/%s: %v", d.Name(), name, err)
			}
			out = append(out, SampleEvent{Function: d.Name(), File: name, Payload: b, Expected: want})
		}
		for name := range expected {
			if !seen[name] {
				t.Errorf("events/%s/expected.json names %s, which does not exist", d.Name(), name)
			}
		}
	}
	return out
}

// String names the event as events/<function>/<file>.
func (e SampleEvent) String() string {
	return "events/" + e.Function + "/" + e.File
}
