// Package apitest holds the tests to the contract: it validates requests,
// responses and webhook deliveries against docs/openapi.yaml with
// kin-openapi, failing on any undocumented status, field or type.
//
// The document says which fields exist and leaves objects open to new
// fields, as a contract that may grow should; the tests are stricter: every
// object schema that lists properties is closed (additionalProperties:
// false) once allOf compositions of objects are merged, so a field the code
// writes and the document lacks fails the test that produced it.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"payments/pkg/httpapi"
)

// Contract is the loaded document with its router.
type Contract struct {
	Doc    *openapi3.T
	router routers.Router
}

// host is the server the validation router matches requests against.
const host = "api.test"

// load reads docs/openapi.yaml once per test binary.
var load = sync.OnceValues(func() (*Contract, error) {
	_, file, _, _ := runtime.Caller(0)
	path := filepath.Join(filepath.Dir(file), "..", "..", "..", "docs", "openapi.yaml")
	return Load(path)
})

// Load reads and validates the document at path and closes its objects.
func Load(path string) (*Contract, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("apitest: %s: %w", path, err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("apitest: %s is not a valid OpenAPI document: %w", path, err)
	}
	Close(doc)
	doc.Servers = openapi3.Servers{{URL: "http://" + host + httpapi.BasePath}}
	rt, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("apitest: %s: %w", path, err)
	}
	return &Contract{Doc: doc, router: rt}, nil
}

// Default returns the contract of docs/openapi.yaml, failing t if it does
// not load.
func Default(t testing.TB) *Contract {
	t.Helper()
	c, err := load()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Exchange is one request and the response the service gave it.
type Exchange struct {
	Method      string
	Path        string // as sent, starting with /api/v1
	RawQuery    string
	Header      http.Header
	Body        []byte
	Status      int
	RespHeader  http.Header
	RespBody    []byte
	SkipRequest bool // the request is deliberately not what the document allows
}

// Check validates x: the response always, the request as well when the
// service accepted it (a 2xx), unless x.SkipRequest. A request no route of
// the document serves must have been answered 404 ROUTE_NOT_FOUND or 405.
// A path outside the API (not under httpapi.BasePath: the company
// dashboard's pages, docs/routes.md "Outside the API") is not the
// document's, and is not checked.
func (c *Contract) Check(x Exchange) error {
	if x.Path != httpapi.BasePath && !strings.HasPrefix(x.Path, httpapi.BasePath+"/") {
		return nil
	}
	u := &url.URL{Scheme: "http", Host: host, Path: x.Path, RawQuery: x.RawQuery}
	req, err := http.NewRequest(x.Method, u.String(), bytes.NewReader(x.Body))
	if err != nil {
		return c.checkUnrouted(x) // a path or query no client could send
	}
	req.Header = x.Header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		return c.checkUnrouted(x)
	}
	ctx := context.Background()
	in := &openapi3filter.RequestValidationInput{
		Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true},
	}
	if x.Status < 300 && !x.SkipRequest {
		if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
			return fmt.Errorf("the request of a %d is not what the document allows: %w", x.Status, err)
		}
	}
	header := x.RespHeader
	if header == nil {
		header = http.Header{}
	}
	err = openapi3filter.ValidateResponse(ctx, &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 x.Status,
		Header:                 header,
		Body:                   io.NopCloser(bytes.NewReader(x.RespBody)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	})
	if err != nil {
		return fmt.Errorf("the response is not what the document says: %w", err)
	}
	return nil
}

// checkUnrouted checks the answer to a request the document has no route
// for: the error body, with ROUTE_NOT_FOUND or METHOD_NOT_ALLOWED.
func (c *Contract) checkUnrouted(x Exchange) error {
	var body struct{ Code string }
	json.Unmarshal(x.RespBody, &body)
	switch {
	case x.Status == http.StatusNotFound && body.Code == "ROUTE_NOT_FOUND",
		x.Status == http.StatusMethodNotAllowed && body.Code == "METHOD_NOT_ALLOWED",
		x.Status == http.StatusBadRequest && body.Code == "MALFORMED_REQUEST":
		return c.CheckSchema("Error", x.RespBody)
	}
	return fmt.Errorf("%s %s is no route of the document, yet it was answered %d %s", x.Method, x.Path, x.Status, x.RespBody)
}

// CheckSchema validates a JSON value against the named component schema.
func (c *Contract) CheckSchema(name string, body []byte) error {
	ref := c.Doc.Components.Schemas[name]
	if ref == nil {
		return fmt.Errorf("the document has no schema %s", name)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Errorf("%s: not JSON: %w", name, err)
	}
	if err := ref.Value.VisitJSON(v, openapi3.EnableJSONSchema2020(), openapi3.MultiErrors()); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// CheckWebhook validates the body of a delivery of event kind against the
// request body the document's webhooks section gives that kind.
func (c *Contract) CheckWebhook(kind string, body []byte) error {
	item := c.Doc.Webhooks[kind]
	if item == nil || item.Post == nil || item.Post.RequestBody == nil {
		return fmt.Errorf("the document's webhooks have no POST %s", kind)
	}
	mt := item.Post.RequestBody.Value.Content.Get("application/json")
	if mt == nil || mt.Schema == nil {
		return fmt.Errorf("webhook %s has no application/json body", kind)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Errorf("webhook %s: not JSON: %w", kind, err)
	}
	if err := mt.Schema.Value.VisitJSON(v, openapi3.EnableJSONSchema2020(), openapi3.MultiErrors()); err != nil {
		return fmt.Errorf("webhook %s: %w", kind, err)
	}
	return nil
}

// Routes returns every "METHOD /path" of the document's paths.
func (c *Contract) Routes() []string {
	var out []string
	for path, item := range c.Doc.Paths.Map() {
		for method := range item.Operations() {
			out = append(out, method+" "+path)
		}
	}
	slices.Sort(out)
	return out
}

// ErrorCodes returns the enum of the ErrorCode schema.
func (c *Contract) ErrorCodes() []string {
	var out []string
	for _, v := range c.Doc.Components.Schemas["ErrorCode"].Value.Enum {
		s, _ := v.(string)
		out = append(out, s)
	}
	return out
}

// Header returns h as an http.Header, for events' single-valued maps.
func Header(h map[string]string) http.Header {
	out := http.Header{}
	for k, v := range h {
		for _, part := range strings.Split(v, ",") {
			if k == "" {
				continue
			}
			out.Add(k, strings.TrimSpace(part))
		}
	}
	return out
}

// CheckRecorded fails t when rec, the answer to r (whose body was body),
// is not what the document says; for handler tests that call ServeHTTP.
func CheckRecorded(t testing.TB, r *http.Request, body []byte, rec *httptest.ResponseRecorder) {
	t.Helper()
	x := Exchange{
		Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Header: r.Header, Body: body,
		Status: rec.Code, RespHeader: rec.Header(), RespBody: rec.Body.Bytes(),
	}
	check(t, x)
}
