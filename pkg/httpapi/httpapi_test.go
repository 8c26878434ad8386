package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"payments/pkg/field"
)

var errThing = errors.New("thing: gone")

var testCatalogue = Catalogue{{Err: errThing, Status: http.StatusNotFound, Code: "THING_NOT_FOUND", Message: "thing not found", RetryAfter: 3}}

type payload struct {
	Name   string      `json:"name"`
	Amount json.Number `json:"amount"`
	Count  int         `json:"count"`
	Nested struct {
		Flag bool `json:"flag"`
	} `json:"nested"`
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name        string
		body        string
		contentType string
		status      int
		field       string
	}{
		{"ok", `{"name":"a","amount":12.5,"count":2}`, "application/json", 0, ""},
		{"ok with charset", `{"name":"a"}`, "application/json; charset=utf-8", 0, ""},
		{"empty", ``, "application/json", 400, "body"},
		{"malformed", `{"name":`, "application/json", 400, "body"},
		{"syntax", `{"name" "a"}`, "application/json", 400, "body"},
		{"not an object", `[1,2]`, "application/json", 400, "body"},
		{"null", `null`, "application/json", 400, "body"},
		{"null among spaces", " \n null \t", "application/json", 400, "body"},
		{"a string", `"name"`, "application/json", 400, "body"},
		{"a number", `12`, "application/json", 400, "body"},
		{"a boolean", `true`, "application/json", 400, "body"},
		{"an object after spaces", " \r\n\t{\"name\":\"a\"}", "application/json", 0, ""},
		{"wrong type", `{"count":"two"}`, "application/json", 400, "count"},
		{"wrong nested type", `{"nested":{"flag":"yes"}}`, "application/json", 400, "nested.flag"},
		{"unknown field", `{"nmae":"a"}`, "application/json", 400, "nmae"},
		{"unknown field with a quote", `{"a\"b":1}`, "application/json", 400, `a"b`},
		{"unknown field without a name", `{"":0}`, "application/json", 400, "body"},
		{"unknown field with a long name", `{"` + strings.Repeat("n", 129) + `":0}`, "application/json", 400, "body"},
		{"trailing data", `{"name":"a"} {"name":"b"}`, "application/json", 400, "body"},
		{"too large", `{"name":"` + strings.Repeat("x", MaxBodyBytes) + `"}`, "application/json", 413, "body"},
		{"not json", `name=a`, "application/x-www-form-urlencoded", 415, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/", strings.NewReader(tt.body))
			r.Header.Set("Content-Type", tt.contentType)
			var p payload
			err := Decode(r, &p)
			if tt.status == 0 {
				if err != nil {
					t.Fatalf("Decode: %v", err)
				}
				return
			}
			body, known := testCatalogue.Body(err)
			if !known || body.StatusCode != tt.status || body.Field != tt.field {
				t.Fatalf("error %v gave %+v, want status %d field %q", err, body, tt.status, tt.field)
			}
		})
	}
}

// TestDecodeOptional: a route whose body is optional takes an empty body
// as no options, whatever its Content-Type, and decodes any other body as
// Decode does: null is no object, and a 400 naming the body.
func TestDecodeOptional(t *testing.T) {
	tests := []struct {
		name, body, contentType string
		want                    string // the name decoded
		field                   string // the field of the 400, if any
	}{
		{"empty", ``, "", "kept", ""},
		{"empty, JSON", ``, "application/json", "kept", ""},
		{"spaces", " \n ", "text/plain", "kept", ""},
		{"object", `{"name":"a"}`, "application/json", "a", ""},
		{"empty object", `{}`, "application/json", "kept", ""},
		{"null", `null`, "application/json", "", "body"},
		{"null without a type", `null`, "", "", "body"},
		{"array", `[]`, "application/json", "", "body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/", strings.NewReader(tt.body))
			if tt.contentType != "" {
				r.Header.Set("Content-Type", tt.contentType)
			}
			p := payload{Name: "kept"}
			err := DecodeOptional(r, &p)
			if tt.field == "" {
				if err != nil || p.Name != tt.want {
					t.Fatalf("DecodeOptional: %v, name %q, want %q", err, p.Name, tt.want)
				}
				return
			}
			body, known := testCatalogue.Body(err)
			if !known || body.StatusCode != http.StatusBadRequest || body.Field != tt.field || body.Message != "body: must be a JSON object" {
				t.Fatalf("error %v gave %+v, want a 400 naming %s", err, body, tt.field)
			}
		})
	}
}

func TestCatalogueBody(t *testing.T) {
	tests := []struct {
		err     error
		status  int
		code    string
		message string
		field   string
	}{
		{fmt.Errorf("load: %w", errThing), 404, "THING_NOT_FOUND", "thing not found", ""},
		{field.On(fmt.Errorf("fetch: %w", errThing), "url"), 404, "THING_NOT_FOUND", "url: thing not found", "url"},
		{field.Invalid("amount", "must be at least 1"), 400, "INVALID_FIELD", "amount: must be at least 1", "amount"},
		{ErrUnauthorized, 401, "UNAUTHORIZED", "unauthorized", ""},
		{field.On(errors.New("dynamodb: secret internal detail"), "url"), 500, "INTERNAL", "internal error", ""},
	}
	for _, tt := range tests {
		t.Run(tt.code+tt.field, func(t *testing.T) {
			b, _ := testCatalogue.Body(tt.err)
			if b.StatusCode != tt.status || b.Code != tt.code || b.Message != tt.message || b.Field != tt.field || b.Success {
				t.Fatalf("Body(%v) = %+v", tt.err, b)
			}
			if b.Error != http.StatusText(tt.status) {
				t.Errorf("error = %q, want %q", b.Error, http.StatusText(tt.status))
			}
		})
	}
}

func TestRouter(t *testing.T) {
	guard := func(r *http.Request) (context.Context, error) {
		if r.Header.Get("Authorization") != "Bearer ok" {
			return nil, ErrUnauthorized
		}
		return WithCompany(r.Context(), "c1"), nil
	}
	rt := NewRouter(testCatalogue, guard)
	rt.Handle("GET /things/{id}", func(w http.ResponseWriter, r *http.Request) error {
		if r.PathValue("id") == "missing" {
			return errThing
		}
		Respond(w, http.StatusOK, "ok", map[string]string{"id": r.PathValue("id"), "company": companyID(r.Context())})
		return nil
	})
	tests := []struct {
		method, path, auth string
		status             int
		code               string
	}{
		{"GET", "/api/v1/things/a", "Bearer ok", 200, ""},
		{"GET", "/api/v1/things/missing", "Bearer ok", 404, "THING_NOT_FOUND"},
		{"GET", "/api/v1/things/a", "", 401, "UNAUTHORIZED"},
		{"GET", "/api/v1/nothing", "Bearer ok", 404, "ROUTE_NOT_FOUND"},
		{"DELETE", "/api/v1/things/a", "Bearer ok", 405, "METHOD_NOT_ALLOWED"},
		{"GET", "/things/a", "Bearer ok", 404, "ROUTE_NOT_FOUND"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path+" "+tt.auth, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, tt.path, nil)
			if tt.auth != "" {
				r.Header.Set("Authorization", tt.auth)
			}
			w := httptest.NewRecorder()
			rt.ServeHTTP(w, r)
			if w.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.status, w.Body)
			}
			if ct := w.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			var body map[string]any
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			if tt.code != "" && body["code"] != tt.code {
				t.Errorf("code %v, want %s", body["code"], tt.code)
			}
			if tt.status == 200 {
				data := body["data"].(map[string]any)
				if data["company"] != "c1" || data["id"] != "a" || body["success"] != true || body["statusCode"] != 200.0 {
					t.Errorf("body %v", body)
				}
			}
			if tt.status == 405 && w.Header().Get("Allow") == "" {
				t.Error("405 without Allow")
			}
		})
	}
}

func TestCredential(t *testing.T) {
	tests := []struct {
		name   string
		values []string
		want   string
		err    error
	}{
		{"absent", nil, "", nil},
		{"once", []string{"Bearer a.b.c"}, "Bearer a.b.c", nil},
		{"empty", []string{""}, "", nil},
		{"twice", []string{"k", "k"}, "", ErrUnauthorized},
		{"joined by API Gateway", []string{"Bearer a.b.c,Bearer a.b.c"}, "", ErrUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			for _, v := range tt.values {
				r.Header.Add("X-Admin-Key", v)
			}
			got, err := Credential(r, "X-Admin-Key")
			if got != tt.want || !errors.Is(err, tt.err) {
				t.Fatalf("Credential = %q, %v; want %q, %v", got, err, tt.want, tt.err)
			}
		})
	}
}

func TestRespondListMirrorsPagination(t *testing.T) {
	w := httptest.NewRecorder()
	RespondList(w, []string(nil), Page{Page: 1, Limit: 10})
	var body map[string]any
	json.Unmarshal(w.Body.Bytes(), &body)
	if fmt.Sprint(body["meta"]) != fmt.Sprint(body["pagination"]) || body["meta"] == nil {
		t.Errorf("meta %v, pagination %v", body["meta"], body["pagination"])
	}
	if fmt.Sprint(body["data"]) != "[]" || body["message"] != "0 items retrieved successfully" {
		t.Errorf("body %v", body)
	}
}

func TestParseDateRange(t *testing.T) {
	tests := []struct {
		query string
		field string
	}{
		{"from_date=2025-05-01&to_date=2025-05-02T10:00:00Z", ""},
		{"from_date=1970-01-01T01:00:00%2B01:00", ""},
		{"from_date=1970-01-01T00:00:00%2B01:00", "from_date"}, // 1969 in UTC
		{"to_date=1970-01-01T00:30:00%2B01:00", "to_date"},
		{"to_date=10000-01-01", "to_date"},
		{"from_date=2025-05-02&to_date=2025-05-01", "to_date"},
		{"from_date=tomorrow", "from_date"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			_, _, err := ParseDateRange(httptest.NewRequest("GET", "/?"+tt.query, nil))
			var fe *field.Error
			if (tt.field == "") != (err == nil) || (err != nil && (!errors.As(err, &fe) || fe.Field != tt.field)) {
				t.Fatalf("err %v, want field %q", err, tt.field)
			}
		})
	}
}

// TestParseDates: the same rule under other names, each error naming its
// parameter.
func TestParseDates(t *testing.T) {
	tests := []struct {
		query string
		field string
	}{
		{"fromDate=2026-11-23&toDate=2026-11-24T10:00:00Z", ""},
		{"from_date=x", ""}, // not these parameters
		{"fromDate=x", "fromDate"},
		{"toDate=2026-11-23T25:00:00Z", "toDate"},
		{"fromDate=2026-11-23&toDate=2026-11-23", "toDate"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			_, _, err := ParseDates(httptest.NewRequest("GET", "/?"+tt.query, nil), "fromDate", "toDate")
			var fe *field.Error
			if (tt.field == "") != (err == nil) || (err != nil && (!errors.As(err, &fe) || fe.Field != tt.field)) {
				t.Fatalf("err %v, want field %q", err, tt.field)
			}
		})
	}
}

func TestParseBool(t *testing.T) {
	tests := []struct {
		query string
		want  bool
		ok    bool
	}{
		{"", true, true}, {"y=false", true, true}, {"x=true", true, true}, {"x=false", false, true},
		{"x=1", false, false}, {"x=TRUE", false, false}, {"x=t", false, false}, {"x=yes", false, false},
		// A boolean given without a value says neither.
		{"x=", false, false}, {"x", false, false}, {"x=&x=true", false, false}, {"y=true&x=", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			got, err := ParseBool(httptest.NewRequest("GET", "/?"+tt.query, nil), "x", true)
			if (err == nil) != tt.ok || (tt.ok && got != tt.want) {
				t.Fatalf("ParseBool = %v, %v", got, err)
			}
		})
	}
}
