package companies_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/uuid"

	"payments/pkg/app/apptest"
)

func TestAdminGuard(t *testing.T) {
	env := apptest.NewAuthTestEnv(t)
	tests := []struct {
		name    string
		headers map[string]string
		want    int
	}{
		{"no key", nil, http.StatusUnauthorized},
		{"empty key", map[string]string{"x-admin-key": ""}, http.StatusUnauthorized},
		{"wrong key", map[string]string{"x-admin-key": "local-admin-kez"}, http.StatusUnauthorized},
		{"longer key", map[string]string{"x-admin-key": apptest.AuthTestAdminKey + "x"}, http.StatusUnauthorized},
		{"key in another header", map[string]string{"authorization": "Bearer " + apptest.AuthTestAdminKey}, http.StatusUnauthorized},
		{"right key", map[string]string{"x-admin-key": apptest.AuthTestAdminKey}, http.StatusCreated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := apptest.AuthTestCall(t, env.Admin, apptest.AuthTestEvent("POST", "/api/v1/admin/companies", "10.0.0.1", tt.headers, `{"name":"Acme"}`))
			if res.StatusCode != tt.want {
				t.Fatalf("status %d, want %d: %s", res.StatusCode, tt.want, res.Body)
			}
		})
	}
}

func TestAdminCompanies(t *testing.T) {
	env := apptest.NewAuthTestEnv(t)
	adminHeaders := map[string]string{"x-admin-key": apptest.AuthTestAdminKey}
	call := func(t *testing.T, method, path, body string) (int, map[string]any, events.APIGatewayV2HTTPResponse) {
		t.Helper()
		res := apptest.AuthTestCall(t, env.Admin, apptest.AuthTestEvent(method, "/api/v1/admin/companies"+path, "10.0.0.1", adminHeaders, body))
		var out map[string]any
		if err := json.Unmarshal([]byte(res.Body), &out); err != nil {
			t.Fatalf("body %q: %v", res.Body, err)
		}
		data, _ := out["data"].(map[string]any)
		return res.StatusCode, data, res
	}

	status, created, res := call(t, "POST", "", `{"name":"Acme","kyb_status":"APPROVED"}`)
	if status != http.StatusCreated {
		t.Fatalf("create: %d %s", status, res.Body)
	}
	for _, f := range []string{"id", "name", "kyb_status", "is_active", "client_id", "client_key", "created_at", "updated_at", "card_slots", "webhook_url"} {
		if _, ok := created[f]; !ok {
			t.Errorf("create response lacks %s: %s", f, res.Body)
		}
	}
	if created["kyb_status"] != "APPROVED" || created["is_active"] != true || created["card_slots"] != float64(100) {
		t.Errorf("create response %s", res.Body)
	}
	id := created["id"].(string)
	key := created["client_key"].(string)

	t.Run("create", func(t *testing.T) {
		tests := []struct {
			name      string
			body      string
			want      int
			wantField string
		}{
			{"default kyb", `{"name":"Beta"}`, http.StatusCreated, ""},
			{"missing name", `{}`, http.StatusBadRequest, "name"},
			{"empty name", `{"name":""}`, http.StatusBadRequest, "name"},
			{"long name", `{"name":"` + strings.Repeat("x", 256) + `"}`, http.StatusBadRequest, "name"},
			{"name not a string", `{"name":7}`, http.StatusBadRequest, "name"},
			{"unknown kyb", `{"name":"Beta","kyb_status":"OK"}`, http.StatusBadRequest, "kyb_status"},
			{"unknown field", `{"name":"Beta","owner":"x"}`, http.StatusBadRequest, "owner"},
			{"malformed", `{"name":`, http.StatusBadRequest, "body"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				status, data, res := call(t, "POST", "", tt.body)
				if status != tt.want {
					t.Fatalf("status %d, want %d: %s", status, tt.want, res.Body)
				}
				if tt.wantField != "" {
					if b := apptest.DecodeErrorBody(t, res.Body); b.Field != tt.wantField {
						t.Fatalf("field %q, want %q: %s", b.Field, tt.wantField, res.Body)
					}
				} else if data["kyb_status"] != "PENDING" {
					t.Fatalf("kyb_status %v", data["kyb_status"])
				}
			})
		}
	})

	t.Run("get", func(t *testing.T) {
		status, data, res := call(t, "GET", "/"+id, "")
		if status != http.StatusOK || data["id"] != id || data["name"] != "Acme" {
			t.Fatalf("get: %d %s", status, res.Body)
		}
		lower := strings.ToLower(res.Body)
		if strings.Contains(res.Body, key) || strings.Contains(lower, "client_key") || strings.Contains(lower, "hash") {
			t.Fatalf("get reveals the key or its hash: %s", res.Body)
		}
		for _, missing := range []string{"/" + uuid.NewString(), "/not-a-uuid"} {
			if status, _, res := call(t, "GET", missing, ""); status != http.StatusNotFound {
				t.Fatalf("get %s: %d %s", missing, status, res.Body)
			}
		}
	})

	t.Run("patch", func(t *testing.T) {
		tests := []struct {
			name      string
			path      string
			body      string
			want      int
			wantField string
			check     map[string]any
		}{
			{"empty body object", "/" + id, `{}`, http.StatusOK, "", map[string]any{"kyb_status": "APPROVED", "is_active": true}},
			{"all fields", "/" + id, `{"kyb_status":"REJECTED","is_active":false,"webhook_url":"https://hooks.example.com/x","card_slots":7}`, http.StatusOK, "",
				map[string]any{"kyb_status": "REJECTED", "is_active": false, "webhook_url": "https://hooks.example.com/x", "card_slots": float64(7), "name": "Acme"}},
			{"clear webhook with null", "/" + id, `{"webhook_url":null}`, http.StatusOK, "", map[string]any{"webhook_url": "", "card_slots": float64(7)}},
			{"set webhook again", "/" + id, `{"webhook_url":"https://hooks.example.com/y"}`, http.StatusOK, "", map[string]any{"webhook_url": "https://hooks.example.com/y"}},
			{"clear webhook with empty string", "/" + id, `{"webhook_url":""}`, http.StatusOK, "", map[string]any{"webhook_url": ""}},
			{"reactivate", "/" + id, `{"is_active":true,"kyb_status":"APPROVED"}`, http.StatusOK, "", map[string]any{"is_active": true, "kyb_status": "APPROVED"}},
			{"unknown kyb", "/" + id, `{"kyb_status":"VERIFIED"}`, http.StatusBadRequest, "kyb_status", nil},
			{"kyb wrong type", "/" + id, `{"kyb_status":1}`, http.StatusBadRequest, "kyb_status", nil},
			{"is_active wrong type", "/" + id, `{"is_active":"yes"}`, http.StatusBadRequest, "is_active", nil},
			{"card_slots wrong type", "/" + id, `{"card_slots":"5"}`, http.StatusBadRequest, "card_slots", nil},
			{"card_slots fraction", "/" + id, `{"card_slots":1.5}`, http.StatusBadRequest, "card_slots", nil},
			{"card_slots negative", "/" + id, `{"card_slots":-1}`, http.StatusBadRequest, "card_slots", nil},
			{"webhook wrong type", "/" + id, `{"webhook_url":5}`, http.StatusBadRequest, "webhook_url", nil},
			{"webhook http", "/" + id, `{"webhook_url":"http://hooks.example.com"}`, http.StatusBadRequest, "webhook_url", nil},
			{"name is not patchable", "/" + id, `{"name":"Other"}`, http.StatusBadRequest, "name", nil},
			{"unknown company", "/" + uuid.NewString(), `{"is_active":false}`, http.StatusNotFound, "", nil},
			{"unknown company, empty patch", "/" + uuid.NewString(), `{}`, http.StatusNotFound, "", nil},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				status, data, res := call(t, "PATCH", tt.path, tt.body)
				if status != tt.want {
					t.Fatalf("status %d, want %d: %s", status, tt.want, res.Body)
				}
				if tt.wantField != "" {
					if b := apptest.DecodeErrorBody(t, res.Body); b.Field != tt.wantField || !strings.Contains(b.Message, tt.wantField) {
						t.Fatalf("field %q, want %q: %s", b.Field, tt.wantField, res.Body)
					}
				}
				for k, v := range tt.check {
					if data[k] != v {
						t.Errorf("%s = %v, want %v: %s", k, data[k], v, res.Body)
					}
				}
				if strings.Contains(res.Body, "client_key") {
					t.Errorf("patch reveals the key: %s", res.Body)
				}
			})
		}
	})

	t.Run("rotate", func(t *testing.T) {
		status, data, res := call(t, "POST", "/"+id+"/client-key", "")
		if status != http.StatusOK || data["client_id"] != created["client_id"] || data["client_key"] == key || data["client_key"] == "" {
			t.Fatalf("rotate: %d %s", status, res.Body)
		}
		if status, _, res := call(t, "POST", "/"+uuid.NewString()+"/client-key", ""); status != http.StatusNotFound {
			t.Fatalf("rotate unknown: %d %s", status, res.Body)
		}
		if status, got, res := call(t, "GET", "/"+id, ""); status != http.StatusOK || got["key_version"] != float64(2) {
			t.Fatalf("after rotation: %d %s", status, res.Body)
		}
	})
}
