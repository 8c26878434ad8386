package devserver

import (
	"context"

	"payments/pkg/metrics"
)

// instrument has every handler of s write its metrics, as EMF lines, to
// s.Metrics, each under its function's name and namespace (its
// Config.MetricsNamespace), as function.Start has them do in Lambda.
// Without s.Metrics it does nothing.
func (s *Server) instrument() {
	if s.Metrics == nil {
		return
	}
	out := metrics.SyncWriter(s.Metrics)
	recorder := func(fn string) *metrics.Recorder {
		return metrics.New(out, s.namespaces[fn], fn)
	}
	for i, c := range s.Consumers {
		s.Consumers[i].Handler = recording(recorder(c.Function), c.Handler)
	}
	for i, sc := range s.Schedules {
		s.Schedules[i].Handler = recording(recorder(sc.Function), sc.Handler)
	}
	if s.Gateway != nil {
		for fn, h := range s.Gateway.handlers {
			s.Gateway.handlers[fn] = recording(recorder(fn), h)
		}
	}
}

// recording returns h called with r in its context.
func recording[E, R any](r *metrics.Recorder, h func(context.Context, E) (R, error)) func(context.Context, E) (R, error) {
	return func(ctx context.Context, e E) (R, error) { return h(metrics.NewContext(ctx, r), e) }
}
