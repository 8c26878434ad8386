// Package stripesim is simulated Stripe Issuing: a stateful fake of the
// Stripe Issuing endpoints the Stripe Issuing adapter uses, written from
// Stripe's API reference, that the adapter is tested against and that local
// runs may stand in for Stripe with. It is an http.Handler keeping its own
// cardholders, cards, authorizations and transactions in memory, apart from
// our records, as Stripe would.
//
// Every request is first checked by stripe-mock (Config.StripeMockURL),
// which knows Stripe's OpenAPI specification: a request it refuses is
// answered with its refusal and recorded (Violations), so a request off
// Stripe's API fails here as it would at Stripe. Requests arrive
// form-encoded as stripe-go sends them; answers and events are stripe-go's
// own types marshalled with encoding/json.
//
// The test helper POST /v1/test_helpers/issuing/authorizations drives a
// purchase: unless the card is inactive, the simulation sends the event
// issuing_authorization.request to Config.WebhookURL and waits up to
// Config.DecisionTimeout for the answer in the response body, as Stripe's
// real-time authorizations do (an increment asks again); when the answer is
// late or fails, it declines, or approves with Config.StandIn. The other
// test helpers capture (in part, or more than held), reverse (in part),
// expire, finalize, refund, force a capture and refund with no
// authorization; disputes are created, submitted and decided as Stripe's
// test mode decides them (SettleDispute, CreditDispute). Every other event
// is kept and sent in order by Deliver (Run calls it on a ticker), signed
// with Config.WebhookSecret as Stripe signs events; a delivery not answered
// 2xx is sent again, and one dropped on purpose (Config.DropEvents, Drop,
// DropNext) never is.
//
// It keeps the Issuing balance as Stripe does (GET /v1/balance): what was
// put in (Config.Balance, TopUp), less what the authorizations hold and
// the captures took, plus the refunds and what the disputes credited.
package stripesim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/stripe/stripe-go/v85"
)

// DefaultDecisionTimeout is how long Stripe waits for the answer to an
// issuing_authorization.request event, used when Config.DecisionTimeout is
// zero.
const DefaultDecisionTimeout = 2 * time.Second

// MockKey is the secret key the simulation sends to stripe-mock.
const MockKey = "sk_test_stripesim"

// Config configures the simulation.
type Config struct {
	// APIKey is the secret key it accepts as "Authorization: Bearer <key>",
	// or as the user of basic authentication.
	// Required.
	APIKey string
	// WebhookSecret signs every event it sends (Stripe-Signature).
	WebhookSecret string
	// WebhookURL receives every event; "" sends none.
	WebhookURL string
	// StripeMockURL is stripe-mock's base URL, e.g. http://127.0.0.1:12111:
	// every request is first checked there. "" checks nothing.
	StripeMockURL string
	// DecisionTimeout is how long it waits for the answer to an
	// issuing_authorization.request event; zero: DefaultDecisionTimeout.
	DecisionTimeout time.Duration
	// Now returns the current time; nil: time.Now. Events are signed with
	// it too.
	Now func() time.Time
	// Client sends events and asks stripe-mock; nil: a client with a 10 s
	// time-out.
	Client *http.Client
	// StandIn is what it decides when the answer to an
	// issuing_authorization.request is late or fails: StandInDecline
	// ("", Stripe's default timeout setting) or StandInApprove (the
	// setting at "approve", or the card network's stand-in), with the
	// request_history reason webhook_timeout or webhook_error either way.
	StandIn string
	// DropEvents are event types whose deliveries are dropped: never sent,
	// never retried, as a webhook Stripe gave up on (Dropped lists them).
	DropEvents []string
	// Balance is the Issuing balance at the start, USD cents.
	Balance int64
	// StateFile, when set, keeps its records (cardholders, cards,
	// authorizations, transactions, disputes, its Issuing balance, the
	// answers to Idempotency-Keys and the events not delivered yet) across
	// restarts, as Stripe does: New reads it when it exists (Balance is then
	// the one saved), and every POST and delivery writes it again.
	StateFile string
}

// Stand-in decisions of Config.StandIn.
const (
	StandInDecline = "decline"
	StandInApprove = "approve"
)

// Sim is simulated Stripe Issuing.
type Sim struct {
	cfg Config
	mux *http.ServeMux

	mu          sync.Mutex
	cardholders map[string]*stripe.IssuingCardholder
	cards       map[string]*stripe.IssuingCard
	auths       map[string]*stripe.IssuingAuthorization
	txns        map[string]*stripe.IssuingTransaction
	disputes    map[string]*dispute
	authList    []*stripe.IssuingAuthorization // oldest first
	txnList     []*stripe.IssuingTransaction   // oldest first
	disputeList []*dispute                     // oldest first
	refundOf    map[string]string              // a refund's capture, by the refund's id
	cardCount   int64
	balance     int64              // the Issuing balance available, USD cents
	seen        map[string]*answer // POST answers by Idempotency-Key
	events      []*event           // every event but the synchronous requests, oldest first
	dropTypes   map[string]bool    // event types dropped
	dropNext    int                // events to drop, whatever their type
	dropped     []string           // what Dropped returns
	broken      []string           // what Violations returns

	delivering sync.Mutex // one Deliver at a time
}

// New returns simulated Stripe Issuing for c.
func New(c Config) (*Sim, error) {
	if c.APIKey == "" {
		return nil, errors.New("stripesim: APIKey is required")
	}
	switch c.StandIn {
	case "", StandInDecline, StandInApprove:
	default:
		return nil, fmt.Errorf("stripesim: StandIn %q is neither %s nor %s", c.StandIn, StandInDecline, StandInApprove)
	}
	if c.DecisionTimeout == 0 {
		c.DecisionTimeout = DefaultDecisionTimeout
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Client == nil {
		c.Client = &http.Client{Timeout: 10 * time.Second}
	}
	c.StripeMockURL = strings.TrimSuffix(c.StripeMockURL, "/")
	s := &Sim{
		cfg: c, mux: http.NewServeMux(),
		cardholders: map[string]*stripe.IssuingCardholder{},
		cards:       map[string]*stripe.IssuingCard{},
		auths:       map[string]*stripe.IssuingAuthorization{},
		txns:        map[string]*stripe.IssuingTransaction{},
		disputes:    map[string]*dispute{},
		refundOf:    map[string]string{},
		seen:        map[string]*answer{},
		balance:     c.Balance,
		dropTypes:   map[string]bool{},
	}
	for _, typ := range c.DropEvents {
		s.dropTypes[typ] = true
	}
	if err := s.load(); err != nil {
		return nil, err
	}
	for pattern, h := range map[string]handler{
		"POST /v1/issuing/cardholders":                                      s.createCardholder,
		"GET /v1/issuing/cardholders/{id}":                                  s.getCardholder,
		"POST /v1/issuing/cards":                                            s.createCard,
		"GET /v1/issuing/cards/{id}":                                        s.getCard,
		"POST /v1/issuing/cards/{id}":                                       s.updateCard,
		"GET /v1/issuing/authorizations":                                    s.listAuthorizations,
		"GET /v1/issuing/authorizations/{id}":                               s.getAuthorization,
		"GET /v1/issuing/transactions":                                      s.listTransactions,
		"GET /v1/issuing/transactions/{id}":                                 s.getTransaction,
		"POST /v1/issuing/disputes":                                         s.createDispute,
		"GET /v1/issuing/disputes":                                          s.listDisputes,
		"GET /v1/issuing/disputes/{id}":                                     s.getDispute,
		"POST /v1/issuing/disputes/{id}/submit":                             s.submitDispute,
		"GET /v1/balance":                                                   s.getBalance,
		"POST /v1/ephemeral_keys":                                           s.createEphemeralKey,
		"POST /v1/test_helpers/issuing/authorizations":                      s.createAuthorization,
		"POST /v1/test_helpers/issuing/authorizations/{id}/capture":         s.capture,
		"POST /v1/test_helpers/issuing/authorizations/{id}/reverse":         s.reverse,
		"POST /v1/test_helpers/issuing/authorizations/{id}/expire":          s.expire,
		"POST /v1/test_helpers/issuing/authorizations/{id}/increment":       s.increment,
		"POST /v1/test_helpers/issuing/authorizations/{id}/finalize_amount": s.finalizeAmount,
		"POST /v1/test_helpers/issuing/transactions/{id}/refund":            s.refund,
		"POST /v1/test_helpers/issuing/transactions/create_force_capture":   s.forceCapture,
		"POST /v1/test_helpers/issuing/transactions/create_unlinked_refund": s.unlinkedRefund,
	} {
		s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			x := w.(*exchange)
			x.req.Request = r
			x.res = h(x.req)
		})
	}
	return s, nil
}

// Violations returns, oldest first, every request stripe-mock refused and
// every answer to an issuing_authorization.request event off Stripe's
// documented format: a test asserts there are none.
func (s *Sim) Violations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.broken)
}

func (s *Sim) violation(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.broken = append(s.broken, fmt.Sprintf(format, args...))
}

// request is a request as the handlers see it: its form (the query of a
// GET, the body of a POST) and its path's id.
type request struct {
	*http.Request
	form url.Values
	key  string // Idempotency-Key
}

// result is a handler's answer: a status and the JSON body.
type result struct {
	status int
	body   []byte
}

// handler serves one endpoint.
type handler func(r *request) result

// exchange is the ResponseWriter the mux is given: it carries the parsed
// request to the handler and its result back.
type exchange struct {
	req *request
	res result
}

func (*exchange) Header() http.Header         { return http.Header{} }
func (*exchange) Write(b []byte) (int, error) { return len(b), nil }
func (*exchange) WriteHeader(int)             {}

// ServeHTTP checks the key, has stripe-mock check the request, replays
// the answer to an Idempotency-Key already seen, then answers r.
func (s *Sim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Stripe takes its key as a bearer token or, as its curl examples
	// send it (-u key:), as the user of basic authentication.
	key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if user, _, basic := r.BasicAuth(); basic {
		key, ok = user, true
	}
	switch {
	case !ok || key == "":
		write(w, stripeError(http.StatusUnauthorized, "", "", "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY')."))
		return
	case key != s.cfg.APIKey:
		write(w, stripeError(http.StatusUnauthorized, "", "", "Invalid API Key provided: "+redact(key)))
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		write(w, stripeError(http.StatusBadRequest, "", "", "the body could not be read"))
		return
	}
	if s.cfg.StripeMockURL != "" {
		if res, refused := s.check(r, body); refused {
			write(w, res)
			return
		}
	}
	req := &request{key: strings.TrimSpace(r.Header.Get("Idempotency-Key"))}
	if r.Method == http.MethodPost {
		if r.Header.Get("Content-Type") != "" && !strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
			write(w, stripeError(http.StatusBadRequest, "", "", "Invalid request: the body must be application/x-www-form-urlencoded"))
			return
		}
		req.form, err = url.ParseQuery(string(body))
	} else {
		req.form, err = url.ParseQuery(r.URL.RawQuery)
	}
	if err != nil {
		write(w, stripeError(http.StatusBadRequest, "", "", "Invalid request: "+err.Error()))
		return
	}
	fingerprint := r.Method + " " + r.URL.Path + "?" + string(body)
	if r.Method == http.MethodPost && req.key != "" {
		if res, replay := s.remember(req.key, fingerprint); replay {
			w.Header().Set("Idempotent-Replayed", "true")
			write(w, res)
			return
		}
	}
	res := s.route(req, r)
	if r.Method == http.MethodPost && req.key != "" {
		s.mu.Lock()
		if res.status >= 500 {
			delete(s.seen, req.key) // Stripe does not keep server errors
		} else {
			a := s.seen[req.key]
			a.done, a.status, a.body = true, res.status, res.body
		}
		s.mu.Unlock()
	}
	if r.Method == http.MethodPost {
		s.saveOrLog()
	}
	write(w, res)
}

// route serves req with the endpoint its method and path name.
func (s *Sim) route(req *request, r *http.Request) result {
	if _, pattern := s.mux.Handler(r); pattern == "" {
		return stripeError(http.StatusNotFound, "", "", fmt.Sprintf("Unrecognized request URL (%s: %s): stripesim does not simulate it.", r.Method, r.URL.Path))
	}
	x := &exchange{req: req}
	s.mux.ServeHTTP(x, r)
	return x.res
}

// check sends r to stripe-mock; refused reports it answered non-2xx, and
// res is then its answer, recorded as a violation.
func (s *Sim) check(r *http.Request, body []byte) (res result, refused bool) {
	req, err := http.NewRequestWithContext(r.Context(), r.Method, s.cfg.StripeMockURL+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return stripeError(http.StatusInternalServerError, "", "", err.Error()), true
	}
	req.Header.Set("Authorization", "Bearer "+MockKey)
	ct := r.Header.Get("Content-Type")
	if ct == "" && r.Method == http.MethodPost && len(body) == 0 {
		// Stripe takes a POST without parameters with no Content-Type
		// (its API reference's `curl -X POST …/expire`); stripe-mock
		// would refuse it.
		ct = "application/x-www-form-urlencoded"
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	resp, err := s.cfg.Client.Do(req)
	if err != nil {
		s.violation("%s %s: stripe-mock could not be asked: %v", r.Method, r.URL.Path, err)
		return stripeError(http.StatusServiceUnavailable, "api_error", "", "stripesim: stripe-mock could not be asked"), true
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		s.violation("%s %s: stripe-mock's answer could not be read: %v", r.Method, r.URL.Path, err)
		return stripeError(http.StatusServiceUnavailable, "api_error", "", "stripesim: stripe-mock's answer could not be read"), true
	}
	if resp.StatusCode/100 == 2 {
		return result{}, false
	}
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.Unmarshal(b, &e)
	s.violation("%s %s: stripe-mock answered %d: %s", r.Method, r.URL.Path, resp.StatusCode, e.Error.Message)
	return result{resp.StatusCode, b}, true
}

// stripeError is Stripe's error answer; typ "" is invalid_request_error.
func stripeError(status int, typ, code, message string) result {
	if typ == "" {
		typ = "invalid_request_error"
	}
	e := map[string]string{"type": typ, "message": message}
	if code != "" {
		e["code"] = code
	}
	b, _ := json.Marshal(map[string]any{"error": e})
	return result{status, b}
}

// missing is Stripe's 404 for an unknown id in the path.
func missing(kind, id string) result {
	return stripeError(http.StatusNotFound, "", "resource_missing", fmt.Sprintf("No such %s: '%s'", kind, id))
}

// invalid is Stripe's 400 for a request it cannot serve.
func invalid(code, message string) result {
	return stripeError(http.StatusBadRequest, "", code, message)
}

func ok(body []byte) result { return result{http.StatusOK, body} }

func write(w http.ResponseWriter, res result) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Stripe-Version", stripe.APIVersion)
	w.WriteHeader(res.status)
	_, _ = w.Write(res.body)
}

// redact shows a key as Stripe's error messages do: its last four.
func redact(key string) string {
	if len(key) <= 4 {
		return "****"
	}
	return "****" + key[len(key)-4:]
}
