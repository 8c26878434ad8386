// Package correlation carries, through a context, what ties the pieces of
// one piece of work together across functions and queue hops: the
// correlation id (the API Gateway request id of the request that accepted
// the work) and the X-Ray trace header. pkg/queue writes both on every
// message it sends and reads them back on every message it handles;
// LogHandler writes the correlation id on every log line, so that one grep
// finds a payment's whole life (docs/operations.md).
package correlation

import (
	"context"
	"log/slog"
)

type idKey struct{}

// lambdaTraceKey is where aws-lambda-go puts the invocation's trace header
// (the X-Amzn-Trace-Id of the Runtime API's next invocation).
const lambdaTraceKey = "x-amzn-trace-id"

type traceKey struct{}

// NewContext returns ctx carrying the correlation id id; an empty id
// leaves ctx as it is.
func NewContext(ctx context.Context, id string) context.Context {
	if id == "" {
		return ctx
	}
	return context.WithValue(ctx, idKey{}, id)
}

// ID returns the correlation id ctx carries, or "".
func ID(ctx context.Context) string {
	id, _ := ctx.Value(idKey{}).(string)
	return id
}

// WithTrace returns ctx carrying the trace header h (the AWSTraceHeader of
// the message being handled), which Trace prefers to the invocation's own:
// the work a message starts stays in the trace of the request that sent it.
func WithTrace(ctx context.Context, h string) context.Context {
	if h == "" {
		return ctx
	}
	return context.WithValue(ctx, traceKey{}, h)
}

// Trace returns the trace header to pass on with work sent from ctx: the
// one of the message being handled, else the Lambda invocation's, else "".
func Trace(ctx context.Context) string {
	if h, ok := ctx.Value(traceKey{}).(string); ok {
		return h
	}
	h, _ := ctx.Value(lambdaTraceKey).(string)
	return h
}

// LogHandler returns h writing, on every record logged with a context that
// carries a correlation id, the attribute correlation_id.
func LogHandler(h slog.Handler) slog.Handler { return logHandler{h} }

type logHandler struct{ slog.Handler }

func (l logHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := ID(ctx); id != "" {
		r = r.Clone()
		r.AddAttrs(slog.String("correlation_id", id))
	}
	return l.Handler.Handle(ctx, r)
}

func (l logHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return logHandler{l.Handler.WithAttrs(as)}
}

func (l logHandler) WithGroup(name string) slog.Handler {
	return logHandler{l.Handler.WithGroup(name)}
}
