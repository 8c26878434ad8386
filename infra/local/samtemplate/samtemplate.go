// Package samtemplate reads the parts of template.yaml that the local stack
// needs to behave like the deployed one: each function's folder, HTTP routes,
// queue and schedule triggers, environment and policies, the queues with
// their dead-letter queues, and the buckets. goformation's intrinsics
// package reads the YAML and its CloudFormation short forms (!Ref, !Sub,
// !GetAtt, !If, …) into their long forms, left unresolved so that
// references between resources can be followed; the Conditions and the
// Fn::If they decide are evaluated here, with the parameter values each
// caller gives (conditions.go), which goformation's resolution, over the
// whole template with one set of parameters, does not offer.
package samtemplate

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"unicode"
)

// Template is a parsed SAM template.
type Template struct {
	// Resources maps each logical id to its resource.
	Resources map[string]Resource
	// Globals holds the template's Globals section.
	Globals map[string]any
	// Outputs maps each output name to its definition.
	Outputs map[string]any
	// Parameters maps each parameter name to its definition.
	Parameters map[string]any
	// Conditions maps each condition name to its definition.
	Conditions map[string]any
	// Params overrides parameters' defaults where Functions and
	// Environment decide an Fn::If (Condition); nil: the defaults.
	Params map[string]string
}

// Resource is one entry of the Resources section.
type Resource struct {
	Type       string
	Properties map[string]any
	Metadata   map[string]any
	// DeletionPolicy is what CloudFormation does with the resource when
	// the stack deletes it ("Retain", "Delete", …; "" is the default).
	DeletionPolicy string
}

// Function is a Lambda function of the template.
type Function struct {
	LogicalID string
	Dir       string // folder name under functions/, e.g. "wallets"
	Routes    []Route
	Queues    []QueueTrigger
	Schedules []Schedule
	// Environment holds the function's own environment variables, not the
	// Globals ones; values are strings or intrinsic maps ({"Ref": …}).
	Environment map[string]any
	// Statements are the statements of its inline policies (entries of
	// Policies of the form {Statement: …}), and of the SAM policy templates
	// in policyTemplates.
	Statements []Statement
	// OtherPolicies are the other entries of Policies, as written: a
	// managed policy's name, another SAM policy template.
	OtherPolicies []any
}

// Statement is one statement of a function's inline policies.
type Statement struct {
	Effect  string
	Actions []string
	// Resources are as written: {"Fn::GetAtt": ["Table", "Arn"]},
	// {"Fn::Sub": "${Table.Arn}/index/*"}, … (see Template.ARN).
	Resources []any
}

// Route is an HTTP API route of a function.
type Route struct {
	Method string // GET, POST, … or ANY
	Path   string // full path with {param} segments, e.g. "/api/v1/wallets/{id}"
	IAM    bool   // the route requires IAM (SigV4) authorization
}

// QueueTrigger is an SQS event source of a function.
type QueueTrigger struct {
	Queue                   string // local queue name, e.g. "payouts"
	BatchSize               int
	ReportBatchItemFailures bool
	// MaximumConcurrency is the trigger's ScalingConfig
	// MaximumConcurrency, 0 when it sets none.
	MaximumConcurrency int
}

// Schedule is a scheduled event source of a function.
type Schedule struct {
	Expression string // e.g. "rate(1 minute)"
}

// Queue is an SQS queue of the template.
type Queue struct {
	LogicalID              string
	Name                   string // local name: the QueueName without the stack prefix
	DLQ                    string // local name of its dead-letter queue, or ""
	MaxReceiveCount        int
	VisibilityTimeout      int
	MessageRetentionPeriod int
}

// FunctionDir returns the folder under functions/ of the function with
// logicalID: "WalletsFunction" is "wallets", "PayoutWorkerFunction" is
// "payout-worker". Every function's CodeUri is the project root, where the
// Makefile's build-<LogicalId> target builds that folder (sam build looks for
// the Makefile in CodeUri), so the folder follows from the name, as it does
// in the Makefile.
func FunctionDir(logicalID string) string {
	name := strings.TrimSuffix(logicalID, "Function")
	var b strings.Builder
	for i, r := range name {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('-')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Load reads and parses the template at file.
func Load(file string) (*Template, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("samtemplate: %w", err)
	}
	return Parse(b)
}

// Parse parses a template.
func Parse(b []byte) (*Template, error) {
	v, err := parseYAML(b)
	if err != nil {
		return nil, fmt.Errorf("samtemplate: %w", err)
	}
	doc, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("samtemplate: not a mapping at the top")
	}
	t := &Template{
		Resources:  map[string]Resource{},
		Globals:    asMap(doc["Globals"]),
		Outputs:    asMap(doc["Outputs"]),
		Parameters: asMap(doc["Parameters"]),
		Conditions: asMap(doc["Conditions"]),
	}
	for id, v := range asMap(doc["Resources"]) {
		r := asMap(v)
		t.Resources[id] = Resource{
			Type:       asString(r["Type"]),
			Properties: asMap(r["Properties"]),
			Metadata:   asMap(r["Metadata"]),

			DeletionPolicy: asString(r["DeletionPolicy"]),
		}
	}
	return t, nil
}

// Functions returns the template's functions sorted by logical id.
func (t *Template) Functions() []Function {
	var fns []Function
	for _, id := range t.ids("AWS::Serverless::Function") {
		p := t.Resources[id].Properties
		fn := Function{
			LogicalID:   id,
			Dir:         FunctionDir(id),
			Environment: asMap(asMap(p["Environment"])["Variables"]),
		}
		for _, pol := range t.chosen(listOf(p["Policies"])) {
			if st, ok := policyTemplate(pol); ok {
				fn.Statements = append(fn.Statements, st)
				continue
			}
			doc, ok := asMap(pol)["Statement"]
			if !ok || len(asMap(pol)) != 1 {
				fn.OtherPolicies = append(fn.OtherPolicies, pol)
				continue
			}
			for _, st := range t.chosen(listOf(doc)) {
				m := asMap(st)
				s := Statement{Effect: asString(m["Effect"]), Resources: listOf(m["Resource"])}
				for _, a := range listOf(m["Action"]) {
					s.Actions = append(s.Actions, asString(a))
				}
				fn.Statements = append(fn.Statements, s)
			}
		}
		events := asMap(p["Events"])
		for _, name := range sortedKeys(events) {
			ev := asMap(events[name])
			ep := asMap(ev["Properties"])
			switch asString(ev["Type"]) {
			case "HttpApi":
				if ep["Path"] == nil && ep["Method"] == nil { // SAM's default route
					fn.Routes = append(fn.Routes, Route{Path: "$default"})
					continue
				}
				fn.Routes = append(fn.Routes, Route{
					Method: strings.ToUpper(asString(ep["Method"])),
					Path:   asString(ep["Path"]),
					IAM:    asString(asMap(ep["Auth"])["Authorizer"]) == "AWS_IAM",
				})
			case "SQS":
				qt := QueueTrigger{
					Queue: t.queueName(refID(ep["Queue"])), BatchSize: asInt(ep["BatchSize"]),
					MaximumConcurrency: asInt(asMap(ep["ScalingConfig"])["MaximumConcurrency"]),
				}
				if qt.BatchSize == 0 {
					qt.BatchSize = 10
				}
				for _, rt := range asSlice(ep["FunctionResponseTypes"]) {
					if asString(rt) == "ReportBatchItemFailures" {
						qt.ReportBatchItemFailures = true
					}
				}
				fn.Queues = append(fn.Queues, qt)
			case "Schedule", "ScheduleV2":
				fn.Schedules = append(fn.Schedules, Schedule{Expression: asString(firstOf(ep, "Schedule", "ScheduleExpression"))})
			}
		}
		fns = append(fns, fn)
	}
	return fns
}

// policyTemplates maps the SAM policy templates Function understands to
// the action each grants and the parameter naming its resource.
var policyTemplates = map[string]struct{ action, resource string }{
	"AWSSecretsManagerGetSecretValuePolicy": {"secretsmanager:GetSecretValue", "SecretArn"},
}

// policyTemplate returns the statement of the policy template pol, when it
// is one of policyTemplates.
func policyTemplate(pol any) (Statement, bool) {
	m := asMap(pol)
	if len(m) != 1 {
		return Statement{}, false
	}
	for name, params := range m {
		if pt, ok := policyTemplates[name]; ok && len(asMap(params)) == 1 && asMap(params)[pt.resource] != nil {
			return Statement{Effect: "Allow", Actions: []string{pt.action}, Resources: []any{asMap(params)[pt.resource]}}, true
		}
	}
	return Statement{}, false
}

// Environment returns the environment variables the template gives fn: the
// Globals ones, replaced or completed by its own. Values are strings or
// intrinsic maps ({"Ref": …}).
// An Fn::If is decided with t.Params (see EnvironmentWith).
func (t *Template) Environment(fn Function) map[string]any {
	return t.EnvironmentWith(fn, t.Params)
}

// EnvironmentWith is Environment with each Fn::If of a value decided with
// params, which override the parameters' defaults; a variable that it
// makes AWS::NoValue is not set. A value whose condition cannot be decided
// stays as written.
func (t *Template) EnvironmentWith(fn Function, params map[string]string) map[string]any {
	vars := map[string]any{}
	globals := asMap(asMap(asMap(t.Globals["Function"])["Environment"])["Variables"])
	for k, v := range globals {
		vars[k] = v
	}
	for k, v := range fn.Environment {
		vars[k] = v
	}
	for k, v := range vars {
		switch chosen, ok, err := t.Choose(v, params); {
		case err != nil:
		case !ok:
			delete(vars, k)
		default:
			vars[k] = chosen
		}
	}
	return vars
}

// chosen returns the entries of list with each Fn::If decided with
// t.Params, without those it makes AWS::NoValue. An entry whose condition
// cannot be decided stays as written.
func (t *Template) chosen(list []any) []any {
	var out []any
	for _, v := range list {
		switch c, ok, err := t.Choose(v, t.Params); {
		case err != nil:
			out = append(out, v)
		case ok:
			out = append(out, c)
		}
	}
	return out
}

// refIsARN lists the resource types whose Ref is their ARN.
var refIsARN = map[string]bool{"AWS::SecretsManager::Secret": true}

// ARN returns the logical id of the resource whose ARN v is, and what
// follows that ARN in v: !GetAtt X.Arn is (X, ""), !Sub "${X.Arn}/index/*"
// is (X, "/index/*"), and !Ref X is (X, "") when the Ref of X is its ARN (a
// Secrets Manager secret). Any other form is an error.
func (t *Template) ARN(v any) (id, suffix string, err error) {
	m := asMap(v)
	switch {
	case m["Ref"] != nil:
		id = asString(m["Ref"])
		if !refIsARN[t.Resources[id].Type] {
			return "", "", fmt.Errorf("samtemplate: !Ref %s is not an ARN: use !GetAtt %s.Arn", id, id)
		}
	case m["Fn::GetAtt"] != nil:
		g := asSlice(m["Fn::GetAtt"])
		if len(g) != 2 || asString(g[1]) != "Arn" {
			return "", "", fmt.Errorf("samtemplate: %v is not an ARN", v)
		}
		id = asString(g[0])
	case m["Fn::Sub"] != nil:
		sub := asString(m["Fn::Sub"])
		ref, rest, ok := strings.Cut(strings.TrimPrefix(sub, "${"), "}")
		if !strings.HasPrefix(sub, "${") || !ok || !strings.HasSuffix(ref, ".Arn") || strings.Contains(rest, "${") {
			return "", "", fmt.Errorf("samtemplate: !Sub %q is not ${X.Arn} and a plain suffix", sub)
		}
		id, suffix = strings.TrimSuffix(ref, ".Arn"), rest
	default:
		return "", "", fmt.Errorf("samtemplate: %v is not an ARN", v)
	}
	if _, ok := t.Resources[id]; !ok {
		return "", "", fmt.Errorf("samtemplate: %v: no resource %s", v, id)
	}
	return id, suffix, nil
}

// Queues returns the template's queues, dead-letter queues first, so that
// creating them in order satisfies every redrive policy.
func (t *Template) Queues() []Queue {
	var qs []Queue
	for _, id := range t.ids("AWS::SQS::Queue") {
		p := t.Resources[id].Properties
		q := Queue{
			LogicalID:              id,
			Name:                   t.queueName(id),
			VisibilityTimeout:      asInt(p["VisibilityTimeout"]),
			MessageRetentionPeriod: asInt(p["MessageRetentionPeriod"]),
		}
		if rp := asMap(p["RedrivePolicy"]); rp != nil {
			q.DLQ = t.queueName(refID(rp["deadLetterTargetArn"]))
			q.MaxReceiveCount = asInt(rp["maxReceiveCount"])
		}
		qs = append(qs, q)
	}
	sort.SliceStable(qs, func(i, j int) bool { return qs[i].DLQ == "" && qs[j].DLQ != "" })
	return qs
}

// Buckets returns the local names of the template's S3 buckets.
func (t *Template) Buckets() []string {
	var names []string
	for _, id := range t.ids("AWS::S3::Bucket") {
		names = append(names, localName(t.Resources[id].Properties["BucketName"], id))
	}
	return names
}

// ids returns the logical ids of the resources of type typ, sorted.
func (t *Template) ids(typ string) []string {
	var ids []string
	for id, r := range t.Resources {
		if r.Type == typ {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

func (t *Template) queueName(id string) string {
	r, ok := t.Resources[id]
	if !ok {
		return ""
	}
	return localName(r.Properties["QueueName"], id)
}

// localName turns a physical name such as !Sub "${AWS::StackName}-payouts"
// into the local one, "payouts"; without a name it falls back to the
// lower-cased logical id.
func localName(v any, logicalID string) string {
	s := asString(v)
	if sub, ok := asMap(v)["Fn::Sub"]; ok {
		s = asString(sub)
	}
	if s == "" {
		return strings.ToLower(logicalID)
	}
	if i := strings.LastIndex(s, "}"); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimLeft(s, "-_/")
}
