package httpapi

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
)

type companyKey struct{}

// WithCompany returns ctx carrying the authenticated company's id.
func WithCompany(ctx context.Context, companyID string) context.Context {
	return context.WithValue(ctx, companyKey{}, companyID)
}

// companyID returns the authenticated company's id, or "" when the request
// was not authenticated as a company.
func companyID(ctx context.Context) string {
	id, _ := ctx.Value(companyKey{}).(string)
	return id
}

// Company returns the authenticated company's id from r, or ErrUnauthorized
// for a request that reached a company route without one.
func Company(r *http.Request) (string, error) {
	id := companyID(r.Context())
	if id == "" {
		return "", ErrUnauthorized
	}
	return id, nil
}

type clientKey struct{}

// WithClient returns ctx carrying the client_id of the API key whose token
// authenticated the request (the company's, WithCompany).
func WithClient(ctx context.Context, clientID string) context.Context {
	return context.WithValue(ctx, clientKey{}, clientID)
}

// Client returns the client_id of the API key that made r, or "" outside
// a company's request.
func Client(r *http.Request) string {
	id, _ := r.Context().Value(clientKey{}).(string)
	return id
}

type operatorKey struct{}

// WithOperator returns ctx carrying who is using the operator console (the
// IAM principal in AWS), as the console guard saw it.
func WithOperator(ctx context.Context, who string) context.Context {
	return context.WithValue(ctx, operatorKey{}, who)
}

// Operator returns who is using the operator console, or "" outside it.
func Operator(ctx context.Context) string {
	who, _ := ctx.Value(operatorKey{}).(string)
	return who
}

// Credential returns the value of the credential header name (Authorization,
// X-Admin-Key), or ErrUnauthorized when the request carries it more than
// once. API Gateway joins repeated headers with commas; the Lambda adapter
// splits most back into several values but keeps Authorization whole, so a
// comma counts as a repetition too (no credential of ours contains one). An
// absent header is "".
func Credential(r *http.Request, name string) (string, error) {
	values := r.Header.Values(name)
	switch {
	case len(values) == 0:
		return "", nil
	case len(values) > 1 || strings.Contains(values[0], ","):
		return "", fmt.Errorf("%w: %s sent more than once", ErrUnauthorized, name)
	}
	return values[0], nil
}

// SourceIP returns the caller's address as API Gateway saw it: r.RemoteAddr,
// which the Lambda adapter sets from requestContext.http.sourceIp, without a
// port. Headers such as X-Forwarded-For are never used: a client can send
// them.
func SourceIP(r *http.Request) string {
	addr := r.RemoteAddr
	if host, _, err := net.SplitHostPort(addr); err == nil {
		addr = host
	}
	if addr == "" {
		return "unknown"
	}
	return addr
}

type requestKey struct{}

// requestIDs are the ids a request is known by: API Gateway's (the
// requestContext's requestId, or the Lambda invocation's when it has none)
// and the Lambda invocation's.
type requestIDs struct{ request, invocation string }

// WithRequestID returns ctx carrying the ids of the request it serves:
// request, API Gateway's (the requestContext's requestId, or the Lambda
// invocation's when the event has none), and invocation, the Lambda
// invocation's, which the access log names. The wiring sets them from the
// event (function.HTTP); a request without them has "".
func WithRequestID(ctx context.Context, request, invocation string) context.Context {
	return context.WithValue(ctx, requestKey{}, requestIDs{request: request, invocation: invocation})
}

// RequestID returns the id of the request as API Gateway named it (the
// requestContext's requestId), or the Lambda invocation's, or "".
func RequestID(r *http.Request) string {
	ids, _ := r.Context().Value(requestKey{}).(requestIDs)
	return ids.request
}

// invocationID returns the id of the Lambda invocation serving ctx's
// request, or "" with none.
func invocationID(ctx context.Context) (string, bool) {
	ids, ok := ctx.Value(requestKey{}).(requestIDs)
	return ids.invocation, ok && ids.invocation != ""
}
