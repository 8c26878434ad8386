package devserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/google/uuid"

	"payments/infra/local/stack"
	"payments/pkg/function"
)

// Limits API Gateway and Lambda apply that the gateway copies.
const (
	// MaxBodyBytes is the largest request body API Gateway accepts.
	MaxBodyBytes = 10 << 20
	// DefaultTimeout is how long API Gateway waits for an HTTP integration.
	DefaultTimeout = 30 * time.Second
	apiID          = "local"
)

// RequestIDHeader is the header in which API Gateway (HTTP API) answers
// the id it gave the request.
const RequestIDHeader = "Apigw-Requestid"

// Gateway is an http.Handler that serves requests the way API Gateway (HTTP
// API, payload format 2.0) and Lambda would: it matches the request to a
// route, builds the event Lambda would receive, calls that function's
// handler and writes the response it returns.
type Gateway struct {
	routes   *routeTable
	handlers map[string]function.HTTPHandler
	// Timeout bounds each invocation (default DefaultTimeout); past it the
	// client gets 503 as from API Gateway.
	Timeout time.Duration
	// Timeouts bounds the invocations of some functions more tightly than
	// Timeout: their Lambda timeout, keyed by function.
	Timeouts map[string]time.Duration
	// Logger receives errors (default slog.Default()).
	Logger *slog.Logger
}

// NewGateway returns a gateway for routes, calling handlers[route.Function].
// A route whose function has no handler answers 500 and logs why.
func NewGateway(routes []Route, handlers map[string]function.HTTPHandler) (*Gateway, error) {
	t, err := newRouteTable(routes)
	if err != nil {
		return nil, err
	}
	return &Gateway{routes: t, handlers: handlers, Timeout: DefaultTimeout, Logger: slog.Default()}, nil
}

// ServeHTTP implements http.Handler.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	route, params := g.routes.match(r.Method, r.URL.EscapedPath())
	if route == nil {
		writeMessage(w, http.StatusNotFound, "Not Found")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeMessage(w, http.StatusRequestEntityTooLarge, "Request Entity Too Large")
			return
		}
		writeMessage(w, http.StatusBadRequest, "Bad Request")
		return
	}
	event := NewEvent(r, body, route.Key(), params)
	if route.IAM {
		callerPrincipal(&event)
	}
	// API Gateway names every answer's request: the correlation id of the
	// logs and metrics of the work it starts (docs/operations.md).
	w.Header().Set(RequestIDHeader, event.RequestContext.RequestID)
	h := g.handlers[route.Function]
	if h == nil {
		g.Logger.Error("function has no handler: is it registered in pkg/app?", "function", route.Function, "route", route.Key())
		writeMessage(w, http.StatusInternalServerError, "Internal Server Error")
		return
	}
	resp, err := g.invoke(r.Context(), route.Function, h, event)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			g.Logger.Error("function timed out", "function", route.Function, "route", route.Key(), "request_id", event.RequestContext.RequestID)
			writeMessage(w, http.StatusServiceUnavailable, "Service Unavailable")
			return
		}
		g.Logger.Error("function failed", "function", route.Function, "route", route.Key(), "request_id", event.RequestContext.RequestID, "err", err)
		writeMessage(w, http.StatusInternalServerError, "Internal Server Error")
		return
	}
	if err := WriteResponse(w, resp); err != nil {
		g.Logger.Error("invalid function response", "function", route.Function, "route", route.Key(), "err", err)
		writeMessage(w, http.StatusInternalServerError, "Internal Server Error")
	}
}

// invoke calls h as Lambda would: with a LambdaContext and a deadline, and a
// panic turned into an error.
func (g *Gateway) invoke(ctx context.Context, function string, h function.HTTPHandler, event events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	timeout := g.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if t, ok := g.Timeouts[function]; ok && t > 0 {
		timeout = min(timeout, t)
	}
	// Lambda does not stop a function when the client goes away.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	ctx = LambdaContext(ctx, function)
	type result struct {
		resp events.APIGatewayV2HTTPResponse
		err  error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{err: fmt.Errorf("panic: %v", p)}
			}
		}()
		resp, err := h(ctx, event)
		done <- result{resp, err}
	}()
	select {
	case res := <-done:
		return res.resp, res.err
	case <-ctx.Done():
		return events.APIGatewayV2HTTPResponse{}, ctx.Err()
	}
}

// LambdaContext returns ctx carrying the lambdacontext.LambdaContext of a new
// invocation of function: a fresh request id and the function's ARN.
func LambdaContext(ctx context.Context, function string) context.Context {
	return lambdacontext.NewContext(ctx, &lambdacontext.LambdaContext{
		AwsRequestID:       uuid.NewString(),
		InvokedFunctionArn: FunctionARN(function),
	})
}

// FunctionARN returns the local ARN of a function.
func FunctionARN(function string) string {
	return "arn:aws:lambda:" + stack.Region + ":" + stack.AccountID + ":function:" + function
}

// CallerPrincipalHeader names, on the local gateway only, the IAM principal
// (an ARN) a request to an AWS_IAM route stands for: there is no SigV4
// locally. The gateway moves it where API Gateway puts the principal it
// authorized (requestContext.authorizer.iam.userArn), so that the
// functions read it as they do in AWS. In AWS the header is a header like
// any other, which no function reads.
const CallerPrincipalHeader = "X-Caller-Principal"

// callerPrincipal moves the CallerPrincipalHeader of e, an event of an
// AWS_IAM route, to its authorizer's IAM principal.
func callerPrincipal(e *events.APIGatewayV2HTTPRequest) {
	key := strings.ToLower(CallerPrincipalHeader)
	arn := strings.TrimSpace(e.Headers[key])
	delete(e.Headers, key)
	if arn == "" {
		return
	}
	e.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
		IAM: &events.APIGatewayV2HTTPRequestContextAuthorizerIAMDescription{AccountID: stack.AccountID, UserARN: arn},
	}
}

// NewEvent builds the event API Gateway sends to Lambda for r, whose body
// has been read into body, on the route with key routeKey and params as
// path parameters. The source IP is the TCP peer's: X-Forwarded-For and
// similar headers are passed on as headers, never trusted.
func NewEvent(r *http.Request, body []byte, routeKey string, params map[string]string) events.APIGatewayV2HTTPRequest {
	now := time.Now()
	sourceIP, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		sourceIP = r.RemoteAddr
	}
	headers := map[string]string{}
	var cookies []string
	for name, values := range r.Header {
		name = strings.ToLower(name)
		if name == "cookie" {
			for _, v := range values {
				for c := range strings.SplitSeq(v, ";") {
					if c = strings.TrimSpace(c); c != "" {
						cookies = append(cookies, c)
					}
				}
			}
			continue
		}
		headers[name] = strings.Join(values, ",")
	}
	headers["host"] = r.Host
	// API Gateway appends the peer to X-Forwarded-For and sets the others.
	if xff := headers["x-forwarded-for"]; xff != "" {
		headers["x-forwarded-for"] = xff + ", " + sourceIP
	} else {
		headers["x-forwarded-for"] = sourceIP
	}
	proto, port := "http", "80"
	if r.TLS != nil {
		proto, port = "https", "443"
	}
	if _, p, err := net.SplitHostPort(r.Host); err == nil {
		port = p
	}
	headers["x-forwarded-proto"] = proto
	headers["x-forwarded-port"] = port
	if len(body) > 0 {
		headers["content-length"] = strconv.Itoa(len(body))
	}

	var query map[string]string
	if q := r.URL.Query(); len(q) > 0 {
		query = make(map[string]string, len(q))
		for k, vs := range q {
			query[k] = strings.Join(vs, ",")
		}
	}
	// The domain keeps the local port: the Lambda adapter makes the
	// request's Host of it, which the dashboard's cross-origin check
	// compares with the Origin header (in AWS neither has a port).
	domain := r.Host
	prefix, _, _ := strings.Cut(domain, ".")
	if h, _, err := net.SplitHostPort(domain); err == nil {
		prefix, _, _ = strings.Cut(h, ".")
	}

	e := events.APIGatewayV2HTTPRequest{
		Version:               "2.0",
		RouteKey:              routeKey,
		RawPath:               r.URL.EscapedPath(),
		RawQueryString:        r.URL.RawQuery,
		Cookies:               cookies,
		Headers:               headers,
		QueryStringParameters: query,
		PathParameters:        params,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey:     routeKey,
			AccountID:    stack.AccountID,
			Stage:        "$default",
			RequestID:    uuid.NewString(),
			APIID:        apiID,
			DomainName:   domain,
			DomainPrefix: prefix,
			Time:         now.UTC().Format("02/Jan/2006:15:04:05 -0700"),
			TimeEpoch:    now.UnixMilli(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method:    r.Method,
				Path:      r.URL.Path,
				Protocol:  r.Proto,
				SourceIP:  sourceIP,
				UserAgent: r.UserAgent(),
			},
		},
	}
	if len(body) > 0 {
		if isText(r.Header.Get("Content-Type"), body) {
			e.Body = string(body)
		} else {
			e.Body = base64.StdEncoding.EncodeToString(body)
			e.IsBase64Encoded = true
		}
	}
	return e
}

// isText reports whether a body of contentType is passed to Lambda as text;
// other bodies are base64-encoded.
func isText(contentType string, body []byte) bool {
	if contentType == "" {
		return utf8.Valid(body)
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	switch {
	case strings.HasPrefix(mt, "text/"),
		mt == "application/json", strings.HasSuffix(mt, "+json"),
		mt == "application/xml", strings.HasSuffix(mt, "+xml"),
		mt == "application/x-www-form-urlencoded",
		mt == "application/javascript", mt == "application/graphql":
		return utf8.Valid(body)
	}
	return false
}

// WriteResponse writes a function's v2 response to w as API Gateway would:
// status, headers, multi-value headers, cookies as Set-Cookie, and the body,
// base64-decoded when IsBase64Encoded.
func WriteResponse(w http.ResponseWriter, resp events.APIGatewayV2HTTPResponse) error {
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		var err error
		if body, err = base64.StdEncoding.DecodeString(resp.Body); err != nil {
			return fmt.Errorf("body is not valid base64: %w", err)
		}
	}
	if resp.StatusCode < 100 || resp.StatusCode > 599 {
		return fmt.Errorf("status code %d", resp.StatusCode)
	}
	h := w.Header()
	for k, v := range resp.Headers {
		h.Set(k, v)
	}
	for k, vs := range resp.MultiValueHeaders {
		if _, set := resp.Headers[k]; set {
			continue
		}
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	for _, c := range resp.Cookies {
		h.Add("Set-Cookie", c)
	}
	if _, set := h["Content-Type"]; !set {
		h["Content-Type"] = nil // send what the function sent: no sniffing
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(resp.StatusCode)
	w.Write(body) // an error means the client went away
	return nil
}

// writeMessage writes API Gateway's own error body: {"message":"…"}.
func writeMessage(w http.ResponseWriter, status int, msg string) {
	b, _ := json.Marshal(map[string]string{"message": msg})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}
