package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"payments/infra/local/devserver"
	"payments/pkg/function"
	"payments/pkg/providers/operator/pawapay/pawapaysim"
)

// aggregator is the simulated pawaPay that `make run` serves in production
// mode.
type aggregator struct {
	URL string
	srv *http.Server
}

// settleEvery is how often the simulated pawaPay finishes the payments
// whose delay has passed and sends their callbacks.
const settleEvery = time.Second

// startAggregator serves simulated pawaPay on port when res's mode is
// production and no real aggregator is configured (OperatorBaseUrl): it
// accepts the local operator token, sends its signed callbacks to api's
// callbacks route, and res's parameters point the functions at it and at
// its key. It returns nil in sandbox mode, or when a real aggregator is
// configured.
func startAggregator(ctx context.Context, res devserver.Resources, api string, port int, log *slog.Logger) (*aggregator, error) {
	if res.Params["Mode"] != function.ModeProduction || res.Params["OperatorBaseUrl"] != "" {
		return nil, nil
	}
	sim, err := pawapaysim.New(pawapaysim.Config{
		Token:       res.Secrets["OPERATOR_API_TOKEN"],
		CallbackURL: api + "/operator/callbacks/pawapay",
	})
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("simulated pawaPay: %w (set OPERATOR_PORT to use another port)", err)
	}
	a := &aggregator{URL: "http://" + l.Addr().String(), srv: &http.Server{Handler: sim, ReadHeaderTimeout: 10 * time.Second}}
	go func() {
		if err := a.srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("simulated pawaPay stopped", "error", err)
		}
	}()
	go sim.Run(ctx, settleEvery)
	res.Params["OperatorBaseUrl"] = a.URL
	res.Params["OperatorCallbackPublicKey"] = string(sim.PublicKeyPEM())
	log.Info("simulated pawaPay", "url", a.URL)
	return a, nil
}

// Close stops serving.
func (a *aggregator) Close() error { return a.srv.Close() }
