package apitest

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// CheckEvent fails t when res, a function's answer to the API Gateway
// event ev, is not what the document says (and, for a 2xx, when ev is not a
// request it allows). strictRequest false skips the request, for tests that
// send what no client should.
func CheckEvent(t testing.TB, ev events.APIGatewayV2HTTPRequest, res events.APIGatewayV2HTTPResponse, strictRequest bool) {
	t.Helper()
	respHeader := Header(res.Headers)
	for k, vs := range res.MultiValueHeaders {
		for _, v := range vs {
			respHeader.Add(k, v)
		}
	}
	path, query := ev.RawPath, ev.RawQueryString
	if p, q, found := strings.Cut(path, "?"); found && query == "" { // tests that put the query in the path
		path, query = p, q
	}
	check(t, Exchange{
		Method: ev.RequestContext.HTTP.Method, Path: path, RawQuery: query,
		Header: Header(ev.Headers), Body: decoded(ev.Body, ev.IsBase64Encoded),
		Status: res.StatusCode, RespHeader: respHeader, RespBody: decoded(res.Body, res.IsBase64Encoded),
		SkipRequest: !strictRequest,
	})
}

// check fails t when x is not what the document says.
func check(t testing.TB, x Exchange) {
	t.Helper()
	if err := Default(t).Check(x); err != nil {
		t.Errorf("%s %s?%s: %v", x.Method, x.Path, x.RawQuery, err)
	}
}

// decoded returns body's bytes, base64-decoded when isBase64 says so.
func decoded(body string, isBase64 bool) []byte {
	if isBase64 {
		if b, err := base64.StdEncoding.DecodeString(body); err == nil {
			return b
		}
	}
	return []byte(body)
}
