package devserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"payments/pkg/function"
	"payments/pkg/providers/operator/pawapay/pawapaysim"
)

// Aggregator is the simulated pawaPay that `make run` (and the tests of a
// local stack in production mode) serve beside the functions.
type Aggregator struct {
	// URL is its API's base URL.
	URL string
	srv *http.Server
}

// settleEvery is how often the simulated pawaPay finishes the payments
// whose delay has passed and sends their callbacks.
const settleEvery = time.Second

// StartAggregator serves simulated pawaPay on port (0: any free one) when
// res's mode is production and no real aggregator is configured
// (OperatorBaseUrl): it accepts the local operator token, sends its signed
// callbacks to api's callbacks route, and res's parameters, which must be
// set, point the functions at it and at its key. It returns nil in sandbox
// mode, or when a real aggregator is configured. It stops serving when ctx
// ends, or at Close.
func StartAggregator(ctx context.Context, res Resources, api string, port int, log *slog.Logger) (*Aggregator, error) {
	if res.Params["Mode"] != function.ModeProduction || res.Params["OperatorBaseUrl"] != "" {
		return nil, nil
	}
	if log == nil {
		log = slog.Default()
	}
	sim, err := pawapaysim.New(pawapaysim.Config{
		Token:       res.Secrets["OPERATOR_API_TOKEN"],
		CallbackURL: api + "/operator/callbacks/pawapay",
	})
	if err != nil {
		return nil, err
	}
	url, srv, err := serveSimulation(ctx, "simulated pawaPay", "OPERATOR_PORT", port, sim, log)
	if err != nil {
		return nil, err
	}
	a := &Aggregator{URL: url, srv: srv}
	go sim.Run(ctx, settleEvery)
	res.Params["OperatorBaseUrl"] = a.URL
	res.Params["OperatorCallbackPublicKey"] = string(sim.PublicKeyPEM())
	log.Info("simulated pawaPay", "url", a.URL)
	return a, nil
}

// Close stops serving.
func (a *Aggregator) Close() error { return a.srv.Close() }

// serveSimulation serves h, the simulation name, on 127.0.0.1:port (0: any
// free one; portVar names the variable that changes it) until ctx ends or
// the server is closed, and returns its base URL.
func serveSimulation(ctx context.Context, name, portVar string, port int, h http.Handler, log *slog.Logger) (string, *http.Server, error) {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w (set %s to use another port)", name, err, portVar)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error(name+" stopped", "error", err)
		}
	}()
	context.AfterFunc(ctx, func() { srv.Close() })
	return "http://" + l.Addr().String(), srv, nil
}
