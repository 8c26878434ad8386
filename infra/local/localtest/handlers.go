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

	"github.com/aws/aws-lambda-go/events"

	"payments/infra/local/devserver"
	"payments/infra/local/samtemplate"
	"payments/pkg/app"
)

// FunctionConfig returns the app.Config that the function in functions/dir
// reads from the environment the template gives it.
func FunctionConfig(t testing.TB, tpl *samtemplate.Template, res devserver.Resources, dir string) app.Config {
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
	return app.Config{}
}

// HTTPHandlers builds the handler of every HTTP function of the template
// that app.HTTPFunctions knows, each from the Config its template
// environment gives it, keyed by folder name.
func HTTPHandlers(t testing.TB, tpl *samtemplate.Template, res devserver.Resources) map[string]app.HTTPHandler {
	t.Helper()
	hs := map[string]app.HTTPHandler{}
	for _, fn := range tpl.Functions() {
		newHandler := app.HTTPFunctions[fn.Dir]
		if len(fn.Routes) == 0 || newHandler == nil {
			continue
		}
		var err error
		if hs[fn.Dir], err = newHandler(context.Background(), FunctionConfig(t, tpl, res, fn.Dir)); err != nil {
			t.Fatalf("%s: init: %v", fn.Dir, err)
		}
	}
	return hs
}

// Call sends a request through h as API Gateway would and returns the
// response; body is sent as JSON when not nil.
func Call(t testing.TB, h app.HTTPHandler, method, path string, header map[string]string, body any) events.APIGatewayV2HTTPResponse {
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

// Token creates a company through the admin function, approves it, and
// returns an access token for it minted by the auth function.
func Token(t testing.TB, hs map[string]app.HTTPHandler) string {
	t.Helper()
	admin, auth := hs["admin"], hs["auth"]
	if admin == nil || auth == nil {
		t.Fatal("minting a token needs the admin and auth functions")
	}
	key := map[string]string{"X-Admin-Key": AdminAPIKey}
	resp := Call(t, admin, "POST", "/api/v1/admin/companies", key, map[string]string{"name": "Local Test Company"})
	var created struct {
		Data struct {
			ID        string `json:"id"`
			ClientID  string `json:"client_id"`
			ClientKey string `json:"client_key"`
		} `json:"data"`
	}
	if resp.StatusCode != http.StatusCreated || json.Unmarshal([]byte(resp.Body), &created) != nil || created.Data.ClientKey == "" {
		t.Fatalf("create company: %d %s", resp.StatusCode, resp.Body)
	}
	resp = Call(t, admin, "PATCH", "/api/v1/admin/companies/"+created.Data.ID, key, map[string]string{"kyb_status": "APPROVED"})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("approve company: %d %s", resp.StatusCode, resp.Body)
	}
	resp = Call(t, auth, "POST", "/api/v1/auth/token", nil, map[string]string{
		"client_id": created.Data.ClientID, "client_key": created.Data.ClientKey,
	})
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(resp.Body), &tok) != nil || tok.AccessToken == "" {
		t.Fatalf("mint token: %d %s", resp.StatusCode, resp.Body)
	}
	return tok.AccessToken
}

// SampleEvent is one file of events/<function>/.
type SampleEvent struct {
	Function string // the folder name under events/ (and functions/)
	File     string // the file name, e.g. "create.json"
	Payload  []byte // the event, with "Bearer TOKEN" replaced
	// Expected is the value events/<function>/expected.json gives File
	// (an HTTP status), or 0 when it gives none.
	Expected int
}

// SampleEvents reads every events/<function>/*.json but expected.json,
// sorted, replacing the placeholder "Bearer TOKEN" with "Bearer "+token. It
// fails t when expected.json names a file that does not exist.
func SampleEvents(t testing.TB, token string) []SampleEvent {
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
		if b, err := os.ReadFile(filepath.Join(dir, "expected.json")); err == nil {
			if err := json.Unmarshal(b, &expected); err != nil {
				t.Fatalf("events/%s/expected.json: %v", d.Name(), err)
			}
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		sort.Strings(files)
		seen := map[string]bool{}
		for _, f := range files {
			name := filepath.Base(f)
			if name == "expected.json" {
				continue
			}
			seen[name] = true
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			b = bytes.ReplaceAll(b, []byte("Bearer TOKEN"), []byte("Bearer "+token))
			out = append(out, SampleEvent{Function: d.Name(), File: name, Payload: b, Expected: expected[name]})
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
