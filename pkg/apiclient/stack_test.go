package apiclient_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"payments/infra/local/localtest"
	"payments/pkg/apiclient"
	"payments/pkg/apidoc/apitest"
	"payments/pkg/httpapi"
)

// TestMain serves the sample identity documents customers are enrolled
// from, as make run does.
func TestMain(m *testing.M) { localtest.Main(m) }

// startStack serves the template's functions, their queues' consumers and
// their schedules on a loopback port, as make run does, and returns a client
// of it whose every exchange is checked against docs/openapi.yaml.
func startStack(t *testing.T) *apiclient.ClientWithResponses {
	t.Helper()
	base := localtest.Serve(t, slog.New(slog.DiscardHandler))
	c, err := apiclient.NewClientWithResponses(base+httpapi.BasePath,
		apiclient.WithHTTPClient(&contractDoer{t: t}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// contractDoer sends requests and fails the test on an exchange that is
// not what the document says.
type contractDoer struct{ t *testing.T }

func (d *contractDoer) Do(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	respBody, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	res.Body = io.NopCloser(bytes.NewReader(respBody))
	x := apitest.Exchange{
		Method: req.Method, Path: req.URL.Path, RawQuery: req.URL.RawQuery, Header: req.Header, Body: body,
		Status: res.StatusCode, RespHeader: res.Header, RespBody: respBody,
	}
	if err := apitest.Default(d.t).Check(x); err != nil {
		d.t.Errorf("%s %s: %v", req.Method, req.URL, err)
	}
	return res, nil
}

// adminKey and bearer authorize a request as the operator and as a company.
func adminKey(_ context.Context, req *http.Request) error {
	req.Header.Set("X-Admin-Key", localtest.AdminAPIKey)
	return nil
}

func bearer(token string) apiclient.RequestEditorFn {
	return func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+token)
		return nil
	}
}
