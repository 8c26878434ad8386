package function_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"payments/infra/local/samtemplate"
	"payments/pkg/app"
	"payments/pkg/app/apptest"
)

// TestTemplateRoutesReachHandlers sends a request for every route of
// template.yaml to the handler of the function the template wires it to, and
// checks that the function's router knows the route: an unknown route
// answers ROUTE_NOT_FOUND or METHOD_NOT_ALLOWED, which a registered one never does
// (it answers the guard's 401, a validation 400 or its own 404 code).
func TestTemplateRoutesReachHandlers(t *testing.T) {
	tpl, err := samtemplate.Load("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	env := apptest.NewAuthTestEnv(t)
	for _, fn := range tpl.Functions() {
		if len(fn.Routes) == 0 {
			continue
		}
		httpFn, ok := app.HTTPFunctions[fn.Dir]
		if !ok {
			t.Errorf("%s: functions/%s has no constructor in HTTPFunctions", fn.LogicalID, fn.Dir)
			continue
		}
		h, err := httpFn.New(context.Background(), apptest.Recording(env.Cfg, fn.Dir), env.Caches)
		if err != nil {
			t.Fatalf("%s: %v", fn.LogicalID, err)
		}
		for _, r := range fn.Routes {
			if r.Path == "$default" {
				continue // it answers ROUTE_NOT_FOUND by design: TestDefaultRoute
			}
			t.Run(r.Method+" "+r.Path, func(t *testing.T) {
				path := r.Path
				for strings.Contains(path, "{") {
					i, j := strings.Index(path, "{"), strings.Index(path, "}")
					path = path[:i] + uuid.NewString() + path[j+1:]
				}
				res := apptest.AuthTestCall(t, h, apptest.AuthTestEvent(r.Method, path, "10.9.9.9", nil, "{}"))
				var body struct{ Code string }
				json.Unmarshal([]byte(res.Body), &body)
				if body.Code == "ROUTE_NOT_FOUND" || body.Code == "METHOD_NOT_ALLOWED" {
					t.Fatalf("function %s does not serve it: %d %s", fn.Dir, res.StatusCode, res.Body)
				}
			})
		}
	}
}

// routesDoc is what docs/routes.md says.
type routesDoc struct {
	// spec maps each route of the spec ("GET /api/v1/wallets") to the
	// function that serves it, or to "" when it is not built yet.
	spec map[string]string
	// sections holds the spec sections the rows cite ("4.1", …).
	sections map[string]bool
	// additions maps each route we add to its function.
	additions map[string]string
	// prefixes maps a path prefix ("/api/v1/admin/") to the function that
	// serves every route under it.
	prefixes map[string]string
}

// routeKey is r as docs/routes.md names it: "GET /api/v1/wallets" or
// "$default".
func routeKey(r samtemplate.Route) string {
	if r.Path == "$default" {
		return r.Path
	}
	return r.Method + " " + r.Path
}

// readRoutesDoc parses the tables of docs/routes.md: the spec's, our
// additions under /api/v1 and our routes outside the API, whose paths are
// taken as written.
func readRoutesDoc(t *testing.T, file string) routesDoc {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	doc := routesDoc{spec: map[string]string{}, sections: map[string]bool{}, additions: map[string]string{}, prefixes: map[string]string{}}
	table := ""
	for n, line := range strings.Split(string(b), "\n") {
		where := fmt.Sprintf("%s:%d", file, n+1)
		switch {
		case line == "## The spec's routes":
			table = "spec"
			continue
		case line == "## Our additions":
			table = "additions"
			continue
		case line == "## Outside the API":
			table = "outside"
			continue
		case strings.HasPrefix(line, "#"):
			table = ""
			continue
		case table == "" || !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| § ") || strings.HasPrefix(line, "| route "):
			continue
		}
		var cells []string
		for c := range strings.SplitSeq(strings.Trim(line, "|"), "|") {
			cells = append(cells, strings.TrimSpace(c))
		}
		if table == "spec" {
			if len(cells) != 3 {
				t.Fatalf("%s: want | § | route | served by |, got %q", where, line)
			}
			method, path, ok := strings.Cut(strings.Trim(cells[1], "`"), " ")
			if !ok {
				t.Fatalf("%s: route %q is not `METHOD /path`", where, cells[1])
			}
			route := method + " /api/v1" + path
			fn := ""
			if reason, gap := strings.CutPrefix(cells[2], "not built yet: "); gap {
				if reason == "" {
					t.Fatalf("%s: say why %s is not built yet", where, route)
				}
			} else if fn = strings.Trim(cells[2], "`"); cells[2] != "`"+fn+"`" || fn == "" || strings.Contains(fn, " ") {
				t.Fatalf("%s: served by %q: want `function` or \"not built yet: <why>\"", where, cells[2])
			}
			if _, dup := doc.spec[route]; dup {
				t.Fatalf("%s: %s is listed twice", where, route)
			}
			doc.spec[route] = fn
			doc.sections[cells[0]] = true
			continue
		}
		if len(cells) != 3 || cells[2] == "" {
			t.Fatalf("%s: want | route | served by | what |, got %q", where, line)
		}
		fn := strings.Trim(cells[1], "`")
		r := strings.Trim(cells[0], "`")
		if table == "outside" {
			method, path, ok := strings.Cut(r, " ")
			if !ok || !strings.HasPrefix(path, "/") || strings.HasPrefix(path, "/api/") {
				t.Fatalf("%s: route %q outside the API is not `METHOD /path` outside /api/", where, cells[0])
			}
			doc.additions[method+" "+path] = fn
			continue
		}
		if r == "$default" {
			doc.additions[r] = fn
		} else if prefix, ok := strings.CutSuffix(r, "*"); ok {
			doc.prefixes["/api/v1"+prefix] = fn
		} else if method, path, ok := strings.Cut(r, " "); ok {
			doc.additions[method+" /api/v1"+path] = fn
		} else {
			t.Fatalf("%s: route %q is neither `METHOD /path` nor `/prefix/*`", where, cells[0])
		}
	}
	return doc
}

// TestSpecRoutesAreWired checks template.yaml against docs/routes.md, the
// spec's list of routes: every spec route built so far is wired to exactly
// the function the list names, no route listed as not built yet is wired,
// and every other route of the template is an addition the list documents.
func TestSpecRoutesAreWired(t *testing.T) {
	doc := readRoutesDoc(t, "../../docs/routes.md")
	tpl, err := samtemplate.Load("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 23; i++ {
		if s := fmt.Sprintf("4.%d", i); !doc.sections[s] {
			t.Errorf("docs/routes.md lists no route of the spec's section %s", s)
		}
	}
	wired := map[string][]string{}
	for _, fn := range tpl.Functions() {
		for _, r := range fn.Routes {
			wired[routeKey(r)] = append(wired[routeKey(r)], fn.Dir)
		}
	}
	for _, route := range slices.Sorted(maps.Keys(doc.spec)) {
		fn := doc.spec[route]
		switch fns := wired[route]; {
		case fn == "" && len(fns) > 0:
			t.Errorf("%s is wired to %v but docs/routes.md lists it as not built yet: name its function there", route, fns)
		case fn != "" && (len(fns) != 1 || fns[0] != fn):
			t.Errorf("%s is wired to %v; docs/routes.md says it is served by [%s]", route, fns, fn)
		}
	}
	for _, route := range slices.Sorted(maps.Keys(doc.additions)) {
		fn := doc.additions[route]
		if _, ok := doc.spec[route]; ok {
			t.Errorf("%s is listed both as a spec route and as our addition", route)
		}
		if fns := wired[route]; len(fns) != 1 || fns[0] != fn {
			t.Errorf("our addition %s is wired to %v; docs/routes.md says it is served by [%s]", route, fns, fn)
		}
	}
	for _, route := range slices.Sorted(maps.Keys(wired)) {
		fns := wired[route]
		if _, ok := doc.spec[route]; ok {
			continue
		}
		if _, ok := doc.additions[route]; ok {
			continue
		}
		documented := false
		for prefix, fn := range doc.prefixes {
			_, path, _ := strings.Cut(route, " ")
			if strings.HasPrefix(path, prefix) {
				documented = true
				if len(fns) != 1 || fns[0] != fn {
					t.Errorf("%s is wired to %v; docs/routes.md says every route under %s is served by [%s]", route, fns, prefix, fn)
				}
			}
		}
		if !documented {
			t.Errorf("%s (wired to %v) is neither a route of the spec nor an addition listed in docs/routes.md", route, fns)
		}
	}
}

// TestSamconfigSetsTemplateParameters reads every stage's
// parameter_overrides in samconfig.toml: each names a parameter of
// template.yaml and gives it a value the parameter allows, and the prod
// stage calls the aggregator's production API.
func TestSamconfigSetsTemplateParameters(t *testing.T) {
	tpl, err := samtemplate.Load("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	stages := samconfigStages(t)
	for stage, params := range stages {
		for k, v := range params {
			def, ok := tpl.Parameters[k].(map[string]any)
			if !ok {
				t.Errorf("%s: %s is no parameter of template.yaml", stage, k)
				continue
			}
			if allowed, ok := def["AllowedValues"].([]any); ok && !slices.ContainsFunc(allowed, func(a any) bool { return fmt.Sprint(a) == v }) {
				t.Errorf("%s: %s=%s is not one of %v", stage, k, v, allowed)
			}
		}
	}
	if p := stages["prod"]; p["Mode"] != "production" || p["OperatorBaseUrl"] != "https://api.pawapay.io" {
		t.Errorf("prod: Mode %q, OperatorBaseUrl %q; want production and pawaPay's production API", p["Mode"], p["OperatorBaseUrl"])
	}
}

// samconfigStages returns each stage's parameter_overrides in
// samconfig.toml.
func samconfigStages(t *testing.T) map[string]map[string]string {
	t.Helper()
	raw, err := os.ReadFile("../../samconfig.toml")
	if err != nil {
		t.Fatal(err)
	}
	stages := map[string]map[string]string{}
	stage := ""
	for line := range strings.Lines(string(raw)) {
		line = strings.TrimSpace(line)
		if s, ok := strings.CutPrefix(line, "["); ok {
			stage, _, _ = strings.Cut(strings.TrimSuffix(s, "]"), ".")
			continue
		}
		v, ok := strings.CutPrefix(line, "parameter_overrides = ")
		if !ok {
			continue
		}
		stages[stage] = map[string]string{}
		for _, kv := range strings.Fields(strings.Trim(v, `"`)) {
			k, val, _ := strings.Cut(kv, "=")
			stages[stage][k] = val
		}
	}
	if len(stages) == 0 {
		t.Fatal("no parameter_overrides in samconfig.toml")
	}
	return stages
}

// samconfigParameter returns the value samconfig.toml gives the parameter
// name in stage, or "".
func samconfigParameter(t *testing.T, stage, name string) string {
	return samconfigStages(t)[stage][name]
}
