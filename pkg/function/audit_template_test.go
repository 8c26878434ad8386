package function_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestAuditTableIsAppendOnly reads the template: no policy of any function
// or role allows an action on the audit table (AuditTable) but PutItem and
// Query, none names it through a SAM policy template (which grant more),
// and no statement grants a DynamoDB write on every resource; the table
// keeps point-in-time recovery, deletion protection in prod, and is kept
// when the stack goes.
func TestAuditTableIsAppendOnly(t *testing.T) {
	tpl := loadTemplate(t, map[string]string{"Stage": "prod"})
	allowed := []string{"dynamodb:PutItem", "dynamodb:Query"}
	writes := []string{"dynamodb:*", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem",
		"dynamodb:PutItem", "dynamodb:TransactWriteItems", "dynamodb:PartiQLUpdate", "dynamodb:PartiQLDelete", "dynamodb:DeleteTable"}
	seen := 0
	for id, res := range tpl.Resources {
		var policies []any
		switch res.Type {
		case "AWS::Serverless::Function":
			policies, _ = res.Properties["Policies"].([]any)
		case "AWS::IAM::Role":
			for _, p := range asList(res.Properties["Policies"]) {
				policies = append(policies, mapOf(p)["PolicyDocument"])
			}
		case "AWS::IAM::Policy", "AWS::IAM::ManagedPolicy":
			policies = []any{res.Properties["PolicyDocument"]}
		default:
			continue
		}
		for _, p := range policies {
			doc := mapOf(p)
			if doc == nil {
				continue
			}
			if _, ok := doc["Statement"]; !ok { // a SAM policy template
				if b, _ := json.Marshal(doc); strings.Contains(string(b), "AuditTable") {
					t.Errorf("%s: a SAM policy template names the audit table: %s", id, b)
				}
				continue
			}
			for _, st := range asList(doc["Statement"]) {
				s := mapOf(st)
				if s["Effect"] != "Allow" {
					continue
				}
				actions := stringList(s["Action"])
				resource, _ := json.Marshal(s["Resource"])
				if strings.Contains(string(resource), "AuditTable") {
					seen++
					for _, a := range actions {
						if !slices.Contains(allowed, a) {
							t.Errorf("%s may %s on the audit table: only %v", id, a, allowed)
						}
					}
				}
				if string(resource) == `"*"` {
					for _, a := range actions {
						if slices.Contains(writes, a) {
							t.Errorf("%s may %s on every resource, the audit table among them", id, a)
						}
					}
				}
			}
		}
	}
	if seen == 0 {
		t.Error("no policy names the audit table: the admin function records and reads the trail")
	}
	table := tpl.Resources["AuditTable"]
	if table.DeletionPolicy != "Retain" {
		t.Errorf("AuditTable's DeletionPolicy is %q, want Retain", table.DeletionPolicy)
	}
	pitr := mapOf(table.Properties["PointInTimeRecoverySpecification"])
	if pitr["PointInTimeRecoveryEnabled"] != true {
		t.Errorf("AuditTable has no point-in-time recovery: %v", pitr)
	}
	if protected, _, err := tpl.Choose(table.Properties["DeletionProtectionEnabled"], tpl.Params); err != nil || protected != true {
		t.Errorf("AuditTable in prod: deletion protection %v (%v), want true", protected, err)
	}
}

// asList returns v as a list ([] when it is none).
func asList(v any) []any {
	l, _ := v.([]any)
	return l
}
