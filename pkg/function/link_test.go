package function_test

import (
	"os/exec"
	"path"
	"slices"
	"strings"
	"testing"

	"payments/pkg/function"
)

// shared are the packages under pkg/function that more than one function
// links; every other one is one function's own.
var shared = []string{"payments/pkg/function", "payments/pkg/function/services", "payments/pkg/function/secrets", "payments/pkg/function/cardissuer",
	"payments/pkg/function/tokenkeys", "payments/pkg/function/issuerreceivers", "payments/pkg/function/base",
	"payments/pkg/function/companyroutes", "payments/pkg/function/keyvaults",
	"payments/pkg/function/userpool"}

// sdkService is the import path prefix of the SDK's service clients.
const sdkService = "github.com/aws/aws-sdk-go-v2/service/"

// TestFunctionsLinkOnlyWhatTheyServe reads each functions/<name> package's
// dependencies (go list): it links exactly one function's package under
// pkg/function (its own: never another function's, nor the registry
// pkg/app), only the SDK clients of the services its grants name
// (function.Functions), the secrets reader when it is granted a secret,
// and none of the SDK's shared-config, SSO or STS code.
func TestFunctionsLinkOnlyWhatTheyServe(t *testing.T) {
	out, err := exec.Command("go", "list", "-tags", "lambda.norpc,nethttpomithttp2", "-f", `{{.ImportPath}} {{join .Deps " "}}`, "payments/functions/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	owner := map[string]string{} // function package -> the function that links it
	seen := 0
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		name, deps := path.Base(fields[0]), fields[1:]
		seen++
		fn, ok := function.Functions[name]
		if !ok {
			t.Errorf("functions/%s is not in function.Functions", name)
			continue
		}
		allowed := map[string]bool{}
		for _, g := range slices.Concat(fn.Grants, fn.Unsigned) {
			for _, a := range g.Actions {
				svc, _, _ := strings.Cut(a, ":")
				allowed[svc] = true
			}
		}
		allowed["dynamodbstreams"] = allowed["dynamodb"] // the attribute values' types, through attributevalue
		allowed["cognitoidentityprovider"] = allowed["cognito-idp"]
		var own []string
		for _, d := range deps {
			switch {
			case d == "payments/pkg/app":
				t.Errorf("functions/%s links the registry pkg/app", name)
			case strings.HasPrefix(d, "payments/pkg/function/") && !slices.Contains(shared, d) && strings.Count(d, "/") == 3:
				own = append(own, d)
			case strings.HasPrefix(d, sdkService):
				svc, _, _ := strings.Cut(strings.TrimPrefix(d, sdkService), "/")
				if !allowed[svc] && svc != "internal" {
					t.Errorf("functions/%s links %s, a client of a service it is granted nothing on", name, d)
				}
			case d == "github.com/aws/aws-sdk-go-v2/config", strings.HasPrefix(d, "github.com/aws/aws-sdk-go-v2/credentials/"):
				t.Errorf("functions/%s links %s: the shared configuration and credential providers are not needed in Lambda", name, d)
			}
		}
		// A function granted a secret reads it at start: its main must
		// hand Start the reader (secrets.New), or the function refuses to
		// start where the secret's ARN is set.
		if allowed["secretsmanager"] && !slices.Contains(deps, "payments/pkg/function/secrets") {
			t.Errorf("functions/%s is granted a secret but does not link pkg/function/secrets to read it", name)
		}
		for _, d := range deps {
			if linked, watched := watchedLink(d); watched && !allowedLink(function.Links[name], linked) {
				t.Errorf("functions/%s links %s, which function.Links does not give it", name, linked)
			}
		}
		if len(own) != 1 {
			t.Errorf("functions/%s links %d function packages %v, want only its own", name, len(own), own)
			continue
		}
		if base := strings.ReplaceAll(name, "-", ""); path.Base(own[0]) != base && path.Base(own[0]) != base+"api" {
			t.Errorf("functions/%s links %s, not its own package (pkg/function/%s or %sapi)", name, own[0], base, base)
		}
		if other, dup := owner[own[0]]; dup {
			t.Errorf("functions/%s and functions/%s both link %s", name, other, own[0])
		}
		owner[own[0]] = name
	}
	if seen != len(function.Functions) {
		t.Errorf("go list found %d functions, function.Functions has %d", seen, len(function.Functions))
	}
}

// templateFork is the standard library's templates without method calls.
const templateFork = "github.com/DataDog/datadog-agent/pkg/template/"

// TestFunctionsExecuteNoStandardTemplate fails when a package a function
// links imports text/template or html/template, save the fork that calls
// no method (templateFork, which imports them for their types alone).
// Their execution looks methods up by name (reflect's MethodByName), and
// the linker then keeps every exported method of every type the binary
// converts to an interface: the dashboard was 4.83 MiB gzipped with them,
// 3.52 MiB with the fork.
func TestFunctionsExecuteNoStandardTemplate(t *testing.T) {
	out, err := exec.Command("go", "list", "-tags", "lambda.norpc,nethttpomithttp2", "-deps", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "payments/functions/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		pkg, imports := fields[0], fields[1:]
		if pkg == "html/template" || strings.HasPrefix(pkg, templateFork) {
			continue
		}
		for _, std := range []string{"text/template", "html/template"} {
			if slices.Contains(imports, std) {
				kind, _, _ := strings.Cut(std, "/")
				t.Errorf("%s imports %s: use %s%s, which calls no method", pkg, std, templateFork, kind)
			}
		}
	}
}

// domains are the domain packages (under pkg/) whose links
// function.Links rules.
var domains = []string{"auth", "bulk", "cards", "companies", "customers", "debts", "documents", "events", "fees", "fx",
	"idempotency", "issuerhooks", "limits", "operatorhooks", "outbox", "payments", "reconcile", "wallets", "webhooks"}

// watchedLink returns the name function.Links gives the package path dep
// (its path under pkg/, or "stripe-go"), and whether Links rules it: a
// domain package, a provider package or Stripe's library.
func watchedLink(dep string) (string, bool) {
	if strings.HasPrefix(dep, "github.com/stripe/stripe-go/") {
		return "stripe-go", dep == "github.com/stripe/stripe-go/v85"
	}
	rel, ok := strings.CutPrefix(dep, "payments/pkg/")
	if !ok {
		return "", false
	}
	return rel, slices.Contains(domains, rel) || rel == "providers" || strings.HasPrefix(rel, "providers/")
}

// allowedLink reports whether links names pkg, itself or by a folder
// ending "/...".
func allowedLink(links []string, pkg string) bool {
	for _, l := range links {
		if l == pkg {
			return true
		}
		if folder, ok := strings.CutSuffix(l, "/..."); ok && strings.HasPrefix(pkg, folder+"/") {
			return true
		}
	}
	return false
}

// TestAllowedLink checks the reading of function.Links' rows.
func TestAllowedLink(t *testing.T) {
	tests := []struct {
		links []string
		pkg   string
		want  bool
	}{
		{[]string{"auth"}, "auth", true},
		{[]string{"auth"}, "payments", false},
		{[]string{"providers/..."}, "providers/issuer/stripeissuing", true},
		{[]string{"providers/..."}, "providers", false},
		{nil, "limits", false},
	}
	for _, tt := range tests {
		if got := allowedLink(tt.links, tt.pkg); got != tt.want {
			t.Errorf("allowedLink(%v, %s) = %v, want %v", tt.links, tt.pkg, got, tt.want)
		}
	}
}
