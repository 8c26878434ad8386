package function_test

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"

	"payments/infra/local/samtemplate"
)

// authRole is the ARN pattern of the auth function's role, the one
// principal the token keys' policies let sign: SAM names it
// <stack>-AuthFunctionRole-<suffix>.
const authRole = "arn:${AWS::Partition}:iam::${AWS::AccountId}:role/${AWS::StackName}-AuthFunctionRole-*"

// allows reports whether the IAM action pattern p (kms:Sign, kms:*, kms:S*,
// *) covers action.
func allows(p, action string) bool {
	ok, _ := path.Match(strings.ToLower(p), strings.ToLower(action))
	return ok
}

// strs returns v, a string or a list of strings, as a list.
func strs(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, fmt.Sprint(e))
		}
		return out
	}
	return nil
}

// TestOnlyTheAuthFunctionSignsTokens reads template.yaml: the token keys
// are asymmetric P-256 keys for signing; no function's policy but the auth
// function's allows kms:Sign, on any resource; and each token key's policy
// allows kms:Sign only to the auth function's role (a condition on the
// principal's ARN) and denies it to every other principal, while no
// statement of it allows kms:* or lets a grant be made.
func TestOnlyTheAuthFunctionSignsTokens(t *testing.T) {
	tpl, err := samtemplate.Load("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	signers := 0
	for _, fn := range tpl.Functions() {
		for _, st := range fn.Statements {
			for _, a := range st.Actions {
				if !allows(a, "kms:Sign") {
					continue
				}
				if fn.LogicalID != "AuthFunction" || st.Effect != "Allow" {
					t.Errorf("%s is granted %s (%s): only AuthFunction may sign tokens", fn.LogicalID, a, st.Effect)
					continue
				}
				signers++
				for _, r := range st.Resources {
					id, _, err := tpl.ARN(r)
					if err != nil || !strings.HasPrefix(id, "TokenKey") {
						t.Errorf("AuthFunction may sign with %v, not a token key", r)
					}
				}
			}
		}
	}
	if signers != 1 {
		t.Errorf("AuthFunction has %d statements granting kms:Sign, want 1", signers)
	}

	keys := 0
	for _, id := range []string{"TokenKeyA", "TokenKeyB"} {
		res, ok := tpl.Resources[id]
		if !ok || res.Type != "AWS::KMS::Key" {
			t.Errorf("%s: not a KMS key of the template", id)
			continue
		}
		keys++
		if res.Properties["KeySpec"] != "ECC_NIST_P256" || res.Properties["KeyUsage"] != "SIGN_VERIFY" {
			t.Errorf("%s: KeySpec %v, KeyUsage %v, want ECC_NIST_P256 for SIGN_VERIFY", id, res.Properties["KeySpec"], res.Properties["KeyUsage"])
		}
		policy, _ := res.Properties["KeyPolicy"].(map[string]any)
		statements, _ := policy["Statement"].([]any)
		allowSign, denySign := 0, 0
		for _, raw := range statements {
			st, _ := raw.(map[string]any)
			actions := strs(st["Action"])
			if _, not := st["NotAction"]; not {
				t.Errorf("%s: a statement with NotAction: list the actions", id)
			}
			for _, a := range actions {
				if st["Effect"] == "Allow" && (allows(a, "kms:CreateGrant") || a == "kms:*" || a == "*") {
					t.Errorf("%s: the policy allows %s", id, a)
				}
			}
			if !slices.ContainsFunc(actions, func(a string) bool { return allows(a, "kms:Sign") }) {
				continue
			}
			cond, _ := st["Condition"].(map[string]any)
			var principalArn any
			switch st["Effect"] {
			case "Allow":
				like, _ := cond["ArnLike"].(map[string]any)
				principalArn = like["aws:PrincipalArn"]
				allowSign++
			case "Deny":
				notLike, _ := cond["ArnNotLike"].(map[string]any)
				principalArn = notLike["aws:PrincipalArn"]
				if st["Principal"] == "*" {
					denySign++
				}
			}
			if sub, _ := principalArn.(map[string]any); len(cond) != 1 || sub["Fn::Sub"] != authRole || !slices.Equal(actions, []string{"kms:Sign"}) {
				t.Errorf("%s: statement %v lets kms:Sign depend on more than the auth function's role (%s)", id, st, authRole)
			}
		}
		if allowSign != 1 || denySign != 1 {
			t.Errorf("%s: %d statements allow kms:Sign and %d deny it to everyone else, want 1 and 1", id, allowSign, denySign)
		}
	}
	if keys != 2 {
		t.Errorf("%d token keys, want TokenKeyA and TokenKeyB", keys)
	}
}
