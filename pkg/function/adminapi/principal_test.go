package adminapi_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"payments/pkg/app/apptest"
	"payments/pkg/function/adminapi"
)

// TestDeployedStageTakesPrincipalsOnly: in a deployed stage the console
// admits the requests API Gateway's IAM authorizer admitted, naming their
// principal as the operator (in the audit trail), and refuses the shared
// admin key, and a request that names no principal.
func TestDeployedStageTakesPrincipalsOnly(t *testing.T) {
	t.Parallel()
	e := apptest.NewAuthTestEnv(t)
	cfg := e.Cfg
	cfg.Stage = "dev"
	h, err := adminapi.NewWith(context.Background(), apptest.Recording(cfg, "admin"), e.Caches, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	const arn = "arn:aws:sts::123456789012:assumed-role/payments-operator/ada"
	call := func(path, body string, key bool, principal string) events.APIGatewayV2HTTPResponse {
		t.Helper()
		headers := map[string]string{}
		if key {
			headers["x-admin-key"] = apptest.AuthTestAdminKey
		}
		method := "GET"
		if body != "" {
			method = "POST"
		}
		ev := apptest.AuthTestEvent(method, path, "10.0.0.1", headers, body)
		if principal != "" {
			ev.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
				IAM: &events.APIGatewayV2HTTPRequestContextAuthorizerIAMDescription{UserARN: principal},
			}
		}
		return apptest.AuthTestCall(t, h, ev)
	}
	if r := call("/api/v1/admin/companies", `{"name":"Signed"}`, false, arn); r.StatusCode != 201 {
		t.Fatalf("signed, no key: %d %s", r.StatusCode, r.Body)
	}
	r := call("/api/v1/admin/audit?action=POST+/admin/companies", "", false, arn)
	var page struct {
		Data []struct{ Operator string } `json:"data"`
	}
	if err := json.Unmarshal([]byte(r.Body), &page); err != nil || r.StatusCode != 200 || len(page.Data) != 2 {
		t.Fatalf("the trail: %d %s", r.StatusCode, r.Body)
	}
	for _, rec := range page.Data {
		if rec.Operator != arn {
			t.Errorf("recorded operator %q, want the principal %q", rec.Operator, arn)
		}
	}
	for _, tt := range []struct {
		name      string
		key       bool
		principal string
	}{
		{"the shared key beside a principal", true, arn},
		{"the shared key alone", true, ""},
		{"no principal", false, ""},
	} {
		if r := call("/api/v1/admin/companies", `{"name":"Refused"}`, tt.key, tt.principal); r.StatusCode != 401 {
			t.Errorf("%s: %d %s, want 401", tt.name, r.StatusCode, r.Body)
		}
	}
}
