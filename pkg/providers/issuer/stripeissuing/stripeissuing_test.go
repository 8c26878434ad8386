package stripeissuing_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"payments/pkg/providers/issuer"
	"payments/pkg/providers/issuer/stripeissuing"
)

// stripeMock returns the URL of stripe-mock, which validates every request
// against Stripe's OpenAPI description: the local stack starts it
// (STRIPE_MOCK_URL).
func stripeMock(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs stripe-mock: make test")
	}
	u := os.Getenv("STRIPE_MOCK_URL")
	if u == "" {
		t.Fatal("STRIPE_MOCK_URL is not set: run the tests through `make test` or `.cache/bin/devstack exec -- go test …`, which start stripe-mock")
	}
	return u
}

// exchange is one request the adapter sent and stripe-mock's answer.
type exchange struct {
	method, path string
	query        string
	version      string // the request's Stripe-Version
	status       int
	body         string
}

// recorder is an http.RoundTripper that keeps every exchange.
type recorder struct {
	mu  sync.Mutex
	got []exchange
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	res.Body = io.NopCloser(strings.NewReader(string(b)))
	r.mu.Lock()
	r.got = append(r.got, exchange{req.Method, req.URL.Path, req.URL.RawQuery, req.Header.Get("Stripe-Version"), res.StatusCode, string(b)})
	r.mu.Unlock()
	return res, nil
}

// take returns the exchanges since the last call.
func (r *recorder) take() []exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	got := r.got
	r.got = nil
	return got
}

// TestCallsAgainstStripeMock makes every call of the adapter against
// stripe-mock: each request it sends must be one Stripe's description
// accepts (a 2xx), on the endpoint it is documented to use.
func TestCallsAgainstStripeMock(t *testing.T) {
	rec := &recorder{}
	c, err := stripeissuing.New(stripeissuing.Config{
		APIKey: "sk_test_123", BaseURL: stripeMock(t), HTTP: &http.Client{Transport: rec, Timeout: 10 * time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	holder := issuer.CardholderRequest{
		Reference: "0b9c5a52-8f0e-4a0b-9d51-3f1f5d1b2c01", FirstName: "Awa", LastName: "Diallo", Email: "awa@example.com",
		PhoneCountryCode: "221", PhoneNumber: "771234567", DateOfBirth: time.Date(1990, 4, 12, 0, 0, 0, 0, time.UTC),
		Address: issuer.Address{Street: "12 Avenue Bourguiba", City: "Dakar", State: "DK", PostalCode: "10200", CountryISOCode: "SN"},
	}
	tests := []struct {
		name  string
		call  func() error
		paths []string // method and path (or its start) of each request, in order
	}{
		{"enroll a cardholder", func() error { _, err := c.EnrollCardholder(ctx, holder); return err },
			[]string{"POST /v1/issuing/cardholders"}},
		{"read a cardholder", func() error { _, err := c.Cardholder(ctx, "ich_123"); return err },
			[]string{"GET /v1/issuing/cardholders/ich_123"}},
		{"issue a card, never asking its number or CVC", func() error {
			card, secrets, err := c.IssueCard(ctx, issuer.CardRequest{Reference: "c1", CardholderID: "ich_123", Brand: issuer.Visa, Amount: 500})
			if err != nil {
				return err
			}
			if secrets != (issuer.Secrets{}) || card.ID == "" {
				return fmt.Errorf("card %+v with secrets, want none", card)
			}
			return nil
		}, []string{"POST /v1/issuing/cards"}},
		{"create a reveal session", func() error {
			// stripe-mock answers a fixture without the key's secret,
			// which the adapter refuses to pass on; the request was taken.
			// stripesim's test reads a whole session.
			_, err := c.RevealSession(ctx, "ic_123", "ephkn_pub_123")
			if !errors.Is(err, issuer.ErrUnavailable) || !strings.Contains(err.Error(), "without its secret") {
				return fmt.Errorf("err = %v, want the fixture's missing secret", err)
			}
			return nil
		}, []string{"POST /v1/ephemeral_keys"}},
		{"read a card", func() error { _, err := c.Card(ctx, "ic_123"); return err },
			[]string{"GET /v1/issuing/cards/ic_123"}},
		{"freeze", func() error { _, err := c.FreezeCard(ctx, "ic_123"); return err },
			[]string{"POST /v1/issuing/cards/ic_123"}},
		{"unfreeze", func() error { _, err := c.UnfreezeCard(ctx, "ic_123"); return err },
			[]string{"POST /v1/issuing/cards/ic_123"}},
		{"terminate", func() error { _, _, err := c.TerminateCard(ctx, "ic_123"); return err },
			[]string{"POST /v1/issuing/cards/ic_123"}},
		{"find our card of a Stripe card", func() error { _, err := c.CardReference(ctx, "ic_456"); return err },
			[]string{"GET /v1/issuing/cards/ic_456"}},
		{"find our card of a Stripe card again", func() error { _, err := c.CardReference(ctx, "ic_456"); return err },
			nil}, // remembered
		{"open a dispute", func() error {
			_, err := c.OpenDispute(ctx, issuer.DisputeRequest{Reference: "d1", CardID: "ic_123", TransactionID: "ipi_123",
				Reason: issuer.DisputeNotReceived, Explanation: "Never delivered.", Amount: 500})
			return err
		}, []string{"POST /v1/issuing/disputes", "POST /v1/issuing/disputes/idp_"}},
		{"read a dispute as it is now", func() error {
			n := issuer.Notification{ID: "evt_1", Type: issuer.NotifyDispute, Dispute: &issuer.Dispute{ID: "idp_123"}}
			if err := c.CompleteDispute(ctx, &n); !errors.Is(err, issuer.ErrNotFound) {
				// stripe-mock's card has no metadata: not one of ours.
				return fmt.Errorf("err = %v, want ErrNotFound", err)
			}
			return nil
		}, []string{"GET /v1/issuing/disputes/idp_123"}},
		{"list transactions", func() error { _, _, err := c.Transactions(ctx, time.Now().Add(-time.Hour), "", 50); return err },
			[]string{"GET /v1/issuing/transactions"}},
		{"list transactions after one", func() error { _, _, err := c.Transactions(ctx, time.Now().Add(-time.Hour), "ipi_1", 50); return err },
			[]string{"GET /v1/issuing/transactions"}},
		{"list authorizations", func() error { _, _, err := c.Authorizations(ctx, time.Now().Add(-time.Hour), "", 50); return err },
			[]string{"GET /v1/issuing/authorizations"}},
		{"list authorizations after one", func() error {
			_, _, err := c.Authorizations(ctx, time.Now().Add(-time.Hour), "iauth_1", 50)
			return err
		},
			[]string{"GET /v1/issuing/authorizations"}},
		{"read the Issuing balance", func() error { _, err := c.Balance(ctx); return err },
			[]string{"GET /v1/balance"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			got := rec.take()
			if strings.HasPrefix(tt.name, "find our card") {
				// stripe-mock's card has no metadata: not one of ours.
				if !errors.Is(err, issuer.ErrNotFound) {
					t.Errorf("err = %v, want ErrNotFound", err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.paths) {
				t.Fatalf("%d requests %v, want %v", len(got), got, tt.paths)
			}
			for i, x := range got {
				path := x.method + " " + x.path
				if !strings.HasPrefix(path, tt.paths[i]) {
					t.Errorf("request %d: %s, want %s", i, path, tt.paths[i])
				}
				if x.status/100 != 2 {
					t.Errorf("%s: stripe-mock answered %d: %s", path, x.status, x.body)
				}
				if q, _ := url.ParseQuery(x.query); slices.ContainsFunc(expanded(q), func(e string) bool {
					return e == "number" || e == "cvc" || strings.HasSuffix(e, ".number") || strings.HasSuffix(e, ".cvc")
				}) {
					t.Errorf("%s?%s: no call asks for a card's number or CVC", path, x.query)
				}
				if want := stripeissuing.EphemeralKeyVersion; x.path == "/v1/ephemeral_keys" && x.version != want {
					t.Errorf("%s: Stripe-Version %q, want %q (Stripe requires it for ephemeral keys)", path, x.version, want)
				}
			}
		})
	}
}

// expanded returns the fields a request's query expands.
func expanded(q url.Values) []string {
	var out []string
	for k, v := range q {
		if k == "expand" || strings.HasPrefix(k, "expand[") {
			out = append(out, v...)
		}
	}
	return out
}

// TestStripeRefusals: what Stripe refuses is the issuer's error of the
// call, from Stripe's error answer: a create's 400 or 402 is a definitive
// refusal, a 404 a card it does not know, anything else (401, 429, 5xx, no
// answer) unavailable, which says nothing of the outcome; a brand the
// account does not issue is refused unasked.
func TestStripeRefusals(t *testing.T) {
	tests := []struct {
		name   string
		status int
		errTyp string
		call   string
		want   error
	}{
		{"create refused", 400, "invalid_request_error", "enroll", issuer.ErrDeclined},
		{"card declined", 402, "card_error", "issue", issuer.ErrDeclined},
		{"unknown card", 404, "invalid_request_error", "read", issuer.ErrNotFound},
		{"a read's 400", 400, "invalid_request_error", "read", issuer.ErrUnavailable},
		{"bad key", 401, "invalid_request_error", "enroll", issuer.ErrUnavailable},
		{"rate limited", 429, "invalid_request_error", "issue", issuer.ErrUnavailable},
		{"Stripe down", 500, "api_error", "enroll", issuer.ErrUnavailable},
		{"no answer", 0, "", "read", issuer.ErrUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.status == 0 {
					panic(http.ErrAbortHandler)
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tt.status)
				fmt.Fprintf(w, `{"error":{"type":%q,"message":"refused by the test"}}`, tt.errTyp)
			}))
			defer srv.Close()
			c, err := stripeissuing.New(stripeissuing.Config{APIKey: "sk_test_123", BaseURL: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			switch tt.call {
			case "enroll":
				_, err = c.EnrollCardholder(ctx, issuer.CardholderRequest{Reference: "r", FirstName: "A", LastName: "B"})
			case "issue":
				_, _, err = c.IssueCard(ctx, issuer.CardRequest{Reference: "c", CardholderID: "ich_1"})
			case "read":
				_, err = c.Card(ctx, "ic_1")
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
		})
	}
	t.Run("a brand the program does not issue", func(t *testing.T) {
		rec := &recorder{}
		c, err := stripeissuing.New(stripeissuing.Config{APIKey: "sk_test_123", BaseURL: "http://127.0.0.1:9", HTTP: &http.Client{Transport: rec}})
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = c.IssueCard(context.Background(), issuer.CardRequest{Reference: "c2", CardholderID: "ich_1", Brand: issuer.Mastercard})
		if !errors.Is(err, issuer.ErrDeclined) {
			t.Errorf("a Mastercard of a Visa program: %v, want ErrDeclined", err)
		}
		if got := rec.take(); len(got) != 0 {
			t.Errorf("sent %v", got)
		}
	})
}

// TestNew refuses a configuration it cannot work with.
func TestNew(t *testing.T) {
	tests := []struct {
		name string
		cfg  stripeissuing.Config
		ok   bool
	}{
		{"defaults", stripeissuing.Config{APIKey: "sk_test_1"}, true},
		{"no key", stripeissuing.Config{}, false},
		{"not a URL", stripeissuing.Config{APIKey: "k", BaseURL: "api.stripe.com"}, false},
		{"unknown brand", stripeissuing.Config{APIKey: "k", Brand: "AMEX"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := stripeissuing.New(tt.cfg)
			if (err == nil) != tt.ok || (err != nil && !errors.Is(err, stripeissuing.ErrConfig)) {
				t.Errorf("err = %v, want ok %v", err, tt.ok)
			}
		})
	}
}

// TestMovementsStayInOurLedger: funding, withdrawing and postings ask
// nothing of Stripe, which keeps no balance per card.
func TestMovementsStayInOurLedger(t *testing.T) {
	rec := &recorder{}
	c, err := stripeissuing.New(stripeissuing.Config{APIKey: "sk_test_123", BaseURL: "http://127.0.0.1:9", HTTP: &http.Client{Transport: rec}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, call := range []func() (issuer.Card, error){
		func() (issuer.Card, error) {
			return c.FundCard(ctx, issuer.Movement{Reference: "t", CardID: "ic_1", Amount: 5})
		},
		func() (issuer.Card, error) {
			return c.WithdrawCard(ctx, issuer.Movement{Reference: "t", CardID: "ic_1", Amount: 5})
		},
		func() (issuer.Card, error) {
			return c.PostCard(ctx, issuer.Posting{Reference: "e", CardID: "ic_1", BalanceDelta: -5})
		},
	} {
		card, err := call()
		if err != nil || card.ID != "ic_1" || !card.BalanceUnknown {
			t.Errorf("card %+v, %v", card, err)
		}
	}
	if err := c.Acknowledge(ctx, "evt_1"); err != nil {
		t.Error(err)
	}
	if got := rec.take(); len(got) != 0 {
		t.Errorf("asked Stripe %v", got)
	}
}
