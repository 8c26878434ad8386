package apitest

import (
	"net/http"
	"strings"
	"testing"
)

// TestCheck: what the harness lets through and what it fails on.
func TestCheck(t *testing.T) {
	c, err := Load("testdata/mini.yaml")
	if err != nil {
		t.Fatal(err)
	}
	json := http.Header{"Content-Type": {"application/json"}}
	for _, tc := range []struct {
		name, path string
		status     int
		body       string
		want       string // "" for valid, else a piece of the error
	}{
		{"valid", "/api/v1/things/t1", 200, `{"success":true,"data":{"id":"t1","amount":5,"note":null}}`, ""},
		{"undocumented field", "/api/v1/things/t1", 200, `{"success":true,"data":{"id":"t1","amount":5,"note":null,"extra":1}}`, "extra"},
		{"undocumented envelope field", "/api/v1/things/t1", 200, `{"success":true,"meta":{},"data":{"id":"t1","amount":5,"note":"x"}}`, "meta"},
		{"wrong type", "/api/v1/things/t1", 200, `{"success":true,"data":{"id":"t1","amount":"5","note":null}}`, "amount"},
		{"missing required", "/api/v1/things/t1", 200, `{"success":true,"data":{"id":"t1","note":null}}`, "amount"},
		{"undocumented status", "/api/v1/things/t1", 409, `{"code":"CONFLICT"}`, "status is not supported"},
		{"documented error", "/api/v1/things/t1", 404, `{"code":"CARD_NOT_FOUND"}`, ""},
		{"unknown route answered 404", "/api/v1/nothing", 404, `{"success":false,"statusCode":404,"message":"m","error":"Not Found","code":"ROUTE_NOT_FOUND"}`, "additional properties"},
		{"unknown route answered 200", "/api/v1/nothing", 200, `{}`, "no route"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := c.Check(Exchange{Method: "GET", Path: tc.path, Status: tc.status, RespHeader: json, RespBody: []byte(tc.body)})
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("want valid, got %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("want an error about %q, got %v", tc.want, err)
			}
		})
	}
}

// TestCheckWebhookNeedsTheKind: a kind the document lacks is an error.
func TestCheckWebhookNeedsTheKind(t *testing.T) {
	c, err := Load("testdata/mini.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CheckWebhook("card.fund", []byte(`{}`)); err == nil {
		t.Error("a kind the document lacks passed")
	}
}
