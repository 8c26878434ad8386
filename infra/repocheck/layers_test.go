package repocheck_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"payments/infra/local/localtest"
)

// The import rules of docs/architecture.md ("What may import what"). A
// rule names packages by their folder, relative to the repository root;
// "pkg/function/" covers the folder and every folder under it.

// httpLayer are the folders of the HTTP layer besides the capabilities'
// route packages (httpPackage): the router and its helpers, the functions
// that mount the routes, the API document, the company dashboard's pages.
var httpLayer = []string{"pkg/httpapi/", "pkg/function/", "pkg/apidoc/", "pkg/app/", "pkg/dashboard/"}

// httpClients are the packages that call out over HTTP and take an
// *http.Request as a client does (a redirect check, a request editor):
// the outbound client, the generated API client, the provider adapters.
// A provider's contract fake beside its adapter (pkg/providers/operator/
// pawapay/pawapaysim) is covered deliberately: it serves the provider's API,
// so its handlers take *http.Request, and it holds no route of ours.
var httpClients = []string{"pkg/outbound/", "pkg/apiclient/", "pkg/providers/"}

// adapters are the packages that may call AWS: the adapters of DynamoDB,
// SQS, S3, KMS, Secrets Manager and Cognito, the functions that build their
// clients, and the provider adapters.
var adapters = []string{
	"pkg/store/", "pkg/queue/", "pkg/documents/", "pkg/vault/kmskeys/", "pkg/auth/kmssign/", "pkg/identity/cognitopool/",
	"pkg/function/", "pkg/httpapi/", "pkg/apidoc/", "pkg/providers/", "pkg/app/",
}

// moneyDomains are the domains of money, which the root store
// (pkg/store) does not know, so that a function that keeps no money links
// none of them: their stores are in pkg/store/moneystore.
var moneyDomains = []string{
	"pkg/payments/", "pkg/bulk/", "pkg/cards/", "pkg/customers/", "pkg/wallets/",
	"pkg/debts/", "pkg/fx/", "pkg/reconcile/",
}

// goFile is one non-test Go file of the repository with its imports.
type goFile struct {
	path    string // relative to the root, with slashes
	dir     string // its folder, ending with a slash
	file    *ast.File
	imports map[string]string // import path → the name it is used by
}

// isHTTPFile reports whether f belongs to the HTTP layer.
func (f goFile) isHTTPFile() bool {
	return httpPackage(f.dir) || under(f.dir, httpLayer)
}

// httpPackage reports whether dir is a capability's route package,
// pkg/<capability>/<capability>http (pkg/payments/paymentshttp).
func httpPackage(dir string) bool {
	dir = strings.TrimSuffix(dir, "/")
	parent := path.Dir(dir)
	return strings.HasPrefix(parent, "pkg/") && path.Base(dir) == path.Base(parent)+"http"
}

// routeFileName reports whether name is the name of a routes file,
// http.go or *_http.go, which belongs in a route package.
func routeFileName(name string) bool {
	base := path.Base(name)
	return base == "http.go" || strings.HasSuffix(base, "_http.go")
}

// under reports whether dir is one of folders or inside one.
func under(dir string, folders []string) bool {
	for _, p := range folders {
		if strings.HasPrefix(dir, p) {
			return true
		}
	}
	return false
}

// isTestSupport reports whether dir is a package that tests import (its
// name ends in "test": storetest, vaulttest…), which may stand up what it
// fakes.
func isTestSupport(dir string) bool {
	return strings.HasSuffix(strings.TrimSuffix(dir, "/"), "test")
}

// TestImportRules reads every non-test Go file under pkg/ and functions/
// and fails on each import or signature that breaks a rule of
// docs/architecture.md.
func TestImportRules(t *testing.T) {
	files := parseGoFiles(t, localtest.Root(t), "pkg", "functions")
	if len(files) < 100 {
		t.Fatalf("read %d Go files: the walk missed the repository", len(files))
	}
	for _, f := range files {
		if routeFileName(f.path) && !f.isHTTPFile() && !under(f.dir, httpClients) && !isTestSupport(f.dir) {
			t.Errorf("%s: routes live in the capability's route package (pkg/<capability>/<capability>http), not in the domain", f.path)
		}
		for imp := range f.imports {
			if problem := importProblem(f, imp); problem != "" {
				t.Errorf("%s imports %s: %s", f.path, imp, problem)
			}
		}
		if f.isHTTPFile() || under(f.dir, httpClients) || isTestSupport(f.dir) {
			continue
		}
		if name, ok := f.imports["net/http"]; ok {
			ast.Inspect(f.file, func(n ast.Node) bool {
				if ft, ok := n.(*ast.FuncType); ok {
					for _, p := range ft.Params.List {
						if typ := httpType(p.Type, name); typ != "" {
							t.Errorf("%s: a function takes %s: only the HTTP layer (pkg/<capability>/<capability>http, pkg/httpapi, pkg/function) reads requests", f.path, typ)
						}
					}
				}
				return true
			})
		}
	}
}

// importProblem returns what is wrong with f importing imp, or "".
func importProblem(f goFile, imp string) string {
	const module = "payments/"
	switch {
	case imp == module+"pkg/httpapi" && !f.isHTTPFile():
		return "only the HTTP layer (pkg/<capability>/<capability>http, pkg/function) imports pkg/httpapi: return field errors (pkg/field) and take page requests (pkg/page)"
	case strings.HasPrefix(f.dir, "pkg/store/") && strings.HasPrefix(imp, module+"pkg/providers"):
		return "the store keeps our records; a simulated provider keeps its own beside its code"
	case f.dir == "pkg/store/" && under(strings.TrimPrefix(imp, module)+"/", moneyDomains):
		return "the root store serves the functions that keep no money: a money domain's store is in pkg/store/moneystore"
	case (strings.HasPrefix(imp, module+"pkg/store") || strings.HasPrefix(imp, module+"pkg/queue")) &&
		!under(f.dir, adapters) && !isTestSupport(f.dir):
		return "a domain package declares the small interface it needs; pkg/function wires the store or queue that implements it"
	case strings.HasPrefix(imp, module+"pkg/function") && !strings.HasPrefix(f.dir, "pkg/function/") &&
		!strings.HasPrefix(f.dir, "functions/") && !strings.HasPrefix(f.dir, "pkg/app/"):
		return "only the functions wire services"
	case (strings.HasPrefix(imp, "github.com/aws/") || strings.HasPrefix(imp, "github.com/awslabs/")) &&
		!under(f.dir, adapters) && !strings.HasPrefix(f.dir, "functions/"):
		return "only an adapter calls AWS"
	case (f.dir == "pkg/field/" || f.dir == "pkg/page/") && imp == "net/http":
		return "field errors and pages know no HTTP"
	}
	return ""
}

// httpType returns "*http.Request" or "http.ResponseWriter" when expr is
// that type (net/http imported as name), else "".
func httpType(expr ast.Expr, name string) string {
	if star, ok := expr.(*ast.StarExpr); ok {
		if sel, ok := star.X.(*ast.SelectorExpr); ok && isPkg(sel.X, name) && sel.Sel.Name == "Request" {
			return "*http.Request"
		}
	}
	if sel, ok := expr.(*ast.SelectorExpr); ok && isPkg(sel.X, name) && sel.Sel.Name == "ResponseWriter" {
		return "http.ResponseWriter"
	}
	return ""
}

func isPkg(x ast.Expr, name string) bool {
	id, ok := x.(*ast.Ident)
	return ok && id.Name == name
}

// parseGoFiles parses the non-test Go files under the folders of root.
func parseGoFiles(t *testing.T, root string, folders ...string) []goFile {
	t.Helper()
	fset := token.NewFileSet()
	var files []goFile
	for _, folder := range folders {
		err := filepath.WalkDir(filepath.Join(root, folder), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			g := goFile{path: filepath.ToSlash(rel), file: f, imports: map[string]string{}}
			g.dir = path.Dir(g.path) + "/"
			for _, is := range f.Imports {
				imp, _ := strconv.Unquote(is.Path.Value)
				name := path.Base(imp)
				if is.Name != nil {
					name = is.Name.Name
				}
				g.imports[imp] = name
			}
			files = append(files, g)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// TestImportProblem shows each rule refusing what it is there to refuse,
// and admitting what it allows.
func TestImportProblem(t *testing.T) {
	tests := []struct {
		path, imp string
		refused   bool
	}{
		{"pkg/payments/accept.go", "payments/pkg/httpapi", true},
		{"pkg/payments/http.go", "payments/pkg/httpapi", true},
		{"pkg/payments/paymentshttp/http.go", "payments/pkg/httpapi", false},
		{"pkg/payments/paymentshttp/query_http.go", "payments/pkg/httpapi", false},
		{"pkg/payments/paymentshttp/query_http.go", "github.com/aws/aws-lambda-go/events", true},
		{"pkg/payments/payhttp/http.go", "payments/pkg/httpapi", true},
		{"pkg/function/paymentsapi/paymentsapi.go", "payments/pkg/httpapi", false},
		{"pkg/store/moneystore/payments.go", "payments/pkg/providers/operator", true},
		{"pkg/store/moneystore/payments.go", "payments/pkg/payments", false},
		{"pkg/store/webhooks.go", "payments/pkg/payments", true},
		{"pkg/store/webhooks.go", "payments/pkg/cards/cardshttp", true},
		{"pkg/store/webhooks.go", "payments/pkg/webhooks", false},
		{"pkg/store/companies.go", "payments/pkg/companies", false},
		{"pkg/cards/service.go", "payments/pkg/store", true},
		{"pkg/cards/service.go", "payments/pkg/queue", true},
		{"pkg/queue/queuetest/queuetest.go", "payments/pkg/store/storetest", false},
		{"pkg/function/services/services.go", "payments/pkg/store", false},
		{"pkg/wallets/wallets.go", "payments/pkg/function", true},
		{"functions/payments/main.go", "payments/pkg/function", false},
		{"pkg/fx/fx.go", "github.com/aws/aws-sdk-go-v2/service/dynamodb", true},
		{"pkg/store/store.go", "github.com/aws/aws-sdk-go-v2/service/dynamodb", false},
		{"pkg/page/page.go", "net/http", true},
		{"pkg/webhooks/worker.go", "net/http", false},
	}
	for _, tt := range tests {
		f := goFile{path: tt.path, dir: path.Dir(tt.path) + "/"}
		if got := importProblem(f, tt.imp); (got != "") != tt.refused {
			t.Errorf("%s importing %s: problem %q, want refused=%v", tt.path, tt.imp, got, tt.refused)
		}
	}
}

// TestHTTPPackage: a route package is pkg/<capability>/<capability>http and
// nothing else, and a routes file elsewhere is named as one.
func TestHTTPPackage(t *testing.T) {
	tests := []struct {
		dir  string
		want bool
	}{
		{"pkg/payments/paymentshttp/", true},
		{"pkg/cards/cardshttp/", true},
		{"pkg/payments/", false},
		{"pkg/payments/cardshttp/", false},
		{"pkg/outbound/", false},
		{"pkg/httpapi/", false},
		{"infra/payments/paymentshttp/", false},
	}
	for _, tt := range tests {
		if got := httpPackage(tt.dir); got != tt.want {
			t.Errorf("httpPackage(%q) = %v, want %v", tt.dir, got, tt.want)
		}
	}
	for name, want := range map[string]bool{"pkg/cards/http.go": true, "pkg/cards/sandbox_http.go": true, "pkg/cards/httpx.go": false, "pkg/cards/service.go": false} {
		if got := routeFileName(name); got != want {
			t.Errorf("routeFileName(%q) = %v, want %v", name, got, want)
		}
	}
}
