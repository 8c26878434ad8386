// Package devserver runs the service's Lambda handlers on one machine the way
// AWS runs them: an HTTP server that turns each request into the API Gateway
// (HTTP API, payload 2.0) event of the matching route and calls that
// function's handler, pollers that feed SQS-triggered functions from the
// emulator's queues like Lambda's event source mappings, and a scheduler for
// rate() schedules.
//
// Build wires it from template.yaml, so requests are routed exactly by the
// template's routes, and each handler is built by the same constructor in
// pkg/app that the function's main calls, from the environment the template
// gives that function.
//
// Differences from AWS: routes with AWS_IAM authorization are served without
// SigV4 checks, the caller's principal taken from its X-Caller-Principal
// header (CallerPrincipalHeader); handlers run concurrently in one process (Lambda runs one
// request per instance); responses are not size-limited.
package devserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"payments/infra/local/samtemplate"
	"payments/pkg/app"
	"payments/pkg/function"
	"payments/pkg/function/base"
)

// Server is the HTTP gateway with the pollers and schedules of one local
// deployment.
type Server struct {
	// Gateway serves the HTTP routes.
	Gateway *Gateway
	// Consumers are the SQS-triggered functions, polled by Poller.
	Consumers []Consumer
	// Poller feeds the consumers.
	Poller *Poller
	// Schedules are the scheduled functions.
	Schedules []Schedule
	// Logger receives the server's own logs (default slog.Default()).
	Logger *slog.Logger
	// Metrics receives the functions' metrics, the EMF lines they write in
	// Lambda (pkg/metrics); nil: they write none.
	Metrics io.Writer

	namespaces map[string]string // each function's METRICS_NAMESPACE
}

// Serve serves HTTP on l and runs the pollers and schedules until ctx is
// done, then shuts down gracefully: it stops accepting requests, lets the
// requests and invocations in progress finish, and returns.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	log := s.Logger
	if log == nil {
		log = slog.Default()
	}
	srv := &http.Server{
		Handler:           s.Gateway,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	s.instrument()
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	for _, c := range s.Consumers {
		wg.Go(func() { s.Poller.Run(ctx, c) })
	}
	for _, sc := range s.Schedules {
		wg.Go(func() { RunSchedule(ctx, sc, log) })
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(l) }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-serveErr:
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), DefaultTimeout)
	defer cancel()
	if e := srv.Shutdown(shutdown); e != nil {
		log.Warn("HTTP shutdown", "err", e)
	}
	stop() // the pollers and schedules, also when the HTTP server failed
	wg.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// Build wires a Server from the template: each function's handler is built
// once, by its constructor in app.HTTPFunctions, app.SQSFunctions or
// app.ScheduleFunctions, with the Config read from the environment that
// FunctionEnv gives it. A function of the template without a constructor is
// logged and left out (its routes answer 500, as a broken function would);
// a CodeDeploy hook (app.HookFunctions) is left out quietly. The functions
// share one set of caches (base.NewCaches), which lives as long as the
// Server. client is the SQS emulator's client, for the pollers.
func Build(ctx context.Context, t *samtemplate.Template, r Resources, client *sqs.Client, log *slog.Logger) (*Server, error) {
	if log == nil {
		log = slog.Default()
	}
	s := &Server{Poller: &Poller{Client: client, Logger: log}, Logger: log, namespaces: map[string]string{}}
	var routes []Route
	caches := base.NewCaches(time.Now)
	handlers := map[string]function.HTTPHandler{}
	timeouts := map[string]time.Duration{}
	for _, fn := range t.Functions() {
		timeout := time.Duration(FunctionInt(t, fn, "Timeout", 3)) * time.Second
		timeouts[fn.Dir] = timeout
		iam := 0
		for _, rt := range fn.Routes {
			routes = append(routes, Route{Method: rt.Method, Path: rt.Path, Function: fn.Dir, IAM: rt.IAM})
			if rt.IAM {
				iam++
			}
		}
		if iam > 0 {
			log.Info("IAM-authorized routes are served without SigV4 locally: X-Caller-Principal names the caller", "function", fn.Dir, "routes", iam)
		}
		if app.HookFunctions[fn.Dir] != nil {
			log.Debug("CodeDeploy hook: run by deployments in AWS, not locally", "function", fn.Dir)
			continue
		}
		newHTTP := app.HTTPFunctions[fn.Dir].New
		newSQS := app.SQSFunctions[fn.Dir]
		newSchedule := app.ScheduleFunctions[fn.Dir]
		if newHTTP == nil && newSQS == nil && newSchedule == nil {
			log.Warn("function has no constructor in pkg/app: left out", "function", fn.Dir)
			continue
		}
		env, err := FunctionEnv(t, fn, r)
		if err != nil {
			return nil, err
		}
		cfg, err := Config(ctx, fn.Dir, env)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", fn.Dir, err)
		}
		s.namespaces[fn.Dir] = cfg.MetricsNamespace
		if len(fn.Routes) > 0 && newHTTP != nil {
			if handlers[fn.Dir], err = newHTTP(ctx, cfg, caches); err != nil {
				return nil, fmt.Errorf("%s: init: %w", fn.Dir, err)
			}
		}
		for _, q := range fn.Queues {
			if newSQS == nil {
				log.Warn("queue consumer has no constructor in app.SQSFunctions: not polled", "function", fn.Dir, "queue", q.Queue)
				continue
			}
			url, ok := r.QueueURLs[q.Queue]
			if !ok {
				return nil, fmt.Errorf("%s: queue %q has no local URL", fn.Dir, q.Queue)
			}
			h, err := newSQS(ctx, cfg, caches)
			if err != nil {
				return nil, fmt.Errorf("%s: init: %w", fn.Dir, err)
			}
			s.Consumers = append(s.Consumers, Consumer{
				Function: fn.Dir, QueueURL: url, BatchSize: q.BatchSize, Concurrency: q.MaximumConcurrency,
				ReportBatchItemFailures: q.ReportBatchItemFailures, Handler: h, Timeout: timeout,
			})
		}
		for _, sc := range fn.Schedules {
			if newSchedule == nil {
				log.Warn("scheduled function has no constructor in app.ScheduleFunctions: not run", "function", fn.Dir)
				continue
			}
			every, err := ParseRate(sc.Expression)
			if err != nil {
				log.Warn("schedule not run locally", "function", fn.Dir, "err", err)
				continue
			}
			h, err := newSchedule(ctx, cfg, caches)
			if err != nil {
				return nil, fmt.Errorf("%s: init: %w", fn.Dir, err)
			}
			s.Schedules = append(s.Schedules, Schedule{Function: fn.Dir, Interval: every, Handler: h, Timeout: timeout})
		}
	}
	g, err := NewGateway(routes, handlers)
	if err != nil {
		return nil, err
	}
	g.Logger = log
	g.Timeouts = timeouts
	s.Gateway = g
	return s, nil
}
