package e2e_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"payments/infra/local/samtemplate"
	"payments/pkg/apidoc"
	"payments/pkg/apidoc/apitest"
	"payments/pkg/app"
	"payments/pkg/app/apptest"
	"payments/pkg/function"
	"payments/pkg/function/openapi"
	"payments/pkg/httpapi"
)

// TestDocumentRoutesAreTheTemplates checks that docs/openapi.yaml and
// template.yaml name the same routes under the API's base path; those
// outside it (the dashboard's pages: docs/routes.md, "Outside the API")
// are no part of the contract.
func TestDocumentRoutesAreTheTemplates(t *testing.T) {
	tpl, err := samtemplate.Load("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var wired []string
	for _, fn := range tpl.Functions() {
		for _, r := range fn.Routes {
			if r.Path != "$default" && strings.HasPrefix(r.Path, httpapi.BasePath+"/") {
				wired = append(wired, r.Method+" "+strings.TrimPrefix(r.Path, httpapi.BasePath))
			}
		}
	}
	documented := apitest.Default(t).Routes()
	for _, r := range wired {
		if !slices.Contains(documented, r) {
			t.Errorf("%s is in template.yaml but not in docs/openapi.yaml", r)
		}
	}
	for _, r := range documented {
		if !slices.Contains(wired, r) {
			t.Errorf("%s is in docs/openapi.yaml but not in template.yaml", r)
		}
	}
}

// TestErrorCodesAreDocumented checks that the document's ErrorCode enum is
// the error catalogue's codes.
func TestErrorCodesAreDocumented(t *testing.T) {
	documented := apitest.Default(t).ErrorCodes()
	slices.Sort(documented)
	if codes := app.Codes(); !slices.Equal(codes, documented) {
		t.Errorf("ErrorCode in docs/openapi.yaml differs from the catalogue:\n document %v\ncatalogue %v", documented, codes)
	}
}

// TestDefaultRoute drives the openapi function: the document without a
// token, and the answers to requests no route takes.
func TestDefaultRoute(t *testing.T) {
	h, err := openapi.New(context.Background(), function.Config{})
	if err != nil {
		t.Fatal(err)
	}
	doc := apptest.AuthTestCall(t, h, apptest.AuthTestEvent("GET", "/api/v1/openapi.json", "10.1.1.1", nil, ""))
	if doc.StatusCode != 200 || !bytes.Equal([]byte(doc.Body), apidoc.JSON) || !strings.Contains(doc.Body, `"openapi": "3.1.0"`) {
		t.Fatalf("GET /openapi.json: %d %.200s", doc.StatusCode, doc.Body)
	}
	for _, tc := range []struct {
		method, path string
		status       int
		code, allow  string
	}{
		{"POST", "/api/v1/openapi.json", 405, "METHOD_NOT_ALLOWED", "GET"},
		{"DELETE", "/api/v1/cards", 405, "METHOD_NOT_ALLOWED", "GET, POST"},
		{"PATCH", "/api/v1/cards/c_1/freeze", 405, "METHOD_NOT_ALLOWED", "PUT"},
		{"GET", "/api/v1/no/such/route", 404, "ROUTE_NOT_FOUND", ""},
		{"GET", "/api/v1/cards/", 404, "ROUTE_NOT_FOUND", ""},
		{"GET", "/elsewhere", 404, "ROUTE_NOT_FOUND", ""},
	} {
		res := apptest.AuthTestCall(t, h, apptest.AuthTestEvent(tc.method, tc.path, "10.1.1.1", nil, ""))
		body := apptest.DecodeErrorBody(t, res.Body)
		if res.StatusCode != tc.status || body.Code != tc.code || res.Headers["Allow"] != tc.allow {
			t.Errorf("%s %s: %d %s Allow %q, want %d %s Allow %q", tc.method, tc.path, res.StatusCode, body.Code, res.Headers["Allow"], tc.status, tc.code, tc.allow)
		}
	}
}
