package pawapay

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"payments/pkg/contention"
	"payments/pkg/providers/operator"
	"payments/pkg/providers/operator/pawapay/pawapaysim"
)

// clock is an advanceable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// received is one callback the test's receiver got.
type received struct {
	method, path string
	header       http.Header
	body         []byte
}

// rig is the adapter wired to simulated pawaPay over HTTP.
type rig struct {
	sim       *pawapaysim.Sim
	client    *Client
	clock     *clock
	callbacks chan received
	slept     []time.Duration
	url       string
}

const token = "test-token"

func newRig(t *testing.T) *rig {
	t.Helper()
	r := &rig{clock: &clock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}, callbacks: make(chan received, 10)}
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := readAll(req)
		h := req.Header.Clone()
		h.Set("Host", req.Host)
		r.callbacks <- received{req.Method, req.URL.Path, h, body}
	}))
	t.Cleanup(recv.Close)
	sim, err := pawapaysim.New(pawapaysim.Config{Token: token, CallbackURL: recv.URL + "/operator/callbacks/pawapay", Now: r.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	r.sim, r.url = sim, srv.URL
	r.client, err = New(Config{BaseURL: srv.URL, Token: token, Retry: contention.Policy{Attempts: 3}, Now: r.clock.Now,
		Sleep: func(_ context.Context, d time.Duration) error { r.slept = append(r.slept, d); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if v := sim.Violations(); len(v) > 0 {
			t.Errorf("simulated pawaPay saw requests off the documented format: %v", v)
		}
	})
	return r
}

func readAll(req *http.Request) ([]byte, error) {
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := req.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return []byte(b.String()), nil
		}
	}
}

func request(kind operator.Kind, id, phone string) operator.Request {
	return operator.Request{Kind: kind, TransactionID: id, CompanyID: "0196a0c1-0000-7000-8000-00000000c001", Operator: "mtn", Country: "CM",
		PhoneNumber: phone, Amount: 5000, Currency: "XAF"}
}

func TestNewNamesWhatIsMissing(t *testing.T) {
	for _, tt := range []struct {
		c    Config
		want string
	}{{Config{Token: "t"}, "BaseURL"}, {Config{BaseURL: "https://api.sandbox.pawapay.io"}, "Token"}, {Config{BaseURL: "::", Token: "t"}, "BaseURL"}} {
		if _, err := New(tt.c); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%+v) = %v, want ErrConfig naming %s", tt.c, err, tt.want)
		}
	}
}

// TestOutcomesAgainstTheFake drives each magic ending through initiation,
// the delay and a status check, for payouts and collections.
func TestOutcomesAgainstTheFake(t *testing.T) {
	tests := []struct {
		name       string
		kind       operator.Kind
		phone      string
		want       operator.State
		wantReason string
		wantErr    error
	}{
		{"payout succeeds", operator.Payout, "237670000001", operator.Succeeded, "", nil},
		{"payout fails", operator.Payout, "237670000000", operator.Failed, "recipient account not found", nil},
		{"payout hangs", operator.Payout, "237670000999", operator.Processing, "", nil},
		{"payout unreachable", operator.Payout, "237670000998", "", "", operator.ErrUnavailable},
		{"collection succeeds", operator.Collection, "237670000001", operator.Succeeded, "", nil},
		{"collection fails", operator.Collection, "237670000000", operator.Failed, "the payer's mobile money account was not found", nil},
		{"collection hangs", operator.Collection, "237670000999", operator.Processing, "", nil},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			id := fmt.Sprintf("6a0e3c52-0000-4000-8000-%012x", i)
			res, err := r.client.Submit(context.Background(), request(tt.kind, id, tt.phone))
			if err != nil || res.State != operator.Processing || res.OrderID != id || len(res.Raw) == 0 {
				t.Fatalf("Submit = %+v, %v; want Processing with order %s", res, err, id)
			}
			r.clock.Advance(pawapaysim.DefaultDelay)
			res, err = r.client.Status(context.Background(), tt.kind, id)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || res.State != "" {
					t.Fatalf("Status = %+v, %v; want %v", res, err, tt.wantErr)
				}
				return
			}
			if err != nil || res.State != tt.want || res.Reason != tt.wantReason {
				t.Fatalf("Status = %+v, %v; want %s %q", res, err, tt.want, tt.wantReason)
			}
			if strings.Contains(string(res.Raw), token) {
				t.Fatal("Raw holds the token")
			}
		})
	}
}

func TestReinitiationIsIdempotent(t *testing.T) {
	r := newRig(t)
	id := "0b8f43c1-5d51-4b1f-9b7e-2d8f0b1c9a10"
	if _, err := r.client.Submit(context.Background(), request(operator.Payout, id, "237670000001")); err != nil {
		t.Fatal(err)
	}
	r.clock.Advance(pawapaysim.DefaultDelay)
	res, err := r.client.Submit(context.Background(), request(operator.Payout, id, "237670000001"))
	if err != nil || res.State != operator.Succeeded || res.OrderID != id {
		t.Fatalf("second Submit = %+v, %v; want the first's state, Succeeded", res, err)
	}
	if n := r.sim.Held("payout"); n != 1 {
		t.Fatalf("simulated pawaPay holds %d payouts, want 1", n)
	}
}

func TestUnservedCombinationFailsWithoutCallingPawaPay(t *testing.T) {
	r := newRig(t)
	req := request(operator.Payout, "9f1c1b7e-8b53-4a5e-a3c1-1f0c2b3d4e5f", "23566000001")
	req.Country, req.Operator = "TD", "airtel"
	res, err := r.client.Submit(context.Background(), req)
	if err != nil || res.State != operator.Failed || res.Reason != "the operator is not available for this country" {
		t.Fatalf("Submit = %+v, %v", res, err)
	}
	if n := r.sim.Held("payout"); n != 0 {
		t.Fatalf("pawaPay was called: %d payouts", n)
	}
}

func TestLookupOfAnUnknownReferenceIsNotFound(t *testing.T) {
	r := newRig(t)
	_, err := r.client.Lookup(context.Background(), operator.Payout, "5d2b8a40-1c1e-4c55-9d7a-3e2f1a0b9c8d")
	if !errors.Is(err, operator.ErrNotFound) {
		t.Fatalf("Lookup = %v, want ErrNotFound", err)
	}
}

func TestServerErrorsLeaveTheResultUnknown(t *testing.T) {
	tests := []struct {
		name     string
		failures int
		want     operator.State
		wantErr  error
	}{
		{"a 503 then an answer: retried", 1, operator.Processing, nil},
		{"503 on every attempt: unknown", 3, "", operator.ErrUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			r.sim.FailNext(http.StatusServiceUnavailable, "", tt.failures)
			res, err := r.client.Submit(context.Background(), request(operator.Payout, "1e6f0c2a-3b4d-4e5f-8a9b-0c1d2e3f4a5b", "237670000001"))
			if !errors.Is(err, tt.wantErr) || res.State != tt.want || (tt.wantErr == nil && err != nil) {
				t.Fatalf("Submit = %+v, %v; want %q, %v", res, err, tt.want, tt.wantErr)
			}
		})
	}
}

// timeoutTransport fails every request as a client time-out does.
type timeoutTransport struct{}

func (timeoutTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, os.ErrDeadlineExceeded
}

func TestTimeoutLeavesTheResultUnknown(t *testing.T) {
	c, err := New(Config{BaseURL: "https://api.sandbox.pawapay.io", Token: token, HTTP: &http.Client{Transport: timeoutTransport{}},
		Retry: contention.Policy{Attempts: 2}})
	if err != nil {
		t.Fatal(err)
	}
	for _, call := range []func() (operator.Result, error){
		func() (operator.Result, error) {
			return c.Submit(context.Background(), request(operator.Payout, "2a3b4c5d-6e7f-4a8b-9c0d-1e2f3a4b5c6d", "237670000001"))
		},
		func() (operator.Result, error) {
			return c.Status(context.Background(), operator.Payout, "2a3b4c5d-6e7f-4a8b-9c0d-1e2f3a4b5c6d")
		},
	} {
		res, err := call()
		if !errors.Is(err, operator.ErrUnavailable) || res.State != "" {
			t.Fatalf("= %+v, %v; want ErrUnavailable and no state", res, err)
		}
		if strings.Contains(err.Error(), token) || strings.Contains(err.Error(), "237670000001") {
			t.Fatalf("the error leaks a secret: %v", err)
		}
	}
}

func TestRateLimitHonoursRetryAfter(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		retryAfter string
		deadline   time.Duration // 0: none
		wantSlept  []time.Duration
		wantErr    error
	}{
		{"seconds", "7", 0, []time.Duration{7 * time.Second}, nil},
		{"HTTP date", at.Add(20 * time.Second).Format(http.TimeFormat), 0, []time.Duration{20 * time.Second}, nil},
		{"beyond the deadline: gives up", "120", time.Minute, nil, operator.ErrUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			r.sim.FailNext(http.StatusTooManyRequests, tt.retryAfter, 1)
			ctx := context.Background()
			if tt.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithDeadline(ctx, r.clock.Now().Add(tt.deadline))
				defer cancel()
			}
			res, err := r.client.Submit(ctx, request(operator.Payout, "3b4c5d6e-7f8a-4b9c-8d1e-2f3a4b5c6d7e", "237670000001"))
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && (err != nil || res.State != operator.Processing)) {
				t.Fatalf("Submit = %+v, %v; want %v", res, err, tt.wantErr)
			}
			if len(r.slept) != len(tt.wantSlept) || (len(tt.wantSlept) > 0 && r.slept[0] != tt.wantSlept[0]) {
				t.Fatalf("slept %v, want %v", r.slept, tt.wantSlept)
			}
		})
	}
}

func TestCallbackFromTheFakeVerifies(t *testing.T) {
	r := newRig(t)
	id := "4c5d6e7f-8a9b-4c0d-9e1f-2a3b4c5d6e7f"
	if _, err := r.client.Submit(context.Background(), request(operator.Payout, id, "237670000000")); err != nil {
		t.Fatal(err)
	}
	r.clock.Advance(pawapaysim.DefaultDelay)
	if err := r.sim.Settle(context.Background()); err != nil {
		t.Fatal(err)
	}
	cbs, err := NewCallbacks(r.sim.PublicKeyPEM(), 5*time.Minute, r.clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	check := func(got received) {
		t.Helper()
		cb, err := cbs.Verify(got.method, got.path, got.header, got.body)
		if err != nil {
			t.Fatalf("Verify: %v", err)
		}
		if cb.Kind != operator.Payout || cb.Reference != id || cb.CompanyID != "0196a0c1-0000-7000-8000-00000000c001" ||
			cb.Result.State != operator.Failed || cb.Result.Reason != "recipient account not found" {
			t.Fatalf("Verify = %+v", cb)
		}
	}
	check(<-r.callbacks)
	// resend-callback sends it again
	req, _ := http.NewRequest(http.MethodPost, r.url+"/v2/payouts/resend-callback/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("resend-callback: %v %v", resp, err)
	}
	resp.Body.Close()
	got := <-r.callbacks
	check(got)
	// the same callback, forged: another body under the same signature
	if _, err := cbs.Verify(got.method, got.path, got.header, []byte(strings.Replace(string(got.body), "FAILED", "COMPLETED", 1))); !errors.Is(err, ErrSignature) {
		t.Fatalf("forged body: %v, want ErrSignature", err)
	}
	// and stale, an hour later
	r.clock.Advance(time.Hour)
	if _, err := cbs.Verify(got.method, got.path, got.header, got.body); !errors.Is(err, ErrStale) {
		t.Fatalf("stale: %v, want ErrStale", err)
	}
}

func TestTheFakeRefusesATokenItDoesNotKnow(t *testing.T) {
	r := newRig(t)
	c, err := New(Config{BaseURL: r.url, Token: "wrong", Retry: contention.Policy{Attempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Submit(context.Background(), request(operator.Payout, "5d6e7f8a-9b0c-4d1e-8f2a-3b4c5d6e7f8a", "237670000001"))
	if !errors.Is(err, operator.ErrUnavailable) || res.State != "" || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("Submit with a bad token = %+v, %v", res, err)
	}
}

// TestDocumentedAnswers drives the adapter with answers the fake does not
// give to a well-formed request, as the failure codes page and the v2
// status pages document them: a rejection at initiation is definitive
// (200 or 400 REJECTED, 403 for an operation not enabled) once pawaPay
// confirms it holds no payment of the id (held, the answer to the status
// check: NOT_FOUND unless set), and what it holds otherwise; a 403 for the
// token or a 500 UNKNOWN_ERROR is not definitive, and a payment in
// reconciliation is still processing.
func TestDocumentedAnswers(t *testing.T) {
	const id = "7e8f9a0b-1c2d-4e3f-8a4b-5c6d7e8f9a0b"
	tests := []struct {
		name       string
		method     string // the call answered: POST (Submit) or GET (Status)
		code       int
		body       string
		want       operator.State
		wantReason string
		wantErr    error
		held       string // Submit's status check after a rejection: "" is NOT_FOUND, "500" fails
	}{
		{"200 REJECTED", "POST", 200, `{"payoutId":"` + id + `","status":"REJECTED","failureReason":{"failureCode":"INVALID_PHONE_NUMBER","failureMessage":"x"}}`,
			operator.Failed, "the phone number is not valid for the operator", nil, ""},
		{"200 REJECTED, provider down", "POST", 200, `{"payoutId":"` + id + `","status":"REJECTED","failureReason":{"failureCode":"PROVIDER_TEMPORARILY_UNAVAILABLE","failureMessage":"x"}}`,
			operator.Failed, "the operator is temporarily unavailable", nil, ""},
		{"400 REJECTED", "POST", 400, `{"status":"REJECTED","failureReason":{"failureCode":"INVALID_PARAMETER","failureMessage":"x"}}`,
			operator.Failed, "the operator refused the request", nil, ""},
		{"403 PAYOUTS_NOT_ALLOWED", "POST", 403, `{"status":"REJECTED","failureReason":{"failureCode":"PAYOUTS_NOT_ALLOWED","failureMessage":"x"}}`,
			operator.Failed, "payouts are not enabled with the operator", nil, ""},
		{"403 AUTHENTICATION_ERROR", "POST", 403, `{"status":"REJECTED","failureReason":{"failureCode":"AUTHENTICATION_ERROR","failureMessage":"x"}}`,
			"", "", operator.ErrUnavailable, ""},
		{"403 HTTP_SIGNATURE_ERROR", "POST", 403, `{"failureReason":{"failureCode":"HTTP_SIGNATURE_ERROR","failureMessage":"x"}}`,
			"", "", operator.ErrUnavailable, ""},
		{"500 UNKNOWN_ERROR: not a failure", "POST", 500, `{"status":"REJECTED","failureReason":{"failureCode":"UNKNOWN_ERROR","failureMessage":"x"}}`,
			"", "", operator.ErrUnavailable, ""},
		{"v1 ENQUEUED at initiation: not a v2 answer", "POST", 200, `{"payoutId":"` + id + `","status":"ENQUEUED"}`,
			"", "", operator.ErrUnavailable, ""},
		{"IN_RECONCILIATION", "GET", 200, `{"status":"FOUND","data":{"payoutId":"` + id + `","status":"IN_RECONCILIATION","metadata":{"companyId":"0196a0c1-0000-7000-8000-00000000c001"}}}`,
			operator.Processing, "", nil, ""},
		{"ENQUEUED", "GET", 200, `{"status":"FOUND","data":{"payoutId":"` + id + `","status":"ENQUEUED"}}`,
			operator.Processing, "", nil, ""},
		{"FAILED, out of funds", "GET", 200, `{"status":"FOUND","data":{"payoutId":"` + id + `","status":"FAILED","failureReason":{"failureCode":"PAWAPAY_WALLET_OUT_OF_FUNDS","failureMessage":"x"}}}`,
			operator.Failed, "the payout could not be funded at the operator", nil, ""},
		{"NOT_FOUND", "GET", 200, `{"status":"NOT_FOUND"}`, "", "", operator.ErrNotFound, ""},
		{"REJECTED, but an earlier copy was accepted", "POST", 200, `{"payoutId":"` + id + `","status":"REJECTED","failureReason":{"failureCode":"PROVIDER_TEMPORARILY_UNAVAILABLE","failureMessage":"x"}}`,
			operator.Processing, "", nil, `{"status":"FOUND","data":{"payoutId":"` + id + `","status":"ACCEPTED"}}`},
		{"REJECTED, and the status check fails", "POST", 200, `{"payoutId":"` + id + `","status":"REJECTED","failureReason":{"failureCode":"INVALID_PHONE_NUMBER","failureMessage":"x"}}`,
			"", "", operator.ErrUnavailable, "500"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				switch {
				case r.Method == tt.method:
					w.WriteHeader(tt.code)
					_, _ = w.Write([]byte(tt.body))
				case r.Method == "GET" && tt.held == "500":
					w.WriteHeader(http.StatusInternalServerError)
				case r.Method == "GET" && tt.held != "":
					_, _ = w.Write([]byte(tt.held))
				case r.Method == "GET":
					_, _ = w.Write([]byte(`{"status":"NOT_FOUND"}`))
				default:
					t.Errorf("unexpected %s %s", r.Method, r.URL.Path)
				}
			}))
			defer srv.Close()
			c, err := New(Config{BaseURL: srv.URL, Token: token, Retry: contention.Policy{Attempts: 1}})
			if err != nil {
				t.Fatal(err)
			}
			var res operator.Result
			if tt.method == "POST" {
				res, err = c.Submit(context.Background(), request(operator.Payout, id, "237670000001"))
			} else {
				res, err = c.Status(context.Background(), operator.Payout, id)
			}
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || res.State != "" {
					t.Fatalf("= %+v, %v; want %v and no state", res, err, tt.wantErr)
				}
				return
			}
			if err != nil || res.State != tt.want || res.Reason != tt.wantReason || res.OrderID != id {
				t.Fatalf("= %+v, %v; want %s %q", res, err, tt.want, tt.wantReason)
			}
		})
	}
}
