package httpapi

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"
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

// RequestID returns the id of the request as API Gateway named it (the
// requestContext's requestId), or the Lambda invocation's, or "".
func RequestID(r *http.Request) string {
	if rc, ok := core.GetAPIGatewayV2ContextFromContext(r.Context()); ok && rc.RequestID != "" {
		return rc.RequestID
	}
	if lc, ok := lambdacontext.FromContext(r.Context()); ok {
		return lc.AwsRequestID
	}
	return ""
}
