package repocheck_test

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path"
	"slices"
	"strings"
	"testing"

	"payments/infra/local/localtest"
)

// The import rules of docs/architecture.md that follow every import, not
// only a file's own: what a package reaches through the packages it
// imports. Packages are named by their folder, relative to the
// repository root, as in layers_test.go, whose classification they reuse.

// modulePath is the module path, which starts every import path of ours.
const modulePath = "payments"

// lambdaLibraries are the import paths of the Lambda libraries, which no
// domain package reaches: the Lambda runtime and its events, and the
// adapter from API Gateway's events to net/http.
var lambdaLibraries = []string{"github.com/aws/aws-lambda-go", "github.com/awslabs/aws-lambda-go-api-proxy"}

// providerReceivers are the domain packages that may reach a provider
// adapter: a provider's calls to us, received in its own protocol, are
// read by its adapter (pkg/issuerhooks: Stripe Issuing's events, parsed
// and verified by stripeissuing).
var providerReceivers = []string{"pkg/issuerhooks/"}

// pkgDir returns the folder of import path p, relative to the root and
// ending with a slash ("pkg/store/"), or "" for a package not of ours.
func pkgDir(p string) string {
	rel, ok := strings.CutPrefix(p, modulePath+"/")
	if !ok {
		return ""
	}
	return rel + "/"
}

// within reports whether import path p is prefix or a package under it.
func within(p, prefix string) bool {
	return p == prefix || strings.HasPrefix(p, prefix+"/")
}

// isHTTPPackage reports whether dir is HTTP layer as a whole: a package of
// layers_test.go's httpLayer, or the routes of a capability in a package
// of their own, pkg/<capability>/<capability>http.
func isHTTPPackage(dir string) bool {
	parent, name := path.Split(strings.TrimSuffix(dir, "/"))
	return under(dir, httpLayer) || name == path.Base(parent)+"http"
}

// isDomain reports whether dir is a domain package: under pkg/ and not the
// HTTP layer, an adapter, the wiring or test support.
func isDomain(dir string) bool {
	return strings.HasPrefix(dir, "pkg/") && !isHTTPPackage(dir) && !under(dir, adapters) &&
		!under(dir, httpClients) && !isTestSupport(dir)
}

// isProviderContract reports whether dir is the contract of a provider
// kind, pkg/providers/<kind>: its interfaces, their types and errors, and
// None, which the domain declares its ports with.
func isProviderContract(dir string) bool {
	rest, ok := strings.CutPrefix(dir, "pkg/providers/")
	return ok && strings.Count(rest, "/") == 1
}

// isProviderImplementation reports whether import path p is a provider
// that works, rather than the words of its contract: a simulated provider
// (operatorsandbox…), its state (operatordb…), a real adapter (pawapay,
// stripeissuing) or its fake, and pkg/providers itself, which chooses
// among them.
func isProviderImplementation(p string) bool {
	dir := pkgDir(p)
	return strings.HasPrefix(dir, "pkg/providers/") && !isProviderContract(dir)
}

// transitiveRule is one rule over what a package reaches.
type transitiveRule struct {
	// applies reports whether the rule holds the package in folder dir.
	applies func(dir string) bool
	// forbidden reports whether import path p may not be reached.
	forbidden func(p string) bool
	why       string
}

var transitiveRules = []transitiveRule{
	{
		applies: isDomain,
		forbidden: func(p string) bool {
			return slices.ContainsFunc(lambdaLibraries, func(l string) bool { return within(p, l) })
		},
		why: "the domain is plain Go: the Lambda libraries are the wiring's",
	},
	{
		applies:   isDomain,
		forbidden: func(p string) bool { return p == modulePath+"/pkg/httpapi" },
		why:       "only the HTTP layer (pkg/<capability>/<capability>http, pkg/function) reaches pkg/httpapi: a service is called the same way by a route, a worker and a test",
	},
	{
		applies:   func(dir string) bool { return strings.HasPrefix(dir, "pkg/store/") && !isTestSupport(dir) },
		forbidden: isProviderImplementation,
		why:       "the store keeps our records: it reaches a provider's contract (pkg/providers/<kind>) through the domain's types, never a provider",
	},
	{
		applies:   func(dir string) bool { return isDomain(dir) && !under(dir, providerReceivers) },
		forbidden: isProviderImplementation,
		why:       "the domain declares its ports with a provider kind's contract (pkg/providers/<kind>); the wiring gives it a provider",
	},
}

// TestTransitiveImportRules lists every package under pkg/ and functions/
// with everything it imports (go list -deps) and fails on each package
// that reaches what a rule forbids it, naming the chain of imports that
// reaches it.
func TestTransitiveImportRules(t *testing.T) {
	graph := importGraph(t, localtest.Root(t), "./pkg/...", "./functions/...")
	var ours []string
	for p := range graph {
		if pkgDir(p) != "" {
			ours = append(ours, p)
		}
	}
	if len(ours) < 100 {
		t.Fatalf("listed %d packages of ours: the listing missed the repository", len(ours))
	}
	slices.Sort(ours)
	for _, r := range transitiveRules {
		for _, p := range ours {
			if !r.applies(pkgDir(p)) {
				continue
			}
			if c := importChain(graph, p, r.forbidden); c != nil {
				t.Errorf("%s: %s", strings.Join(c, " imports "), r.why)
			}
		}
	}
}

// importGraph returns the non-test imports of each package that patterns
// name and of everything they import, by import path, listed by go list
// in the module at root.
func importGraph(t *testing.T, root string, patterns ...string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-deps", "-json=ImportPath,Imports"}, patterns...)...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	graph := map[string][]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var pkg struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&pkg); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list's output: %v", err)
		}
		graph[pkg.ImportPath] = pkg.Imports
	}
	return graph
}

// importChain returns the shortest chain of imports by which package from
// reaches a package for which forbidden is true: from, what it imports,
// and so on to that package; nil when it reaches none. from itself is not
// tested.
func importChain(graph map[string][]string, from string, forbidden func(string) bool) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, imp := range graph[p] {
			if _, seen := prev[imp]; seen {
				continue
			}
			prev[imp] = p
			if forbidden(imp) {
				chain := []string{imp}
				for q := p; q != ""; q = prev[q] {
					chain = append(chain, q)
				}
				slices.Reverse(chain)
				return chain
			}
			queue = append(queue, imp)
		}
	}
	return nil
}

// TestImportChain shows importChain finding the shortest chain, through
// any number of packages, and none where there is none.
func TestImportChain(t *testing.T) {
	graph := map[string][]string{
		"money":     {"fmt"},
		"payments":  {"money", "providers/operator", "httpapi"},
		"store":     {"payments", "wallets"},
		"wallets":   {"money", "bank"},
		"bank":      {"banksandbox"},
		"httpapi":   {"lambda/events"},
		"a":         {"b"},
		"b":         {"a", "c"},
		"c":         {"lambda"},
		"loop":      {"loop2"},
		"loop2":     {"loop"},
		"fmt":       nil,
		"operator":  nil,
		"sandboxed": {"banksandbox"},
	}
	isLambda := func(p string) bool { return within(p, "lambda") }
	tests := []struct {
		name, from string
		forbidden  func(string) bool
		want       []string
	}{
		{"a direct import", "payments", func(p string) bool { return p == "httpapi" }, []string{"payments", "httpapi"}},
		{"through one package", "payments", isLambda, []string{"payments", "httpapi", "lambda/events"}},
		{"through two packages", "store", func(p string) bool { return p == "banksandbox" }, []string{"store", "wallets", "bank", "banksandbox"}},
		{"the shortest of two chains", "store", func(p string) bool { return p == "money" }, []string{"store", "payments", "money"}},
		{"through a cycle", "a", isLambda, []string{"a", "b", "c", "lambda"}},
		{"none in a cycle", "loop", isLambda, nil},
		{"none reached", "money", isLambda, nil},
		{"the package itself is not tested", "httpapi", func(p string) bool { return p == "httpapi" }, nil},
		{"a package not listed", "missing", isLambda, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := importChain(graph, tt.from, tt.forbidden); !slices.Equal(got, tt.want) {
				t.Errorf("importChain(%s) = %v, want %v", tt.from, got, tt.want)
			}
		})
	}
}

// TestTransitiveRuleClassification shows which packages each part of the
// rules takes for what.
func TestTransitiveRuleClassification(t *testing.T) {
	tests := []struct {
		dir                           string
		domain, contract, httpPackage bool
	}{
		{"pkg/payments/", true, false, false},
		{"pkg/money/", true, false, false},
		{"pkg/payments/paymentshttp/", false, false, true},
		{"pkg/cards/cardshttp/", false, false, true},
		{"pkg/cards/payments/", true, false, false},
		{"pkg/httpapi/", false, false, true},
		{"pkg/function/paymentsapi/", false, false, true},
		{"pkg/store/", false, false, false},
		{"pkg/store/storetest/", false, false, false},
		{"pkg/app/apptest/", false, false, true},
		{"pkg/providers/", false, false, false},
		{"pkg/providers/operator/", false, true, false},
		{"pkg/providers/issuer/", false, true, false},
		{"pkg/providers/operator/operatorsandbox/", false, false, false},
		{"pkg/providers/issuer/issuerdb/", false, false, false},
		{"pkg/providers/operator/pawapay/pawapaysim/", false, false, false},
	}
	for _, tt := range tests {
		if got := isDomain(tt.dir); got != tt.domain {
			t.Errorf("isDomain(%s) = %v", tt.dir, got)
		}
		if got := isProviderContract(tt.dir); got != tt.contract {
			t.Errorf("isProviderContract(%s) = %v", tt.dir, got)
		}
		if got := isHTTPPackage(tt.dir); got != tt.httpPackage {
			t.Errorf("isHTTPPackage(%s) = %v", tt.dir, got)
		}
		p := modulePath + "/" + strings.TrimSuffix(tt.dir, "/")
		wantImpl := strings.HasPrefix(tt.dir, "pkg/providers/") && !tt.contract
		if got := isProviderImplementation(p); got != wantImpl {
			t.Errorf("isProviderImplementation(%s) = %v", p, got)
		}
	}
}
