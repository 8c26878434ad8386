package devserver

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"time"

	"payments/pkg/function"
	"payments/pkg/providers/issuer/issuersandbox"
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

// StateFile is the file, in make run's data folder, where simulated Stripe
// Issuing keeps its records across restarts (stripesim.Config.StateFile).
const StateFile = "stripe-sim.json"

// IssuingFloat is the Issuing balance, USD cents, simulated Stripe Issuing
// starts with: an account's balance topped up before its cards spend, the
// sandbox issuer's float (issuersandbox.Float), so that the
// reconciliation's balance check holds as it does on a funded account.
const IssuingFloat = issuersandbox.Float

// deliverEvery is how often the simulated Stripe Issuing sends the events
// not yet delivered.
const deliverEvery = time.Second

// StartIssuer serves simulated Stripe Issuing on port (0: any free one)
// when res's mode is production and no real issuer is configured
// (IssuerBaseUrl): it accepts the local issuer key (ISSUER_API_KEY), has
// stripe-mock at stripeMockURL check every request, sends its events,
// signed with ISSUER_WEBHOOK_SECRET, to api's Stripe webhooks route, starts
// its Issuing balance at IssuingFloat, and
// sets res's IssuerBaseUrl, which must be a set map, to its URL; it logs
// every violation (stripesim.Sim.Violations) as a warning. Its stand-in
// and the event types it drops are read from the environment
// (SIM_STRIPE_STAND_IN, SIM_STRIPE_DROP_EVENTS: stripesim.Config.FromEnv).
// With stateFile (make run's StateFile) its records outlive a restart, as
// Stripe's do; without, they live in memory. It returns nil in sandbox
// mode, or when a real issuer is configured. It stops serving when ctx
// ends, or at Close.
func StartIssuer(ctx context.Context, res Resources, api, stripeMockURL string, port int, stateFile string, log *slog.Logger) (*Issuer, error) {
	if res.Params["Mode"] != function.ModeProduction || res.Params["IssuerBaseUrl"] != "" {
		return nil, nil
	}
	if log == nil {
		log = slog.Default()
	}
	cfg := stripesim.Config{
		APIKey:        res.Secrets["ISSUER_API_KEY"],
		WebhookSecret: res.Secrets["ISSUER_WEBHOOK_SECRET"],
		WebhookURL:    api + "/issuer/stripe/webhooks",
		StripeMockURL: stripeMockURL,
		Balance:       IssuingFloat,
		StateFile:     stateFile,
	}
	if err := cfg.FromEnv(os.Getenv); err != nil {
		return nil, err
	}
	sim, err := stripesim.New(cfg)
	if err != nil {
		return nil, err
	}
	url, srv, err := serveSimulation(ctx, "simulated Stripe Issuing", "ISSUER_PORT", port, sim, log)
	if err != nil {
		return nil, err
	}
	is := &Issuer{URL: url, Sim: sim, srv: srv}
	go sim.Run(ctx, deliverEvery)
	go logViolations(ctx, sim, log)
	res.Params["IssuerBaseUrl"] = is.URL
	log.Info("simulated Stripe Issuing", "url", is.URL, "stand_in", cfg.StandIn, "dropped_events", cfg.DropEvents)
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
