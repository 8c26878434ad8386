package devserver

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"payments/pkg/function"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

// recorder is a test HTTP handler that keeps the last event and answers
// with resp.
type recorder struct {
	event  events.APIGatewayV2HTTPRequest
	reqID  string
	resp   events.APIGatewayV2HTTPResponse
	err    error
	panics bool
}

func (rec *recorder) handle(ctx context.Context, e events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	rec.event = e
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		rec.reqID = lc.AwsRequestID
	}
	if rec.panics {
		panic("boom")
	}
	return rec.resp, rec.err
}

func newTestGateway(t *testing.T, rec *recorder) *httptest.Server {
	t.Helper()
	g, err := NewGateway([]Route{
		{Method: "POST", Path: "/api/v1/wallets/{id}/items", Function: "wallets"},
		{Method: "GET", Path: "/api/v1/missing", Function: "missing"},
	}, map[string]function.HTTPHandler{"wallets": rec.handle})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	return srv
}

func TestGatewayEvent(t *testing.T) {
	tests := []struct {
		name        string
		contentType string
		body        []byte
		wantBody    string
		wantBase64  bool
	}{
		{"json", "application/json", []byte(`{"a":1}`), `{"a":1}`, false},
		{"text", "text/plain; charset=utf-8", []byte("héllo"), "héllo", false},
		{"binary", "application/octet-stream", []byte{0, 1, 2, 0xff}, base64.StdEncoding.EncodeToString([]byte{0, 1, 2, 0xff}), true},
		{"image", "image/png", []byte("PNG"), base64.StdEncoding.EncodeToString([]byte("PNG")), true},
		{"empty", "", nil, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{resp: events.APIGatewayV2HTTPResponse{StatusCode: 201, Body: "{}"}}
			srv := newTestGateway(t, rec)
			req, _ := http.NewRequest("POST", srv.URL+"/api/v1/wallets/w%2F1/items?b=2&a=1&a=3", bytes.NewReader(tt.body))
			if tt.contentType != "" {
				req.Header.Set("Content-Type", tt.contentType)
			}
			req.Header.Set("X-Forwarded-For", "203.0.113.9")
			req.Header.Add("X-Multi", "one")
			req.Header.Add("X-Multi", "two")
			req.Header.Set("User-Agent", "test-agent")
			req.Header.Set("Cookie", "a=1; b=2")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 201 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			e := rec.event
			checks := []struct {
				what      string
				got, want any
			}{
				{"version", e.Version, "2.0"},
				{"routeKey", e.RouteKey, "POST /api/v1/wallets/{id}/items"},
				{"requestContext.routeKey", e.RequestContext.RouteKey, "POST /api/v1/wallets/{id}/items"},
				{"rawPath", e.RawPath, "/api/v1/wallets/w%2F1/items"},
				{"rawQueryString", e.RawQueryString, "b=2&a=1&a=3"},
				{"pathParameters", e.PathParameters, map[string]string{"id": "w/1"}},
				{"queryStringParameters", e.QueryStringParameters, map[string]string{"a": "1,3", "b": "2"}},
				{"sourceIp", e.RequestContext.HTTP.SourceIP, "127.0.0.1"},
				{"method", e.RequestContext.HTTP.Method, "POST"},
				{"userAgent", e.RequestContext.HTTP.UserAgent, "test-agent"},
				{"stage", e.RequestContext.Stage, "$default"},
				{"x-forwarded-for", e.Headers["x-forwarded-for"], "203.0.113.9, 127.0.0.1"},
				{"x-multi", e.Headers["x-multi"], "one,two"},
				{"cookies", e.Cookies, []string{"a=1", "b=2"}},
				{"cookie header", e.Headers["cookie"], ""},
				{"body", e.Body, tt.wantBody},
				{"isBase64Encoded", e.IsBase64Encoded, tt.wantBase64},
			}
			for _, c := range checks {
				if !equal(c.got, c.want) {
					t.Errorf("%s = %#v, want %#v", c.what, c.got, c.want)
				}
			}
			if e.RequestContext.RequestID == "" || rec.reqID == "" || e.RequestContext.TimeEpoch == 0 || e.RequestContext.Time == "" {
				t.Errorf("missing request id, Lambda request id or time: %+v", e.RequestContext)
			}
			for k := range e.Headers {
				if k != strings.ToLower(k) {
					t.Errorf("header %q is not lower case", k)
				}
			}
		})
	}
}

func equal(a, b any) bool {
	switch x := a.(type) {
	case map[string]string:
		return maps.Equal(x, b.(map[string]string))
	case []string:
		return slices.Equal(x, b.([]string))
	}
	return a == b
}

func TestGatewayResponse(t *testing.T) {
	tests := []struct {
		name       string
		rec        recorder
		path       string
		method     string
		wantStatus int
		wantBody   string
		wantHeader map[string][]string
	}{
		{
			name: "headers, cookies and base64",
			rec: recorder{resp: events.APIGatewayV2HTTPResponse{
				StatusCode: 202, Headers: map[string]string{"Content-Type": "application/octet-stream", "X-One": "1"},
				MultiValueHeaders: map[string][]string{"X-Two": {"a", "b"}},
				Cookies:           []string{"s=1; Path=/", "t=2"},
				Body:              base64.StdEncoding.EncodeToString([]byte{1, 2, 3}), IsBase64Encoded: true,
			}},
			method: "POST", path: "/api/v1/wallets/x/items", wantStatus: 202, wantBody: "\x01\x02\x03",
			wantHeader: map[string][]string{"Content-Type": {"application/octet-stream"}, "X-One": {"1"}, "X-Two": {"a", "b"}, "Set-Cookie": {"s=1; Path=/", "t=2"}},
		},
		{name: "unmatched path", method: "GET", path: "/api/v1/nothing", wantStatus: 404, wantBody: `{"message":"Not Found"}`},
		{name: "unmatched method", method: "DELETE", path: "/api/v1/wallets/x/items", wantStatus: 404, wantBody: `{"message":"Not Found"}`},
		{name: "handler error", rec: recorder{err: errors.New("secret detail")}, method: "POST", path: "/api/v1/wallets/x/items", wantStatus: 500, wantBody: `{"message":"Internal Server Error"}`},
		{name: "panic", rec: recorder{panics: true}, method: "POST", path: "/api/v1/wallets/x/items", wantStatus: 500, wantBody: `{"message":"Internal Server Error"}`},
		{name: "no status", rec: recorder{resp: events.APIGatewayV2HTTPResponse{Body: "x"}}, method: "POST", path: "/api/v1/wallets/x/items", wantStatus: 500, wantBody: `{"message":"Internal Server Error"}`},
		{name: "function without handler", method: "GET", path: "/api/v1/missing", wantStatus: 500, wantBody: `{"message":"Internal Server Error"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newTestGateway(t, &tt.rec)
			req, _ := http.NewRequest(tt.method, srv.URL+tt.path, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.wantStatus || string(body) != tt.wantBody {
				t.Errorf("got %d %q, want %d %q", resp.StatusCode, body, tt.wantStatus, tt.wantBody)
			}
			for k, want := range tt.wantHeader {
				if got := resp.Header.Values(k); !slices.Equal(got, want) {
					t.Errorf("header %s = %q, want %q", k, got, want)
				}
			}
		})
	}
}

func TestGatewayTimeout(t *testing.T) {
	// The function ignores its deadline: it answers only when the test ends.
	release := make(chan struct{})
	defer close(release)
	g, err := NewGateway([]Route{{Method: "GET", Path: "/slow", Function: "slow"}}, map[string]function.HTTPHandler{
		"slow": func(ctx context.Context, _ events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
			<-release
			return events.APIGatewayV2HTTPResponse{StatusCode: 200}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	g.Timeout = 50 * time.Millisecond
	w := httptest.NewRecorder()
	g.ServeHTTP(w, httptest.NewRequest("GET", "/slow", nil))
	if w.Code != http.StatusServiceUnavailable {
		t.Errorf("status %d, want 503", w.Code)
	}
}

func TestGatewayBodyTooLarge(t *testing.T) {
	rec := &recorder{resp: events.APIGatewayV2HTTPResponse{StatusCode: 200}}
	srv := newTestGateway(t, rec)
	resp, err := http.Post(srv.URL+"/api/v1/wallets/x/items", "application/json", bytes.NewReader(make([]byte, MaxBodyBytes+1)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("status %d, want 413", resp.StatusCode)
	}
}

// TestCallerPrincipal: on an AWS_IAM route, X-Caller-Principal becomes the
// principal API Gateway would have authorized, and leaves the headers; on
// another route it is a header like any other.
func TestCallerPrincipal(t *testing.T) {
	rec := &recorder{resp: events.APIGatewayV2HTTPResponse{StatusCode: 200, Body: "{}"}}
	g, err := NewGateway([]Route{
		{Method: "POST", Path: "/api/v1/admin/things", Function: "admin", IAM: true},
		{Method: "POST", Path: "/api/v1/things", Function: "admin"},
	}, map[string]function.HTTPHandler{"admin": rec.handle})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	const arn = "arn:aws:iam::000000000000:user/ada"
	for _, tt := range []struct {
		path, header, wantARN, wantHeader string
	}{
		{"/api/v1/admin/things", arn, arn, ""},
		{"/api/v1/admin/things", "", "", ""},
		{"/api/v1/things", arn, "", arn},
	} {
		req, _ := http.NewRequest("POST", srv.URL+tt.path, nil)
		if tt.header != "" {
			req.Header.Set(CallerPrincipalHeader, tt.header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		got := ""
		if a := rec.event.RequestContext.Authorizer; a != nil && a.IAM != nil {
			got = a.IAM.UserARN
		}
		if got != tt.wantARN || rec.event.Headers["x-caller-principal"] != tt.wantHeader {
			t.Errorf("%s with %q: principal %q, header %q; want %q, %q", tt.path, tt.header, got, rec.event.Headers["x-caller-principal"], tt.wantARN, tt.wantHeader)
		}
	}
}
