package localtest

import (
	"context"
	"log/slog"
	"net"
	"testing"

	"payments/infra/local/devserver"
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
// the Resources served, for a test that reads the table itself.
func ServeStack(t testing.TB, log *slog.Logger, params map[string]string) (string, devserver.Resources) {
	t.Helper()
	tpl := Template(t)
	res := Resources(t, tpl)
	res.Params = params
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := devserver.Build(ctx, tpl, res, SQSClient(t), log)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- srv.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-stopped; err != nil {
			t.Error(err)
		}
	})
	return "http://" + l.Addr().String(), res
}
