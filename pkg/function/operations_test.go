package function_test

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"payments/infra/local/samtemplate"
)

// The runbook's alarm sections: under this heading, every "### " heading
// names one or more alarms by logical id, comma-separated.
const (
	runbookFile    = "../../docs/operations.md"
	runbookAlarms  = "## Alarms"
	hookNamePrefix = "CodeDeployHook_"
)

// readRunbook returns how many sections of the runbook's alarm part name
// each alarm, and the headings there that are not lists of logical ids.
func readRunbook(t *testing.T) (sections map[string]int, bad []string) {
	t.Helper()
	b, err := os.ReadFile(runbookFile)
	if err != nil {
		t.Fatal(err)
	}
	id := regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*$`)
	sections = map[string]int{}
	in := false
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "## "):
			in = line == runbookAlarms
		case in && strings.HasPrefix(line, "### "):
			for name := range strings.SplitSeq(strings.TrimPrefix(line, "### "), ",") {
				name = strings.Trim(strings.TrimSpace(name), "`")
				if !id.MatchString(name) {
					bad = append(bad, line)
					break
				}
				sections[name]++
			}
		}
	}
	return sections, bad
}

// metricsNamespace is the namespace of the functions' own metrics in the
// template (the Globals' METRICS_NAMESPACE).
const metricsNamespace = "payments/${Stage}"

// declaredMetrics returns the names of the metrics pkg/metrics declares
// (the constants of names.go), which are all the functions write.
func declaredMetrics() (map[string]bool, error) {
	f, err := parser.ParseFile(token.NewFileSet(), "../../pkg/metrics/names.go", nil, 0)
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			for _, v := range spec.(*ast.ValueSpec).Values {
				if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					names[strings.Trim(lit.Value, `"`)] = true
				}
			}
		}
	}
	return names, nil
}

// dashboardMetrics returns the metrics of namespace that the dashboard's
// widgets read ("." repeats the namespace of the line before).
func dashboardMetrics(body any, namespace string) ([]string, error) {
	var dash struct {
		Widgets []struct {
			Properties struct {
				Metrics [][]any `json:"metrics"`
			} `json:"properties"`
		} `json:"widgets"`
	}
	if err := json.Unmarshal([]byte(fmt.Sprint(mapOf(body)["Fn::Sub"])), &dash); err != nil {
		return nil, err
	}
	var out []string
	for _, w := range dash.Widgets {
		ns := ""
		for _, m := range w.Properties.Metrics {
			if len(m) < 2 {
				continue
			}
			if first, ok := m[0].(string); ok && first != "." {
				ns = first
			}
			if name, ok := m[1].(string); ok && ns == namespace {
				out = append(out, name)
			}
		}
	}
	return out, nil
}

// alarmMetric is one metric an alarm watches.
type alarmMetric struct {
	namespace, name string
	dims            map[string]any
}

// alarmMetrics returns the metrics alarm p watches: its own, or those of
// its metric math.
func alarmMetrics(p map[string]any) []alarmMetric {
	one := func(m map[string]any) alarmMetric {
		x := alarmMetric{namespace: fmt.Sprint(m["Namespace"]), name: fmt.Sprint(m["MetricName"]), dims: map[string]any{}}
		if ns, ok := m["Namespace"].(map[string]any); ok {
			x.namespace = fmt.Sprint(ns["Fn::Sub"])
		}
		ds, _ := m["Dimensions"].([]any)
		for _, d := range ds {
			d, _ := d.(map[string]any)
			x.dims[fmt.Sprint(d["Name"])] = d["Value"]
		}
		return x
	}
	if ms, ok := p["Metrics"].([]any); ok {
		var out []alarmMetric
		for _, q := range ms {
			stat, _ := q.(map[string]any)["MetricStat"].(map[string]any)
			if m, ok := stat["Metric"].(map[string]any); ok {
				out = append(out, one(m))
			}
		}
		return out
	}
	return []alarmMetric{one(p)}
}

// cfnRef, cfnGetAtt and alarmName are intrinsics as samtemplate decodes
// them: !Ref id, !GetAtt id.attr, and an alarm's !Sub name.
func cfnRef(id string) any          { return map[string]any{"Ref": id} }
func cfnGetAtt(id, attr string) any { return map[string]any{"Fn::GetAtt": []any{id, attr}} }
func alarmName(id string) any       { return map[string]any{"Fn::Sub": "payments-${Stage}-" + id} }

// listHas reports whether list, a YAML list, holds v.
func listHas(list any, v any) bool {
	l, _ := list.([]any)
	return slices.ContainsFunc(l, func(x any) bool { return reflect.DeepEqual(x, v) })
}

// mapOf returns v as a YAML mapping, nil when it is none.
func mapOf(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// withGlobals returns the function's setting over the Globals one, as SAM
// merges mappings: own keys win.
func withGlobals(global, own any) map[string]any {
	m := map[string]any{}
	maps.Copy(m, mapOf(global))
	maps.Copy(m, mapOf(own))
	return m
}

// opsProblems lists what keeps tpl from its operations rules, and the
// template and the runbook (sections, by alarm id) apart.
func opsProblems(tpl *samtemplate.Template, sections map[string]int) []string {
	var probs []string
	problem := func(format string, a ...any) { probs = append(probs, fmt.Sprintf(format, a...)) }
	alarms := map[string]map[string]any{}
	var topics []string
	for id, r := range tpl.Resources {
		switch r.Type {
		case "AWS::CloudWatch::Alarm":
			alarms[id] = r.Properties
		case "AWS::SNS::Topic":
			topics = append(topics, id)
		}
	}
	if len(topics) != 1 {
		problem("want one SNS topic for the alarms, have %v", topics)
		return probs
	}
	// watching returns the alarms over metric name whose dimension dim is v.
	watching := func(name, dim string, v any) []string {
		var ids []string
		for id, p := range alarms {
			for _, m := range alarmMetrics(p) {
				if m.name == name && (dim == "" || reflect.DeepEqual(m.dims[dim], v)) {
					ids = append(ids, id)
				}
			}
		}
		sort.Strings(ids)
		return ids
	}
	declared, err := declaredMetrics()
	if err != nil {
		problem("read pkg/metrics/names.go: %v", err)
	}
	for id, p := range alarms {
		for _, m := range alarmMetrics(p) {
			if m.namespace == metricsNamespace && !declared[m.name] {
				problem("alarm %s watches %s, which pkg/metrics does not declare", id, m.name)
			}
		}
	}
	for id, r := range tpl.Resources {
		if r.Type != "AWS::CloudWatch::Dashboard" {
			continue
		}
		names, err := dashboardMetrics(r.Properties["DashboardBody"], metricsNamespace)
		if err != nil {
			problem("dashboard %s: its body is not JSON: %v", id, err)
		}
		for _, name := range names {
			if !declared[name] {
				problem("dashboard %s reads %s, which pkg/metrics does not declare", id, name)
			}
		}
	}
	for id, p := range alarms {
		if !listHas(p["AlarmActions"], cfnRef(topics[0])) || !listHas(p["OKActions"], cfnRef(topics[0])) {
			problem("alarm %s does not notify %s in both AlarmActions and OKActions", id, topics[0])
		}
		if !reflect.DeepEqual(p["AlarmName"], alarmName(id)) {
			problem("alarm %s: AlarmName %v, want !Sub payments-${Stage}-%s (the runbook's section)", id, p["AlarmName"], id)
		}
		if sections[id] != 1 {
			problem("alarm %s has %d sections in docs/operations.md, want 1 (### %s under %q)", id, sections[id], id, runbookAlarms)
		}
	}
	for id := range sections {
		if alarms[id] == nil {
			problem("docs/operations.md has a section for %s, which is no alarm of template.yaml", id)
		}
	}
	for _, q := range tpl.Queues() {
		if q.DLQ == "" {
			continue
		}
		rp := mapOf(tpl.Resources[q.LogicalID].Properties["RedrivePolicy"])
		att, _ := mapOf(rp["deadLetterTargetArn"])["Fn::GetAtt"].([]any)
		if len(watching("ApproximateAgeOfOldestMessage", "QueueName", cfnGetAtt(q.LogicalID, "QueueName"))) == 0 {
			problem("work queue %s has no ApproximateAgeOfOldestMessage alarm", q.LogicalID)
		}
		if len(att) == 0 {
			problem("work queue %s: deadLetterTargetArn is not !GetAtt <queue>.Arn", q.LogicalID)
			continue
		}
		if dlq := fmt.Sprint(att[0]); len(watching("ApproximateNumberOfMessagesVisible", "QueueName", cfnGetAtt(dlq, "QueueName"))) == 0 {
			problem("dead-letter queue %s of %s has no ApproximateNumberOfMessagesVisible alarm", dlq, q.LogicalID)
		}
	}
	api5xx := watching("5xx", "", nil)
	if len(api5xx) != 1 {
		problem("want one alarm over the API's 5xx, have %v", api5xx)
		api5xx = append(api5xx, "")
	}
	globals := mapOf(tpl.Globals["Function"])
	for _, fn := range tpl.Functions() {
		p := tpl.Resources[fn.LogicalID].Properties
		if name := fmt.Sprint(mapOf(p["FunctionName"])["Fn::Sub"]); strings.HasPrefix(name, hookNamePrefix) {
			// The pre-traffic hook: deployed as it is, watched by the
			// deployments it checks.
			if dp := mapOf(p["DeploymentPreference"]); dp["Enabled"] != false {
				problem("hook %s: want DeploymentPreference {Enabled: false}", fn.LogicalID)
			}
			continue
		}
		var errs []string
		for _, metricName := range []string{"Errors", "Throttles"} {
			ids := watching(metricName, "FunctionName", cfnRef(fn.LogicalID))
			if len(ids) == 0 {
				problem("function %s has no %s alarm (FunctionName: !Ref %s)", fn.LogicalID, metricName, fn.LogicalID)
			}
			if metricName == "Errors" {
				errs = ids
			}
		}
		if a := withGlobals(globals, p); a["AutoPublishAlias"] == nil || a["Tracing"] != "Active" {
			problem("function %s: AutoPublishAlias %v, Tracing %v: want an alias and Active", fn.LogicalID, a["AutoPublishAlias"], a["Tracing"])
		}
		dp := withGlobals(globals["DeploymentPreference"], p["DeploymentPreference"])
		if dp["Type"] == nil || mapOf(dp["Hooks"])["PreTraffic"] == nil {
			problem("function %s has no deployment preference with a Type and a PreTraffic hook", fn.LogicalID)
		}
		if len(errs) == 0 || !listHas(dp["Alarms"], cfnRef(errs[0])) {
			problem("function %s: its deployment is not rolled back by its Errors alarm %v", fn.LogicalID, errs)
		}
		if http := len(fn.Routes) > 0; http {
			ids := watching("InternalErrors", "Function", fn.Dir)
			if len(ids) == 0 || !listHas(dp["Alarms"], cfnRef(ids[0])) {
				problem("HTTP function %s: its deployment is not rolled back by an InternalErrors alarm (Function: %s) %v", fn.LogicalID, fn.Dir, ids)
			}
		}
		switch http := len(fn.Routes) > 0; {
		case http && !reflect.DeepEqual(dp["Type"], cfnRef("DeploymentType")):
			problem("HTTP function %s: deployment Type %v, want the stage's !Ref DeploymentType", fn.LogicalID, dp["Type"])
		case http && !listHas(dp["Alarms"], alarmName(api5xx[0])):
			problem("HTTP function %s: its deployment is not rolled back by the API's 5xx alarm %s (by AlarmName)", fn.LogicalID, api5xx[0])
		case !http && dp["Type"] != "AllAtOnce":
			problem("worker %s: deployment Type %v, want AllAtOnce", fn.LogicalID, dp["Type"])
		}
	}
	sort.Strings(probs)
	return probs
}

// TestOperationsAlarmsAndDeploys holds template.yaml to docs/operations.md
// and to its operations rules: every work queue has an age alarm and every
// dead-letter queue a depth alarm; every function but the pre-traffic hook
// has Errors and Throttles alarms, an alias, Tracing: Active and a
// deployment preference rolled back by its Errors alarm (HTTP functions:
// and their InternalErrors alarm and the API's 5xx rate; the stage's
// DeploymentType; workers AllAtOnce); every alarm notifies the one topic
// when it fires and clears, and has one section in the runbook, which has
// none for an alarm that does not exist; the alarms and the dashboard read
// of the functions' own metrics only those pkg/metrics declares.
func TestOperationsAlarmsAndDeploys(t *testing.T) {
	tpl, err := samtemplate.Load("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sections, bad := readRunbook(t)
	for _, h := range bad {
		t.Errorf("docs/operations.md: %q under %q is not a list of alarm ids", h, runbookAlarms)
	}
	for _, p := range opsProblems(tpl, sections) {
		t.Error(p)
	}
	hook := fmt.Sprint(mapOf(mapOf(mapOf(tpl.Globals["Function"])["DeploymentPreference"])["Hooks"])["PreTraffic"])
	t.Run("hook", func(t *testing.T) {
		r, ok := tpl.Resources["DeployCheckFunction"]
		if !ok {
			t.Fatal("DeployCheckFunction, the pre-traffic hook, is not in template.yaml")
		}
		if name := fmt.Sprint(mapOf(r.Properties["FunctionName"])["Fn::Sub"]); !strings.HasPrefix(name, hookNamePrefix) || hook != fmt.Sprint(cfnRef("DeployCheckFunction")) {
			t.Errorf("PreTraffic hook %s, FunctionName %q: want !Ref DeployCheckFunction named %s…", hook, name, hookNamePrefix)
		}
	})
	raw, err := os.ReadFile("../../samconfig.toml")
	if err != nil {
		t.Fatal(err)
	}
	if _, prod, _ := strings.Cut(string(raw), "[prod.deploy.parameters]"); !regexp.MustCompile(`parameter_overrides = ".*DeploymentType=Canary`).MatchString(prod) {
		t.Error("samconfig.toml: prod does not deploy its HTTP functions by canary (DeploymentType=Canary…)")
	}
}

// TestOperationsCheckFails shows that opsProblems finds each kind of gap:
// the template, or the runbook, with one thing taken out or added.
func TestOperationsCheckFails(t *testing.T) {
	tests := []struct {
		name   string
		change func(*samtemplate.Template, map[string]int)
		want   string
	}{
		{"no DLQ alarm", func(t *samtemplate.Template, _ map[string]int) { delete(t.Resources, "PayoutsDLQDepth") },
			"dead-letter queue PayoutsDLQ of PayoutsQueue has no ApproximateNumberOfMessagesVisible alarm"},
		{"no age alarm", func(t *samtemplate.Template, _ map[string]int) { delete(t.Resources, "FundsQueueAge") },
			"work queue FundsQueue has no ApproximateAgeOfOldestMessage alarm"},
		{"no throttles alarm", func(t *samtemplate.Template, _ map[string]int) { delete(t.Resources, "SweeperFunctionThrottles") },
			"function SweeperFunction has no Throttles alarm"},
		{"no errors alarm", func(t *samtemplate.Template, _ map[string]int) { delete(t.Resources, "PaymentsFunctionErrors") },
			"function PaymentsFunction: its deployment is not rolled back by its Errors alarm"},
		{"no alias", func(t *samtemplate.Template, _ map[string]int) {
			delete(mapOf(t.Globals["Function"]), "AutoPublishAlias")
		},
			"function AuthFunction: AutoPublishAlias <nil>"},
		{"no OK action", func(t *samtemplate.Template, _ map[string]int) {
			delete(t.Resources["ApiLatencyP99"].Properties, "OKActions")
		}, "alarm ApiLatencyP99 does not notify"},
		{"canary worker", func(t *samtemplate.Template, _ map[string]int) {
			mapOf(t.Resources["PayoutWorkerFunction"].Properties["DeploymentPreference"])["Type"] = "Canary10Percent5Minutes"
		}, "worker PayoutWorkerFunction: deployment Type Canary10Percent5Minutes"},
		{"no internal errors alarm", func(t *samtemplate.Template, _ map[string]int) { delete(t.Resources, "CardsFunctionInternalErrors") },
			"HTTP function CardsFunction: its deployment is not rolled back by an InternalErrors alarm (Function: cards)"},
		{"an alarm over a metric no function writes", func(t *samtemplate.Template, _ map[string]int) {
			t.Resources["CardMovementsOpenPastWindow"].Properties["MetricName"] = "CardMovementsOpen"
		}, "alarm CardMovementsOpenPastWindow watches CardMovementsOpen, which pkg/metrics does not declare"},
		{"a dashboard over a metric no function writes", func(t *samtemplate.Template, _ map[string]int) {
			for _, r := range t.Resources {
				if r.Type == "AWS::CloudWatch::Dashboard" {
					body := mapOf(r.Properties["DashboardBody"])
					body["Fn::Sub"] = strings.Replace(fmt.Sprint(body["Fn::Sub"]), `"PayoutsAccepted"`, `"PayoutsTaken"`, 1)
				}
			}
		}, "reads PayoutsTaken, which pkg/metrics does not declare"},
		{"no section", func(_ *samtemplate.Template, s map[string]int) { delete(s, "WebhookDeliveriesFailed") },
			"alarm WebhookDeliveriesFailed has 0 sections"},
		{"section of no alarm", func(_ *samtemplate.Template, s map[string]int) { s["GoneAlarm"] = 1 },
			"docs/operations.md has a section for GoneAlarm"},
	}
	sections, _ := readRunbook(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tpl, err := samtemplate.Load("../../template.yaml")
			if err != nil {
				t.Fatal(err)
			}
			s := map[string]int{}
			for k, v := range sections {
				s[k] = v
			}
			tt.change(tpl, s)
			probs := opsProblems(tpl, s)
			if !slices.ContainsFunc(probs, func(p string) bool { return strings.Contains(p, tt.want) }) {
				t.Errorf("no problem %q among %q", tt.want, probs)
			}
		})
	}
}
