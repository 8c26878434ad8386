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
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("simulated pawaPay: %w (set OPERATOR_PORT to use another port)", err)
	}
	a := &Aggregator{URL: "http://" + l.Addr().String(), srv: &http.Server{Handler: sim, ReadHeaderTimeout: 10 * time.Second}}
	go func() {
		if err := a.srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("simulated pawaPay stopped", "error", err)
		}
	}()
	go sim.Run(ctx, settleEvery)
	context.AfterFunc(ctx, func() { a.srv.Close() })
	res.Params["OperatorBaseUrl"] = a.URL
	res.Params["OperatorCallbackPublicKey"] = string(sim.PublicKeyPEM())
	log.Info("simulated pawaPay", "url", a.URL)
	return a, nil
}

// Close stops serving.
func (a *Aggregator) Close() error { return a.srv.Close() }
