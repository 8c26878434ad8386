package companies_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	cip "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"
	"github.com/google/uuid"

	"payments/pkg/app/apptest"
	"payments/pkg/function"
	"payments/pkg/function/adminapi"
)

// TestFirstOwner: POST /admin/companies creates the company's first owner
// in the dashboard's user pool; a bad owner creates nothing; an owner the
// pool refuses or cannot create leaves the company, in the answer's data,
// and POST /admin/companies/{id}/owner adds them then.
func TestFirstOwner(t *testing.T) {
	env := apptest.NewAuthTestEnv(t)
	type answer struct {
		status int
		code   string
		field  string
		data   map[string]any
		raw    string
	}
	call := func(t *testing.T, h function.HTTPHandler, path, body string) answer {
		t.Helper()
		res := apptest.AuthTestCall(t, h, apptest.AuthTestEvent("POST", "/api/v1/admin/companies"+path, "10.0.0.1",
			map[string]string{"x-admin-key": apptest.AuthTestAdminKey}, body))
		var out struct {
			Code  string         `json:"code"`
			Field string         `json:"field"`
			Data  map[string]any `json:"data"`
		}
		if err := json.Unmarshal([]byte(res.Body), &out); err != nil {
			t.Fatalf("body %q: %v", res.Body, err)
		}
		return answer{res.StatusCode, out.Code, out.Field, out.Data, res.Body}
	}

	a := call(t, env.Admin, "", `{"name":"Acme","owner":{"email":" Owner@Acme.example ","temporary_password":"First-Sign-In-1"}}`)
	if a.status != http.StatusCreated || a.data["client_key"] == nil {
		t.Fatalf("create with an owner: %s", a.raw)
	}
	if owner, _ := a.data["owner"].(map[string]any); owner["email"] != "owner@acme.example" || owner["status"] != "FORCE_CHANGE_PASSWORD" {
		t.Errorf("owner %v, want owner@acme.example, FORCE_CHANGE_PASSWORD", a.data["owner"])
	}
	if a := call(t, env.Admin, "", `{"name":"Plain"}`); a.status != http.StatusCreated || a.data["owner"] != nil {
		t.Errorf("create without an owner: %s", a.raw)
	}

	t.Run("bad owner", func(t *testing.T) {
		for _, tt := range []struct{ body, field string }{
			{`{"name":"Beta","owner":{}}`, "owner.email"},
			{`{"name":"Beta","owner":{"email":"not an email"}}`, "owner.email"},
			{`{"name":"Beta","owner":{"email":"Name <a@b.example>"}}`, "owner.email"},
			{`{"name":"Beta","owner":{"email":"a@localhost"}}`, "owner.email"},
			{`{"name":"Beta","owner":{"email":"` + strings.Repeat("a", 250) + `@b.example"}}`, "owner.email"},
			{`{"name":"Beta","owner":{"email":"a@b.example","temporary_password":"short-1A"}}`, "owner.temporary_password"},
			{`{"name":"Beta","owner":{"email":"a@b.example","temporary_password":"no-upper-case-1"}}`, "owner.temporary_password"},
			{`{"name":"Beta","owner":{"email":"a@b.example","temporary_password":"No-Number-Here"}}`, "owner.temporary_password"},
			{`{"name":"","owner":{"email":"a@b.example"}}`, "name"},
		} {
			if a := call(t, env.Admin, "", tt.body); a.status != http.StatusBadRequest || a.field != tt.field || a.data != nil {
				t.Errorf("%s: %s, want 400 naming %s and nothing created", tt.body, a.raw, tt.field)
			}
		}
		// Nothing was created: the email is free.
		if a := call(t, env.Admin, "", `{"name":"Beta","owner":{"email":"a@b.example"}}`); a.status != http.StatusCreated {
			t.Errorf("the owner the bad requests named: %s", a.raw)
		}
	})

	t.Run("owner exists", func(t *testing.T) {
		a := call(t, env.Admin, "", `{"name":"Gamma","owner":{"email":"owner@acme.example"}}`)
		if a.status != http.StatusConflict || a.code != "OWNER_EXISTS" || a.data["id"] == nil || a.data["client_key"] == nil {
			t.Fatalf("an owner of another company's email: %s, want 409 OWNER_EXISTS with the company", a.raw)
		}
		id := a.data["id"].(string)
		if a := call(t, env.Admin, "/"+id+"/owner", `{"email":"owner@gamma.example"}`); a.status != http.StatusCreated ||
			a.data["email"] != "owner@gamma.example" || a.data["status"] != "FORCE_CHANGE_PASSWORD" {
			t.Errorf("add the owner then: %s", a.raw)
		}
		if a := call(t, env.Admin, "/"+id+"/owner", `{"email":"owner@gamma.example"}`); a.status != http.StatusConflict || a.code != "OWNER_EXISTS" {
			t.Errorf("add them twice: %s, want 409 OWNER_EXISTS", a.raw)
		}
		if a := call(t, env.Admin, "/"+id+"/owner", `{"email":"x"}`); a.status != http.StatusBadRequest || a.field != "email" {
			t.Errorf("add a bad owner: %s, want 400 naming email", a.raw)
		}
		if a := call(t, env.Admin, "/"+uuid.NewString()+"/owner", `{"email":"someone@delta.example"}`); a.status != http.StatusNotFound || a.code != "COMPANY_NOT_FOUND" {
			t.Errorf("an owner of no company: %s, want 404 COMPANY_NOT_FOUND", a.raw)
		}
	})

	// failing returns the admin function whose calls to the pool of type
	// T fail.
	failing := func(t *testing.T, match func(any) bool) function.HTTPHandler {
		t.Helper()
		cfg := apptest.FailingWith(env.Cfg, match, errors.New("injected: the user pool cannot be reached"))
		h, err := adminapi.NewWith(context.Background(), apptest.Recording(cfg, "admin"), env.Caches, time.Now)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	for _, tt := range []struct {
		name  string
		match func(any) bool
	}{
		{"pool down", func(in any) bool { _, ok := in.(*cip.AdminCreateUserInput); return ok }},
		// The user is created but cannot be given the group: they are
		// deleted again, so the same email can be added afterwards.
		{"group refused", func(in any) bool { _, ok := in.(*cip.AdminAddUserToGroupInput); return ok }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			email := strings.ReplaceAll(tt.name, " ", "-") + "@epsilon.example"
			a := call(t, failing(t, tt.match), "", `{"name":"Epsilon","owner":{"email":"`+email+`"}}`)
			if a.status != http.StatusBadGateway || a.code != "OWNER_NOT_CREATED" || a.data["id"] == nil || a.data["client_key"] == nil || a.data["owner"] != nil {
				t.Fatalf("%s: %s, want 502 OWNER_NOT_CREATED with the company", tt.name, a.raw)
			}
			if strings.Contains(a.raw, "injected") {
				t.Errorf("the answer tells the pool's own error: %s", a.raw)
			}
			if a := call(t, env.Admin, "/"+a.data["id"].(string)+"/owner", `{"email":"`+email+`"}`); a.status != http.StatusCreated {
				t.Errorf("add the owner once the pool is back: %s", a.raw)
			}
		})
	}
}
