package devserver

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"payments/infra/local/samtemplate"
	"payments/infra/local/stack"
	"payments/pkg/function"
)

// AuditTable is the logical id of the audit trail's table in the
// template; every other table is the service's.
const AuditTable = "AuditTable"

// Resources are the local values that the template's references resolve to
// when a function's environment is built.
type Resources struct {
	// Stage is the value of the Stage parameter (default "local").
	Stage string
	// Params overrides other template parameters (e.g. "Mode": "sandbox");
	// the rest take their Default.
	Params map[string]string
	// TableName is what a Ref to the service's DynamoDB table gives, and
	// AuditTableName what a Ref to the audit trail's (AuditTable) gives.
	TableName, AuditTableName string
	// QueueURLs maps each queue's local name ("payouts") to its URL.
	QueueURLs map[string]string
	// Buckets maps each bucket's local name ("documents") to its name in the
	// emulator (default: the same).
	Buckets map[string]string
	// Secrets holds the values Secrets Manager would give, and the local
	// card key. A variable NAME_ARN that refers to a secret or a KMS key
	// becomes NAME with Secrets[NAME] ("TOKEN_KEY_A", "ADMIN_API_KEY",
	// "CARD_KEY"), as function.ConfigFromEnv accepts either.
	Secrets map[string]string
	// Base is added to every function's environment: the emulators'
	// endpoints, credentials and region (stack.Stack.Env).
	Base []string
	// UserPoolID and UserPoolClientID are what a Ref to the template's
	// user pool and to its app client give: the local pool's ids in
	// cognito-local (stack.CreateUserPool).
	UserPoolID, UserPoolClientID string
}

// FunctionEnv returns the environment variables that the template gives fn
// (Globals first, then the function's own), with every reference resolved
// against r, plus r.Base and the variables Lambda sets itself.
func FunctionEnv(t *samtemplate.Template, fn samtemplate.Function, r Resources) (map[string]string, error) {
	params := maps.Clone(r.Params)
	if params == nil {
		params = map[string]string{}
	}
	params["Stage"] = r.stage()
	vars := t.EnvironmentWith(fn, params)
	out := map[string]string{}
	for _, kv := range r.Base {
		if k, v, ok := strings.Cut(kv, "="); ok {
			out[k] = v
		}
	}
	out["AWS_LAMBDA_FUNCTION_NAME"] = fn.LogicalID
	out["AWS_LAMBDA_FUNCTION_VERSION"] = "$LATEST"
	out["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"] = strconv.Itoa(FunctionInt(t, fn, "MemorySize", 128))
	if _, ok := out["AWS_REGION"]; !ok {
		out["AWS_REGION"] = stack.Region
	}
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		v := vars[name]
		if id := ref(v); id != "" && localKeyed[t.Resources[id].Type] {
			plain, ok := strings.CutSuffix(name, "_ARN")
			if !ok {
				return nil, fmt.Errorf("%s: variable %s refers to %s but does not end in _ARN", fn.LogicalID, name, id)
			}
			s, ok := r.Secrets[plain]
			if !ok {
				return nil, fmt.Errorf("%s: no local value for %s (variable %s)", fn.LogicalID, id, plain)
			}
			out[plain] = s
			continue
		}
		s, err := resolve(t, v, r)
		if err != nil {
			return nil, fmt.Errorf("%s: variable %s: %w", fn.LogicalID, name, err)
		}
		out[name] = s
	}
	return out, nil
}

// localKeyed are the types of resource that a function names with a
// NAME_ARN variable in AWS and that the local stack replaces with NAME
// holding the value itself (Resources.Secrets): a secret, and a KMS key,
// whose local stand-in is a key kept in .cache.
var localKeyed = map[string]bool{"AWS::SecretsManager::Secret": true, "AWS::KMS::Key": true}

// FunctionInt returns the integer property key (Timeout, MemorySize) of fn:
// its own, else the template's Globals, else def (Lambda's default).
func FunctionInt(t *samtemplate.Template, fn samtemplate.Function, key string, def int) int {
	if n, ok := t.Resources[fn.LogicalID].Properties[key].(int); ok {
		return n
	}
	globals, _ := t.Globals["Function"].(map[string]any)
	if n, ok := globals[key].(int); ok {
		return n
	}
	return def
}

// resolve returns the local value of a template value.
func resolve(t *samtemplate.Template, v any, r Resources) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case int, int64, float64, bool:
		return fmt.Sprint(x), nil
	case nil:
		return "", nil
	}
	if sub, ok := v.(map[string]any)["Fn::Sub"].(string); ok {
		return resolveSub(t, sub, r)
	}
	id := ref(v)
	if id == "" {
		return "", fmt.Errorf("only plain values, !Ref and !Sub of a string are resolved locally, not %v", v)
	}
	switch id {
	case "AWS::Region":
		return stack.Region, nil
	case "AWS::AccountId":
		return stack.AccountID, nil
	case "AWS::StackName":
		return "payments-" + r.stage(), nil
	case "Stage":
		return r.stage(), nil
	}
	if p, ok := t.Parameters[id]; ok {
		if v, ok := r.Params[id]; ok {
			return v, nil
		}
		def, ok := p.(map[string]any)["Default"]
		if !ok {
			return "", fmt.Errorf("parameter %s has no default and no local value", id)
		}
		return resolve(t, def, r)
	}
	res, ok := t.Resources[id]
	if !ok {
		return "", fmt.Errorf("!Ref %s: no such parameter or resource", id)
	}
	switch res.Type {
	case "AWS::DynamoDB::Table":
		if id != AuditTable {
			return r.TableName, nil
		}
		if r.AuditTableName == "" {
			return "", fmt.Errorf("!Ref %s: the local stack made no audit table", id)
		}
		return r.AuditTableName, nil
	case "AWS::SQS::Queue":
		for _, q := range t.Queues() {
			if q.LogicalID == id {
				if u, ok := r.QueueURLs[q.Name]; ok {
					return u, nil
				}
				return "", fmt.Errorf("queue %s (%s) has no local URL", id, q.Name)
			}
		}
	case "AWS::Cognito::UserPool":
		if r.UserPoolID != "" {
			return r.UserPoolID, nil
		}
		return "", fmt.Errorf("!Ref %s: the local stack made no user pool", id)
	case "AWS::Cognito::UserPoolClient":
		if r.UserPoolClientID != "" {
			return r.UserPoolClientID, nil
		}
		return "", fmt.Errorf("!Ref %s: the local stack made no user pool client", id)
	case "AWS::S3::Bucket":
		name := bucketName(t, id)
		if b, ok := r.Buckets[name]; ok {
			return b, nil
		}
		return name, nil
	}
	return "", fmt.Errorf("!Ref %s: resources of type %s are not resolved locally", id, res.Type)
}

// resolveSub returns the local value of !Sub s: each ${Name} resolved as
// !Ref Name. ${X.Attr} is not resolved locally.
func resolveSub(t *samtemplate.Template, s string, r Resources) (string, error) {
	var out strings.Builder
	for {
		before, rest, found := strings.Cut(s, "${")
		out.WriteString(before)
		if !found {
			return out.String(), nil
		}
		name, after, closed := strings.Cut(rest, "}")
		if !closed || strings.Contains(name, ".") {
			return "", fmt.Errorf("!Sub %q: only ${Name} is resolved locally", s)
		}
		v, err := resolve(t, map[string]any{"Ref": name}, r)
		if err != nil {
			return "", fmt.Errorf("!Sub: %w", err)
		}
		out.WriteString(v)
		s = after
	}
}

// bucketName returns the local name of the bucket with logical id id:
// samtemplate lists bucket names in the order of their sorted logical ids.
func bucketName(t *samtemplate.Template, id string) string {
	var ids []string
	for k, res := range t.Resources {
		if res.Type == "AWS::S3::Bucket" {
			ids = append(ids, k)
		}
	}
	sort.Strings(ids)
	names := t.Buckets()
	for i, k := range ids {
		if k == id && i < len(names) {
			return names[i]
		}
	}
	return strings.ToLower(id)
}

func (r Resources) stage() string {
	if r.Stage == "" {
		return "local"
	}
	return r.Stage
}

// ref returns the logical id of {"Ref": id}, or "".
func ref(v any) string {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return ""
	}
	if g, ok := m["Fn::GetAtt"].([]any); ok && len(g) == 2 && g[1] == "Arn" {
		s, _ := g[0].(string)
		return s
	}
	s, _ := m["Ref"].(string)
	return s
}

// envMu serialises Config: it changes the process environment for a moment.
var envMu sync.Mutex

// Config returns the function.Config that function.ConfigFromEnv reads from
// env for the function name (its folder name), the way the function's main
// reads its own environment in Lambda: secrets are given by value (see
// Resources.Secrets), so none is read. It sets env in the process
// environment for the duration of the call (together with
// unsetting each NAME_ARN whose NAME env sets) and restores it afterwards.
func Config(ctx context.Context, name string, env map[string]string) (function.Config, error) {
	envMu.Lock()
	defer envMu.Unlock()
	type saved struct {
		value string
		set   bool
	}
	restore := map[string]saved{}
	change := func(k string, v *string) {
		if _, done := restore[k]; !done {
			old, set := os.LookupEnv(k)
			restore[k] = saved{old, set}
		}
		if v == nil {
			os.Unsetenv(k)
		} else {
			os.Setenv(k, *v)
		}
	}
	for k, v := range env {
		if _, isARN := env[k+"_ARN"]; !isARN {
			change(k+"_ARN", nil)
		}
		change(k, &v)
	}
	defer func() {
		for k, s := range restore {
			if s.set {
				os.Setenv(k, s.value)
			} else {
				os.Unsetenv(k)
			}
		}
	}()
	return function.ConfigFromEnv(ctx, name, nil)
}
