package localtest

import (
	"context"
	"log/slog"
	"net"
	"os"
	"testing"

	"payments/infra/local/devserver"
	"payments/infra/local/samtemplate"
	"payments/infra/local/stack"
	"payments/pkg/httpapi"
)

// Serve serves the template's functions, their queues' consumers and
// their schedules on a loopback port for the test, as make run does, over
// fresh Resources; it returns the base URL (http://127.0.0.1:<port>) and
// stops the server when the test ends. log may be nil.
func Serve(t testing.TB, log *slog.Logger) string {
	t.Helper()
	base, _ := ServeStack(t, log, nil)
	return base
}

// ServeStack is Serve with the template parameters params (as make run's
// PAYMENT_DEADLINE_SECONDS sets PaymentDeadlineSeconds); it also returns
// the Resources served, for a test that reads the table itself. With Mode
// production it serves simulated pawaPay beside the functions, as make run
// does (devserver.StartAggregator).
func ServeStack(t testing.TB, log *slog.Logger, params map[string]string) (string, devserver.Resources) {
	t.Helper()
	tpl := Template(t)
	res := Resources(t, tpl)
	for k, v := range params {
		res.Params[k] = v
	}
	base, stop := StartServer(t, tpl, res, log, nil)
	t.Cleanup(stop)
	return base, res
}

// StartServer serves the functions of tpl over res on a loopback port, as
// ServeStack does, after edit (when not nil) has changed the server (a
// test that leaves a consumer out), and returns the base URL and the stop
// of the server, which waits until it has stopped. Served in production
// mode, simulated pawaPay and simulated Stripe Issuing run beside it (the
// test fails if the latter saw a request off Stripe's API).
func StartServer(t testing.TB, tpl *samtemplate.Template, res devserver.Resources, log *slog.Logger, edit func(*devserver.Server)) (string, func()) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + l.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := devserver.StartAggregator(ctx, res, base+httpapi.BasePath, 0, log); err != nil {
		cancel()
		l.Close()
		t.Fatal(err)
	}
	is, err := devserver.StartIssuer(ctx, res, base+httpapi.BasePath, os.Getenv(stack.StripeMockEnv), 0, "", log)
	if err != nil {
		cancel()
		l.Close()
		t.Fatal(err)
	}
	if is != nil {
		t.Cleanup(func() {
			if v := is.Sim.Violations(); len(v) > 0 {
				t.Errorf("requests and answers off Stripe's API: %v", v)
			}
		})
	}
	srv, err := devserver.Build(ctx, tpl, res, SQSClient(t), log)
	if err != nil {
		cancel()
		l.Close()
		t.Fatal(err)
	}
	if edit != nil {
		edit(srv)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- srv.Serve(ctx, l) }()
	return base, func() {
		cancel()
		if err := <-stopped; err != nil {
			t.Error(err)
		}
	}
}
