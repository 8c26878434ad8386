package cognitopool_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"payments/infra/local/samtemplate"
	"payments/pkg/identity"
	"payments/pkg/identity/cognitopool"
)

// TestPoolMatchesTheTemplate holds the pool and the client that the local
// stack and the tests make (PoolDefinition, ClientDefinition, Provision) to
// the ones template.yaml declares, and both to identity.Policy.
func TestPoolMatchesTheTemplate(t *testing.T) {
	tpl, err := samtemplate.Load("../../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	str := func(v any) string { return fmt.Sprint(v) }
	var pool, client map[string]any
	var groups []string
	for id, r := range tpl.Resources {
		switch r.Type {
		case "AWS::Cognito::UserPool":
			if pool != nil {
				t.Fatalf("two user pools in the template, %s among them", id)
			}
			pool = r.Properties
		case "AWS::Cognito::UserPoolClient":
			client = r.Properties
		case "AWS::Cognito::UserPoolGroup":
			groups = append(groups, str(r.Properties["GroupName"]))
		}
	}
	if pool == nil || client == nil {
		t.Fatal("template.yaml declares no user pool or no user pool client")
	}
	def := cognitopool.PoolDefinition("x")

	policy := pool["Policies"].(map[string]any)["PasswordPolicy"].(map[string]any)
	p := identity.Policy
	for name, want := range map[string]any{
		"MinimumLength": p.MinimumLength, "RequireLowercase": p.RequireLowercase, "RequireUppercase": p.RequireUppercase,
		"RequireNumbers": p.RequireNumbers, "RequireSymbols": p.RequireSymbols, "TemporaryPasswordValidityDays": p.TemporaryPasswordValidityDays,
	} {
		if str(policy[name]) != str(want) {
			t.Errorf("template PasswordPolicy %s = %v, identity.Policy says %v", name, policy[name], want)
		}
	}
	dp := def.Policies.PasswordPolicy
	if int(aws.ToInt32(dp.MinimumLength)) != p.MinimumLength || dp.RequireLowercase != p.RequireLowercase || dp.RequireUppercase != p.RequireUppercase ||
		dp.RequireNumbers != p.RequireNumbers || dp.RequireSymbols != p.RequireSymbols || int(dp.TemporaryPasswordValidityDays) != p.TemporaryPasswordValidityDays {
		t.Errorf("PoolDefinition's password policy %+v is not identity.Policy %+v", *dp, p)
	}

	if got := str(pool["UsernameAttributes"]); got != "[email]" || len(def.UsernameAttributes) != 1 || def.UsernameAttributes[0] != "email" {
		t.Errorf("UsernameAttributes: template %s, PoolDefinition %v; want [email]", got, def.UsernameAttributes)
	}
	schema := pool["Schema"].([]any)
	if len(schema) != 1 || len(def.Schema) != 1 {
		t.Fatalf("Schema: template %v, PoolDefinition %v; want company_id alone", schema, def.Schema)
	}
	attr := schema[0].(map[string]any)
	if "custom:"+str(attr["Name"]) != cognitopool.CompanyAttribute || str(attr["AttributeDataType"]) != "String" || str(attr["Mutable"]) != "false" ||
		"custom:"+aws.ToString(def.Schema[0].Name) != cognitopool.CompanyAttribute || aws.ToBool(def.Schema[0].Mutable) {
		t.Errorf("Schema: template %v, PoolDefinition %+v; want company_id, an immutable String", attr, def.Schema[0])
	}
	if str(pool["EnabledMfas"]) != "[SOFTWARE_TOKEN_MFA]" {
		t.Errorf("EnabledMfas %v, want TOTP alone", pool["EnabledMfas"])
	}
	if got := str(pool["AdminCreateUserConfig"].(map[string]any)["AllowAdminCreateUserOnly"]); got != "true" || !def.AdminCreateUserConfig.AllowAdminCreateUserOnly {
		t.Errorf("AllowAdminCreateUserOnly: template %s, PoolDefinition %v; want true", got, def.AdminCreateUserConfig.AllowAdminCreateUserOnly)
	}

	slices.Sort(groups)
	roles := []string{}
	for _, r := range identity.Roles {
		roles = append(roles, string(r))
	}
	slices.Sort(roles)
	if !slices.Equal(groups, roles) {
		t.Errorf("the template's groups %v, want the roles %v", groups, roles)
	}

	cd := cognitopool.ClientDefinition("x")
	flows := []string{}
	for _, f := range cd.ExplicitAuthFlows {
		flows = append(flows, string(f))
	}
	for name, want := range map[string]string{
		"ClientName":                 cognitopool.ClientName,
		"GenerateSecret":             "false",
		"PreventUserExistenceErrors": string(cd.PreventUserExistenceErrors),
		"ExplicitAuthFlows":          fmt.Sprint(flows),
		"IdTokenValidity":            fmt.Sprint(cognitopool.IDTokenValidityMinutes),
		"AccessTokenValidity":        fmt.Sprint(cognitopool.AccessTokenValidityMinutes),
		"RefreshTokenValidity":       fmt.Sprint(cognitopool.RefreshTokenValidityDays),
		"ReadAttributes":             fmt.Sprint(cd.ReadAttributes),
		"WriteAttributes":            fmt.Sprint(cd.WriteAttributes),
	} {
		if got := str(client[name]); got != want {
			t.Errorf("the template's client %s = %s, ClientDefinition says %s", name, got, want)
		}
	}
	units := client["TokenValidityUnits"].(map[string]any)
	if str(units["IdToken"]) != string(cd.TokenValidityUnits.IdToken) || str(units["AccessToken"]) != string(cd.TokenValidityUnits.AccessToken) ||
		str(units["RefreshToken"]) != string(cd.TokenValidityUnits.RefreshToken) {
		t.Errorf("the template's TokenValidityUnits %v, ClientDefinition says %+v", units, *cd.TokenValidityUnits)
	}
	for _, w := range client["WriteAttributes"].([]any) {
		if str(w) == cognitopool.CompanyAttribute {
			t.Errorf("the client may write %s: a user could move to another company", cognitopool.CompanyAttribute)
		}
	}
}
