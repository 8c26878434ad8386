package app

import (
	"encoding/base64"
	"os"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"payments/pkg/apidoc/apitest"
)

// checkContract fails t when res, the answer to ev, is not what
// docs/openapi.yaml says (and, for a 2xx, when ev is not a request it
// allows). Every HTTP call of this package's tests goes through it.
// strictRequest false skips the request, for tests that send what no
// client should. While the document is being written, CONTRACT_LENIENT=1
// skips the routes it lacks.
func checkContract(t testing.TB, ev events.APIGatewayV2HTTPRequest, res events.APIGatewayV2HTTPResponse, strictRequest bool) {
	t.Helper()
	body := []byte(ev.Body)
	if ev.IsBase64Encoded {
		if b, err := base64.StdEncoding.DecodeString(ev.Body); err == nil {
			body = b
		}
	}
	respBody := []byte(res.Body)
	if res.IsBase64Encoded {
		if b, err := base64.StdEncoding.DecodeString(res.Body); err == nil {
			respBody = b
		}
	}
	respHeader := apitest.Header(res.Headers)
	for k, vs := range res.MultiValueHeaders {
		for _, v := range vs {
			respHeader.Add(k, v)
		}
	}
	c := apitest.Default(t)
	x := apitest.Exchange{
		Method: ev.RequestContext.HTTP.Method, Path: ev.RawPath, RawQuery: ev.RawQueryString,
		Header: apitest.Header(ev.Headers), Body: body,
		Status: res.StatusCode, RespHeader: respHeader, RespBody: respBody,
		SkipRequest: !strictRequest,
	}
	if os.Getenv("CONTRACT_LENIENT") != "" && !c.Documents(x) {
		return
	}
	if err := c.Check(x); err != nil {
		t.Errorf("%s %s?%s: %v", x.Method, x.Path, x.RawQuery, err)
	}
}
