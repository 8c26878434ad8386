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
	"payments/pkg/providers/issuer/stripeissuing/stripesim"
)

// Issuer is the simulated Stripe Issuing that `make run` (and the tests of a
// local stack in production mode) serve beside the functions.
type Issuer struct {
	// URL is its API's base URL.
	URL string
	// Sim is the simulation, whose Violations a test asserts empty.
	Sim *stripesim.Sim
	srv *http.Server
}

// deliverEvery is how often the simulated Stripe Issuing sends the events
// not yet delivered.
const deliverEvery = time.Second

// StartIssuer serves simulated Stripe Issuing on port (0: any free one)
// when res's mode is production and no real issuer is configured
// (IssuerBaseUrl): it accepts the local issuer key (ISSUER_API_KEY), has
// stripe-mock at stripeMockURL check every request, sends its events,
// signed with ISSUER_WEBHOOK_SECRET, to api's Stripe webhooks route, and
// sets res's IssuerBaseUrl, which must be a set map, to its URL; it logs
// every violation (stripesim.Sim.Violations) as a warning. It returns
// nil in sandbox mode, or when a real issuer is configured. It stops
// serving when ctx ends, or at Close.
func StartIssuer(ctx context.Context, res Resources, api, stripeMockURL string, port int, log *slog.Logger) (*Issuer, error) {
	if res.Params["Mode"] != function.ModeProduction || res.Params["IssuerBaseUrl"] != "" {
		return nil, nil
	}
	if log == nil {
		log = slog.Default()
	}
	sim, err := stripesim.New(stripesim.Config{
		APIKey:        res.Secrets["ISSUER_API_KEY"],
		WebhookSecret: res.Secrets["ISSUER_WEBHOOK_SECRET"],
		WebhookURL:    api + "/issuer/stripe/webhooks",
		StripeMockURL: stripeMockURL,
	})
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("simulated Stripe Issuing: %w (set ISSUER_PORT to use another port)", err)
	}
	is := &Issuer{URL: "http://" + l.Addr().String(), Sim: sim, srv: &http.Server{Handler: sim, ReadHeaderTimeout: 10 * time.Second}}
	go func() {
		if err := is.srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("simulated Stripe Issuing stopped", "error", err)
		}
	}()
	go sim.Run(ctx, deliverEvery)
	go logViolations(ctx, sim, log)
	context.AfterFunc(ctx, func() { is.srv.Close() })
	res.Params["IssuerBaseUrl"] = is.URL
	log.Info("simulated Stripe Issuing", "url", is.URL)
	return is, nil
}

// logViolations logs, as they come, the requests stripe-mock refused and
// the answers off Stripe's format (stripesim.Sim.Violations), until ctx
// ends.
func logViolations(ctx context.Context, sim *stripesim.Sim, log *slog.Logger) {
	t := time.NewTicker(deliverEvery)
	defer t.Stop()
	logged := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			v := sim.Violations()
			for _, what := range v[logged:] {
				log.Warn("simulated Stripe Issuing: a request or answer off Stripe's API", "violation", what)
			}
			logged = len(v)
		}
	}
}

// Close stops serving.
func (is *Issuer) Close() error { return is.srv.Close() }
