package function_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"payments/infra/local/samtemplate"
	"payments/pkg/app/apptest"
	"payments/pkg/function"
)

// iamServices maps the type of a resource a function may be granted
// actions on to the prefix of those actions.
var iamServices = map[string]string{
	"AWS::DynamoDB::Table":        "dynamodb",
	"AWS::SQS::Queue":             "sqs",
	"AWS::SecretsManager::Secret": "secretsmanager",
	"AWS::S3::Bucket":             "s3",
	"AWS::KMS::Key":               "kms",
	"AWS::Cognito::UserPool":      "cognito-idp",
}

// TestTemplateGivesEachFunctionWhatItUses checks each function of
// template.yaml against its entry in function.Functions: its environment variables
// are exactly the ones it reads, each variable that names a resource comes
// with the actions it needs on that resource, and its policy statements
// grant those actions and nothing else, on the resources its variables name
// or on function.StackResources, written as their exact ARN.
func TestTemplateGivesEachFunctionWhatItUses(t *testing.T) {
	tpl, err := samtemplate.Load("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	inTemplate := map[string]bool{}
	for _, fn := range tpl.Functions() {
		inTemplate[fn.Dir] = true
		t.Run(fn.Dir, func(t *testing.T) {
			uses, ok := function.Functions[fn.Dir]
			if !ok {
				t.Fatalf("%s: functions/%s has no entry in function.Functions", fn.LogicalID, fn.Dir)
			}
			env := tpl.Environment(fn)
			got, want := slices.Sorted(maps.Keys(env)), uses.Variables()
			for _, v := range want {
				if !slices.Contains(got, v) {
					t.Errorf("%s reads %s, which the template does not set", fn.LogicalID, v)
				}
			}
			for _, v := range got {
				if !slices.Contains(want, v) {
					t.Errorf("the template sets %s on %s, which does not read it", v, fn.LogicalID)
				}
			}

			// The resources its variables name, by logical id.
			variableOf := map[string]string{}
			for _, name := range got {
				granted := slices.ContainsFunc(uses.Grants, func(g function.Grant) bool { return g.Variable() == name })
				id := refTo(env[name])
				res, isResource := tpl.Resources[id]
				switch {
				case !isResource && granted:
					t.Errorf("%s: %s names no resource of the template, yet function.Functions grants actions on it", fn.LogicalID, name)
				case !isResource:
				case slices.Contains(uses.Settings, name) && iamServices[res.Type] != "":
					// A resource no IAM action names (a user pool's app
					// client) may be a plain setting.
					t.Errorf("%s: %s names %s (%s): a resource, declared as a plain setting", fn.LogicalID, name, id, res.Type)
				case slices.Contains(uses.Settings, name):
				default:
					variableOf[id] = name
				}
				for _, g := range uses.Grants {
					for _, a := range g.Actions {
						if isResource && g.Variable() == name && !strings.HasPrefix(a, iamServices[res.Type]+":") {
							t.Errorf("%s: %s on %s, a %s", fn.LogicalID, a, name, res.Type)
						}
					}
				}
			}

			for _, p := range fn.OtherPolicies {
				t.Errorf("%s: policy %v: write it as an inline Statement, which this test checks", fn.LogicalID, p)
			}
			granted := map[apptest.AWSCall]bool{}
			for _, st := range fn.Statements {
				if st.Effect != "Allow" {
					t.Errorf("%s: a statement with Effect %q; only Allow is expected", fn.LogicalID, st.Effect)
				}
				for _, r := range st.Resources {
					if res, ok := stackResource(r); ok {
						for _, a := range st.Actions {
							if !strings.Contains(function.StackResources[res], ":"+strings.Split(a, ":")[0]+":") {
								t.Errorf("%s: %s on %s, an ARN of another service", fn.LogicalID, a, function.StackResources[res])
							}
							granted[apptest.AWSCall{Resource: res, Action: a}] = true
						}
						continue
					}
					id, suffix, err := tpl.ARN(r)
					if err != nil {
						t.Errorf("%s: %v", fn.LogicalID, err)
						continue
					}
					name, ok := variableOf[id]
					if !ok {
						t.Errorf("%s: granted %v on %s, which no variable of its environment names", fn.LogicalID, st.Actions, id)
						continue
					}
					for _, a := range st.Actions {
						granted[apptest.AWSCall{Resource: name + suffix, Action: a}] = true
					}
				}
			}
			for _, name := range got {
				id := refTo(env[name])
				if _, ok := iamServices[tpl.Resources[id].Type]; !ok {
					continue
				}
				if slices.ContainsFunc(uses.Unsigned, func(g function.Grant) bool { return g.Variable() == name }) {
					continue // its calls take no grant
				}
				actions := 0
				for c := range granted {
					if g := (function.Grant{Resource: c.Resource}); g.Variable() == name {
						actions++
					}
				}
				if actions == 0 {
					t.Errorf("%s: %s names %s (%s), on which no policy statement grants any action", fn.LogicalID, name, id, tpl.Resources[id].Type)
				}
			}
			declared := apptest.GrantedCalls(uses)
			for _, c := range apptest.SortedCalls(declared) {
				if !granted[c] {
					t.Errorf("%s uses %s, which its policies do not grant", fn.LogicalID, c)
				}
			}
			for _, c := range apptest.SortedCalls(granted) {
				if !declared[c] {
					t.Errorf("%s is granted %s, which function.Functions does not list: a permission it does not use", fn.LogicalID, c)
				}
			}
		})
	}
	for _, name := range slices.Sorted(maps.Keys(function.Functions)) {
		if !inTemplate[name] {
			t.Errorf("function.Functions has %s, which the template does not deploy", name)
		}
	}
}

// stackResource returns the resource of function.StackResources ("@…")
// whose ARN the statement's resource r is (!Sub of exactly that ARN).
func stackResource(r any) (string, bool) {
	m, _ := r.(map[string]any)
	sub, _ := m["Fn::Sub"].(string)
	for name, arn := range function.StackResources {
		if sub == arn {
			return name, true
		}
	}
	return "", false
}

// refTo returns the logical id that {"Ref": id} or {"Fn::GetAtt": [id,
// "Arn"]} names, or "".
func refTo(v any) string {
	m, _ := v.(map[string]any)
	if g, ok := m["Fn::GetAtt"].([]any); ok && len(g) == 2 && g[1] == "Arn" {
		id, _ := g[0].(string)
		return id
	}
	id, _ := m["Ref"].(string)
	return id
}
