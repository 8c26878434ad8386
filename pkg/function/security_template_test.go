package function_test

import (
	"fmt"
	"path"
	"reflect"
	"slices"
	"testing"

	"payments/infra/local/samtemplate"
)

// loadTemplate reads template.yaml with params over its defaults.
func loadTemplate(t *testing.T, params map[string]string) *samtemplate.Template {
	t.Helper()
	tpl, err := samtemplate.Load("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tpl.Params = params
	return tpl
}

// keyStatements returns the statements of the key policy of the KMS key
// id, each Fn::If decided with the template's Params.
func keyStatements(t *testing.T, tpl *samtemplate.Template, id string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, st := range mapOf(tpl.Resources[id].Properties["KeyPolicy"])["Statement"].([]any) {
		chosen, ok, err := tpl.Choose(st, tpl.Params)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			out = append(out, mapOf(chosen))
		}
	}
	return out
}

// stringList returns v, a string or a list of strings, as a list.
func stringList(v any) []string {
	if s, ok := v.(string); ok {
		return []string{s}
	}
	var out []string
	for _, x := range v.([]any) {
		out = append(out, fmt.Sprint(x))
	}
	return out
}

// usesKey reports whether action, which may end in a wildcard, allows a
// cryptographic operation with a key.
func usesKey(action string) bool {
	for _, op := range []string{"Encrypt", "Decrypt", "ReEncryptFrom", "ReEncryptTo", "GenerateDataKey",
		"GenerateDataKeyWithoutPlaintext", "GenerateDataKeyPair", "GenerateMac", "Sign", "Verify", "DeriveSharedSecret"} {
		if ok, _ := path.Match(action, "kms:"+op); ok {
			return true
		}
	}
	return false
}

// rolePattern is the ARN pattern of the role SAM makes for function id.
func rolePattern(id string) any {
	return map[string]any{"Fn::Sub": "arn:${AWS::Partition}:iam::${AWS::AccountId}:role/${AWS::StackName}-" + id + "Role-*"}
}

// TestCardKeyNamesItsUsers: the card key's administrators cannot use it;
// in sandbox mode only the cards function's and the sweeper's roles may,
// directly (no AWS service on their behalf) and with a card's encryption
// context; in production mode nothing may, and no function is given the
// key or granted an action on it.
func TestCardKeyNamesItsUsers(t *testing.T) {
	for _, mode := range []string{"sandbox", "production"} {
		t.Run(mode, func(t *testing.T) {
			tpl := loadTemplate(t, map[string]string{"Mode": mode, "Stage": "prod"})
			var users []map[string]any
			for _, st := range keyStatements(t, tpl, "CardKey") {
				actions := stringList(st["Action"])
				if !slices.ContainsFunc(actions, usesKey) {
					continue
				}
				if st["Sid"] == "KeyAdministrators" {
					t.Errorf("the administrators' statement allows %v", actions)
				}
				users = append(users, st)
			}
			var wantUsers []any
			if mode == "sandbox" {
				wantUsers = []any{rolePattern("CardsFunction"), rolePattern("SweeperFunction")}
			}
			if len(users) != len(wantUsers)/2 {
				t.Fatalf("%d statements allow using the key, want %d", len(users), len(wantUsers)/2)
			}
			for _, st := range users {
				if got := stringList(st["Action"]); !reflect.DeepEqual(got, []string{"kms:GenerateDataKey", "kms:Decrypt"}) {
					t.Errorf("key users may %v, want GenerateDataKey and Decrypt only", got)
				}
				cond := mapOf(st["Condition"])
				if got := mapOf(cond["ArnLike"])["aws:PrincipalArn"]; !reflect.DeepEqual(got, wantUsers) {
					t.Errorf("key users %v, want %v", got, wantUsers)
				}
				null := mapOf(cond["Null"])
				for key, want := range map[string]string{"kms:ViaService": "true", "kms:EncryptionContext:card_id": "false", "kms:EncryptionContext:field": "false"} {
					if null[key] != want {
						t.Errorf("Null %s is %v, want %s", key, null[key], want)
					}
				}
				if got := mapOf(cond["ForAllValues:StringEquals"])["kms:EncryptionContextKeys"]; !reflect.DeepEqual(got, []any{"company_id", "card_id", "field"}) {
					t.Errorf("encryption context keys %v", got)
				}
			}
			for _, fn := range tpl.Functions() {
				env := tpl.Environment(fn)
				_, named := env["CARD_KEY_ARN"]
				granted := false
				for _, st := range fn.Statements {
					for _, r := range st.Resources {
						if id, _, err := tpl.ARN(r); err == nil && id == "CardKey" {
							granted = true
						}
					}
				}
				may := mode == "sandbox" && (fn.LogicalID == "CardsFunction" || fn.LogicalID == "SweeperFunction")
				if named != may || granted != may {
					t.Errorf("%s: given the card key %v, granted actions on it %v; want %v", fn.LogicalID, named, granted, may)
				}
			}
		})
	}
}

// TestDocumentsAreEncryptedWithTheirKeyAndLogged: the documents bucket is
// encrypted with its own key, used only through S3 by the roles that read
// and write documents, and its accesses are logged for as long as the
// stage keeps logs.
func TestDocumentsAreEncryptedWithTheirKeyAndLogged(t *testing.T) {
	tpl := loadTemplate(t, nil)
	p := tpl.Resources["DocumentsBucket"].Properties
	enc := mapOf(p["BucketEncryption"])["ServerSideEncryptionConfiguration"].([]any)
	def := mapOf(mapOf(enc[0])["ServerSideEncryptionByDefault"])
	if def["SSEAlgorithm"] != "aws:kms" || !reflect.DeepEqual(def["KMSMasterKeyID"], cfnGetAtt("DocumentsKey", "Arn")) {
		t.Errorf("documents encrypted with %v", def)
	}
	if got := mapOf(p["LoggingConfiguration"])["DestinationBucketName"]; !reflect.DeepEqual(got, cfnRef("DocumentsAccessLogsBucket")) {
		t.Errorf("documents' access logged to %v", got)
	}
	rules := mapOf(tpl.Resources["DocumentsAccessLogsBucket"].Properties["LifecycleConfiguration"])["Rules"].([]any)
	if got := mapOf(rules[0])["ExpirationInDays"]; !reflect.DeepEqual(got, cfnRef("LogRetentionDays")) {
		t.Errorf("access logs expire after %v, want LogRetentionDays", got)
	}
	for _, st := range keyStatements(t, tpl, "DocumentsKey") {
		if !slices.ContainsFunc(stringList(st["Action"]), usesKey) {
			continue
		}
		cond := mapOf(st["Condition"])
		if via := mapOf(cond["StringEquals"])["kms:ViaService"]; !reflect.DeepEqual(via, map[string]any{"Fn::Sub": "s3.${AWS::Region}.amazonaws.com"}) {
			t.Errorf("documents key used via %v, want S3 only", via)
		}
		want := []any{rolePattern("CustomersFunction"), rolePattern("AdminFunction")}
		if got := mapOf(cond["ArnLike"])["aws:PrincipalArn"]; !reflect.DeepEqual(got, want) {
			t.Errorf("documents key users %v, want %v", got, want)
		}
	}
}

// TestLogsAreKeptAsTheStageSays: every function logs to a group the
// template declares, kept LogRetentionDays like the API's access log, and
// prod keeps them a year.
func TestLogsAreKeptAsTheStageSays(t *testing.T) {
	tpl := loadTemplate(t, nil)
	retention := cfnRef("LogRetentionDays")
	for _, fn := range tpl.Functions() {
		group := mapOf(tpl.Resources[fn.LogicalID].Properties["LoggingConfig"])["LogGroup"]
		id, _ := mapOf(group)["Ref"].(string)
		res, ok := tpl.Resources[id]
		if !ok || res.Type != "AWS::Logs::LogGroup" {
			t.Errorf("%s logs to %v, not a log group of the template", fn.LogicalID, group)
			continue
		}
		if !reflect.DeepEqual(res.Properties["RetentionInDays"], retention) {
			t.Errorf("%s keeps %v days", id, res.Properties["RetentionInDays"])
		}
	}
	if got := tpl.Resources["ApiAccessLogs"].Properties["RetentionInDays"]; !reflect.DeepEqual(got, retention) {
		t.Errorf("the access log keeps %v days", got)
	}
	if got := samconfigParameter(t, "prod", "LogRetentionDays"); got != "365" {
		t.Errorf("prod keeps logs %q days, want 365", got)
	}
}

// TestQueuesRefuseInsecureTransport: one policy denies every action not
// made over TLS on every queue of the template.
func TestQueuesRefuseInsecureTransport(t *testing.T) {
	tpl := loadTemplate(t, nil)
	p := tpl.Resources["QueuesTlsOnlyPolicy"].Properties
	st := mapOf(mapOf(p["PolicyDocument"])["Statement"].([]any)[0])
	if st["Effect"] != "Deny" || st["Action"] != "sqs:*" || !reflect.DeepEqual(mapOf(mapOf(st["Condition"])["Bool"])["aws:SecureTransport"], "false") {
		t.Errorf("queue policy statement %v", st)
	}
	for _, q := range tpl.Queues() {
		if !listHas(p["Queues"], cfnRef(q.LogicalID)) || !listHas(st["Resource"], cfnGetAtt(q.LogicalID, "Arn")) {
			t.Errorf("queue %s is not under the TLS-only policy", q.LogicalID)
		}
	}
}

// TestNoKeyIsOpenToTheAccount: no KMS key of the template allows kms:* or
// lets a principal use it (encrypt, decrypt, sign) unless a condition names
// the roles (aws:PrincipalArn); so an IAM policy granting kms:Decrypt on
// "*" opens none of them. The webhook secrets' key is used by the roles
// that seal and open them, with an endpoint's context.
func TestNoKeyIsOpenToTheAccount(t *testing.T) {
	tpl := loadTemplate(t, nil)
	keys := 0
	for id, r := range tpl.Resources {
		if r.Type != "AWS::KMS::Key" {
			continue
		}
		keys++
		for _, st := range keyStatements(t, tpl, id) {
			if st["Effect"] != "Allow" {
				continue
			}
			actions := stringList(st["Action"])
			if slices.Contains(actions, "kms:*") {
				t.Errorf("%s: statement %v allows kms:*", id, st["Sid"])
			}
			cond := mapOf(st["Condition"])
			named := mapOf(cond["ArnLike"])["aws:PrincipalArn"] != nil || mapOf(cond["StringEquals"])["kms:ViaService"] != nil
			if slices.ContainsFunc(actions, usesKey) && !named {
				t.Errorf("%s: statement %v lets %v use the key without naming the roles", id, st["Sid"], st["Principal"])
			}
		}
	}
	if keys < 5 {
		t.Errorf("%d KMS keys, want the card, documents, webhook and two token keys", keys)
	}
	for _, st := range keyStatements(t, tpl, "WebhookKey") {
		if !slices.ContainsFunc(stringList(st["Action"]), usesKey) {
			continue
		}
		cond := mapOf(st["Condition"])
		want := []any{rolePattern("WebhooksFunction"), rolePattern("AdminFunction"), rolePattern("SweeperFunction"), rolePattern("WebhookWorkerFunction"),
			rolePattern("DashboardFunction")}
		if got := mapOf(cond["ArnLike"])["aws:PrincipalArn"]; !reflect.DeepEqual(got, want) {
			t.Errorf("webhook key users %v, want %v", got, want)
		}
		if got := mapOf(cond["ForAllValues:StringEquals"])["kms:EncryptionContextKeys"]; !reflect.DeepEqual(got, []any{"company_id", "endpoint_id"}) {
			t.Errorf("webhook key context keys %v", got)
		}
	}
}
