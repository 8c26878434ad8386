// Package samtemplate reads the parts of template.yaml that the local stack
// needs to behave like the deployed one: each function's folder, HTTP routes,
// queue and schedule triggers, the queues with their dead-letter queues, and
// the buckets. It understands the CloudFormation short forms (!Ref, !Sub,
// !GetAtt, !If, …) well enough to follow references between resources.
package samtemplate

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"
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
}

// Resource is one entry of the Resources section.
type Resource struct {
	Type       string
	Properties map[string]any
	Metadata   map[string]any
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
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return nil, fmt.Errorf("samtemplate: %w", err)
	}
	doc, ok := decode(&root).(map[string]any)
	if !ok {
		return nil, fmt.Errorf("samtemplate: not a mapping at the top")
	}
	t := &Template{
		Resources:  map[string]Resource{},
		Globals:    asMap(doc["Globals"]),
		Outputs:    asMap(doc["Outputs"]),
		Parameters: asMap(doc["Parameters"]),
	}
	for id, v := range asMap(doc["Resources"]) {
		r := asMap(v)
		t.Resources[id] = Resource{
			Type:       asString(r["Type"]),
			Properties: asMap(r["Properties"]),
			Metadata:   asMap(r["Metadata"]),
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
		events := asMap(p["Events"])
		for _, name := range sortedKeys(events) {
			ev := asMap(events[name])
			ep := asMap(ev["Properties"])
			switch asString(ev["Type"]) {
			case "HttpApi":
				fn.Routes = append(fn.Routes, Route{
					Method: strings.ToUpper(asString(ep["Method"])),
					Path:   asString(ep["Path"]),
					IAM:    asString(asMap(ep["Auth"])["Authorizer"]) == "AWS_IAM",
				})
			case "SQS":
				qt := QueueTrigger{Queue: t.queueName(refID(ep["Queue"])), BatchSize: asInt(ep["BatchSize"])}
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

// refID returns the logical id that an intrinsic ({"Ref": id} or
// {"Fn::GetAtt": [id, attr]} or "id.Attr") points at.
func refID(v any) string {
	m := asMap(v)
	if r, ok := m["Ref"]; ok {
		return asString(r)
	}
	switch g := m["Fn::GetAtt"].(type) {
	case []any:
		if len(g) > 0 {
			return asString(g[0])
		}
	case string:
		id, _, _ := strings.Cut(g, ".")
		return id
	}
	return ""
}

// decode turns a YAML node into plain Go values, expanding the short form of
// an intrinsic (!Ref x) into its long form ({"Ref": x}).
func decode(n *yaml.Node) any {
	var v any
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil
		}
		return decode(n.Content[0])
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			m[n.Content[i].Value] = decode(n.Content[i+1])
		}
		v = m
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			s = append(s, decode(c))
		}
		v = s
	case yaml.AliasNode:
		return decode(n.Alias)
	default:
		var x any
		if err := n.Decode(&x); err != nil {
			x = n.Value
		}
		if n.Tag != "" && strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
			x = n.Value
		}
		v = x
	}
	switch tag := n.Tag; {
	case tag == "!Ref":
		return map[string]any{"Ref": v}
	case tag == "!GetAtt":
		if s, ok := v.(string); ok {
			id, attr, _ := strings.Cut(s, ".")
			return map[string]any{"Fn::GetAtt": []any{id, attr}}
		}
		return map[string]any{"Fn::GetAtt": v}
	case strings.HasPrefix(tag, "!") && !strings.HasPrefix(tag, "!!"):
		return map[string]any{"Fn::" + tag[1:]: v}
	}
	return v
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

func asString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int:
		return fmt.Sprint(x)
	}
	return ""
}

func asInt(v any) int {
	n, _ := v.(int)
	return n
}

func firstOf(m map[string]any, keys ...string) any {
	for _, k := range keys {
		if v, ok := m[k]; ok {
			return v
		}
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
