// Package pawapay is the operator gateway of production mode: an adapter of
// pawaPay's Merchant API v2, the mobile-money aggregator. It speaks the
// documented wire format (docs/providers.md cites every page): payouts
// through POST /v2/payouts, collections through POST /v2/deposits, both
// keyed by our transaction id so that initiation is idempotent, status
// checks through GET /v2/payouts/{id} and GET /v2/deposits/{id}, and, for
// the reconciliation (operator.Records), the same checks' amounts and the
// wallets' balances through GET /v2/wallet-balances.
//
// Callbacks verifies the signed callbacks pawaPay posts when a payment
// reaches its final status (RFC 9421). Package pawapaysim is the simulated
// pawaPay the adapter is tested against.
package pawapay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"payments/pkg/contention"
	"payments/pkg/guideline"
	"payments/pkg/money"
	"payments/pkg/providers/operator"
)

// ErrConfig reports a Config that misses a required setting.
var ErrConfig = errors.New("pawapay: incomplete configuration")

// DefaultRetry is the retry policy of a Config whose Retry is zero: three
// attempts with the store's jittered back-off.
var DefaultRetry = contention.Policy{Attempts: 3, Base: 200 * time.Millisecond, Max: 2 * time.Second}

// Time-outs of the default HTTP client.
const (
	connectTimeout = 3 * time.Second
	requestTimeout = 10 * time.Second
	// maxRetryAfter bounds a 429's Retry-After when the context has no
	// deadline: a longer wait gives up (ErrUnavailable).
	maxRetryAfter = time.Minute
	// maxBody bounds what is read of an answer.
	maxBody = 1 << 20
)

// Config configures a Client.
type Config struct {
	// BaseURL is pawaPay's API root: https://api.sandbox.pawapay.io or
	// https://api.pawapay.io. Required.
	BaseURL string
	// Token is the API token, sent as a bearer token. Required.
	Token string
	// HTTP sends the requests; nil: a client with a 3 s connect time-out
	// and a 10 s whole-request time-out.
	HTTP *http.Client
	// Retry is the policy of retried calls; zero: DefaultRetry.
	Retry contention.Policy
	// Now returns the current time (for Retry-After dates); nil: time.Now.
	Now func() time.Time
	// Sleep waits d unless ctx ends first (a 429's Retry-After); nil: a
	// timer. Tests inject one to assert the wait without waiting.
	Sleep func(ctx context.Context, d time.Duration) error
	// Guideline holds the pawaPay provider codes; nil: guideline.Default().
	Guideline *guideline.Guideline
}

// Client is pawaPay's Merchant API v2 as an operator.Gateway.
type Client struct {
	base      *url.URL
	token     string
	http      *http.Client
	retry     contention.Policy
	now       func() time.Time
	sleep     func(context.Context, time.Duration) error
	guideline *guideline.Guideline
}

var _ operator.Gateway = (*Client)(nil)

// New returns a Client for c, or ErrConfig naming the missing setting.
func New(c Config) (*Client, error) {
	switch {
	case c.BaseURL == "":
		return nil, fmt.Errorf("%w: BaseURL is required", ErrConfig)
	case c.Token == "":
		return nil, fmt.Errorf("%w: Token is required", ErrConfig)
	}
	base, err := url.Parse(strings.TrimRight(c.BaseURL, "/"))
	if err != nil || (base.Scheme != "https" && base.Scheme != "http") || base.Host == "" {
		return nil, fmt.Errorf("%w: BaseURL must be an http(s) URL", ErrConfig)
	}
	cl := &Client{base: base, token: c.Token, http: c.HTTP, retry: c.Retry, now: c.Now, sleep: c.Sleep, guideline: c.Guideline}
	if cl.http == nil {
		cl.http = defaultHTTP()
	}
	if cl.retry == (contention.Policy{}) {
		cl.retry = DefaultRetry
	}
	if cl.now == nil {
		cl.now = time.Now
	}
	if cl.sleep == nil {
		cl.sleep = sleep
	}
	if cl.guideline == nil {
		cl.guideline = guideline.Default()
	}
	return cl, nil
}

func defaultHTTP() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: connectTimeout, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = connectTimeout
	return &http.Client{Transport: t, Timeout: requestTimeout}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// resource returns the path of kind k's collection: payouts or deposits.
func resource(k operator.Kind) (string, error) {
	switch k {
	case operator.Payout:
		return "/v2/payouts", nil
	case operator.Collection:
		return "/v2/deposits", nil
	}
	return "", fmt.Errorf("pawapay: unknown kind %q", k)
}

// Submit initiates a payout or a deposit with our transaction id as its
// payoutId or depositId, so that submitting again is answered
// DUPLICATE_IGNORED and then the first submission's state. The order id is
// that same id. A combination pawaPay does not serve, or a phone number that
// is no MSISDN of the country, is Failed without calling pawaPay.
func (c *Client) Submit(ctx context.Context, r operator.Request) (operator.Result, error) {
	path, err := resource(r.Kind)
	if err != nil {
		return operator.Result{}, err
	}
	if r.TransactionID == "" {
		return operator.Result{}, errors.New("pawapay: a request needs its transaction id")
	}
	provider, ok := c.guideline.PawaPayProvider(r.Country, r.Currency, r.Operator)
	if !ok {
		return operator.Result{OrderID: r.TransactionID, State: operator.Failed, Reason: notServedReason}, nil
	}
	phone, ok := c.msisdn(r.Country, r.PhoneNumber)
	if !ok {
		return operator.Result{OrderID: r.TransactionID, State: operator.Failed, Reason: "the phone number is not valid for the country"}, nil
	}
	if r.Amount <= 0 || !money.Supported(r.Currency) {
		return operator.Result{}, fmt.Errorf("pawapay: transaction %s: no amount to send", r.TransactionID)
	}
	body := initiation{
		Amount:   money.Format(r.Amount, r.Currency),
		Currency: r.Currency,
		Metadata: metadataOf(r.CompanyID),
	}
	account := &party{Type: "MMO", AccountDetails: accountDetails{PhoneNumber: phone, Provider: provider}}
	if r.Kind == operator.Payout {
		body.PayoutID, body.Recipient = r.TransactionID, account
	} else {
		body.DepositID, body.Payer = r.TransactionID, account
	}
	payload, err := json.Marshal(body)
	if err != nil {
		return operator.Result{}, fmt.Errorf("pawapay: %w", err)
	}
	code, raw, err := c.call(ctx, http.MethodPost, path, payload)
	if err != nil {
		return operator.Result{}, err
	}
	var a initiationAnswer
	if code == http.StatusForbidden && json.Unmarshal(raw, &a) == nil && a.FailureReason != nil && notAllowed[a.FailureReason.FailureCode] {
		// the operation is not enabled for the provider: this request is
		// rejected, as a 200 REJECTED would say (the failure codes page)
		return c.rejected(ctx, r, operator.Result{OrderID: r.TransactionID, State: operator.Failed, Reason: reasonOf(a.FailureReason.FailureCode), Raw: json.RawMessage(raw)})
	}
	switch {
	case code == http.StatusOK, code == http.StatusBadRequest:
		// a 400 carries a REJECTED answer: the request will never be accepted
	case code == http.StatusUnauthorized, code == http.StatusForbidden:
		return operator.Result{}, fmt.Errorf("%w: pawapay: initiation refused with %d (check the API token)", operator.ErrUnavailable, code)
	default:
		return operator.Result{}, fmt.Errorf("%w: pawapay: initiation answered %d", operator.ErrUnavailable, code)
	}
	a = initiationAnswer{}
	if err := json.Unmarshal(raw, &a); err != nil || a.Status == "" {
		return operator.Result{}, fmt.Errorf("%w: pawapay: malformed initiation answer (%d)", operator.ErrUnavailable, code)
	}
	if id := a.PayoutID + a.DepositID; id != "" && id != r.TransactionID {
		return operator.Result{}, fmt.Errorf("%w: pawapay: initiation answered for another id", operator.ErrUnavailable)
	}
	if code == http.StatusBadRequest && a.Status != "REJECTED" {
		return operator.Result{}, fmt.Errorf("%w: pawapay: initiation answered 400 with status %q", operator.ErrUnavailable, a.Status)
	}
	switch a.Status {
	case "ACCEPTED", "REJECTED":
	case "DUPLICATE_IGNORED":
		return c.Status(ctx, r.Kind, r.TransactionID)
	default:
		return operator.Result{}, fmt.Errorf("%w: pawapay: initiation answered status %q", operator.ErrUnavailable, a.Status)
	}
	var failure string
	if a.FailureReason != nil {
		failure = a.FailureReason.FailureCode
	}
	state, reason, _ := interpret(a.Status, failure)
	res := operator.Result{OrderID: r.TransactionID, State: state, Reason: reason, Raw: json.RawMessage(raw)}
	if state == operator.Failed {
		return c.rejected(ctx, r, res)
	}
	return res, nil
}

// rejected returns the rejection res of r once pawaPay confirms it holds no
// payment of r's id: a rejection may answer a repeated initiation (a retry
// after a time-out, a submission sent again) whose first copy was
// accepted, and pawaPay does not document that its duplicate check comes
// before its validation. What pawaPay holds is the answer; a check that
// fails leaves the outcome unknown.
func (c *Client) rejected(ctx context.Context, r operator.Request, res operator.Result) (operator.Result, error) {
	held, err := c.Lookup(ctx, r.Kind, r.TransactionID)
	switch {
	case errors.Is(err, operator.ErrNotFound):
		return res, nil
	case err != nil:
		return operator.Result{}, fmt.Errorf("%w: pawapay: initiation rejected, and whether an earlier copy was accepted is unknown: %v", operator.ErrUnavailable, err)
	}
	return held, nil
}

// Status checks the payout or deposit orderID, our transaction id: FOUND
// with its status, or ErrNotFound (a submission still on its way). It is
// Lookup by another name, the order id being our reference.
func (c *Client) Status(ctx context.Context, k operator.Kind, orderID string) (operator.Result, error) {
	return c.Lookup(ctx, k, orderID)
}

// Lookup checks the payout or deposit submitted with our reference.
func (c *Client) Lookup(ctx context.Context, k operator.Kind, reference string) (operator.Result, error) {
	path, err := resource(k)
	if err != nil {
		return operator.Result{}, err
	}
	if reference == "" {
		return operator.Result{}, fmt.Errorf("%w: pawapay: empty reference", operator.ErrNotFound)
	}
	code, raw, err := c.call(ctx, http.MethodGet, path+"/"+url.PathEscape(reference), nil)
	if err != nil {
		return operator.Result{}, err
	}
	if code != http.StatusOK && code != http.StatusNotFound {
		return operator.Result{}, fmt.Errorf("%w: pawapay: status check answered %d", operator.ErrUnavailable, code)
	}
	var a statusAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		return operator.Result{}, fmt.Errorf("%w: pawapay: malformed status answer", operator.ErrUnavailable)
	}
	switch {
	case a.Status == "NOT_FOUND":
		return operator.Result{}, fmt.Errorf("%w: pawapay %s %s", operator.ErrNotFound, strings.ToLower(string(k)), reference)
	case a.Status != "FOUND" || a.Data == nil || a.Data.PayoutID+a.Data.DepositID != reference:
		return operator.Result{}, fmt.Errorf("%w: pawapay: malformed status answer", operator.ErrUnavailable)
	}
	var failure string
	if a.Data.FailureReason != nil {
		failure = a.Data.FailureReason.FailureCode
	}
	state, reason, o := interpret(a.Data.Status, failure)
	if o.err != nil {
		return operator.Result{}, o.err
	}
	if state == "" || a.Data.Status == "REJECTED" {
		return operator.Result{}, fmt.Errorf("%w: pawapay: status check answered status %q", operator.ErrUnavailable, a.Data.Status)
	}
	return operator.Result{OrderID: reference, State: state, Reason: reason, Raw: json.RawMessage(raw)}, nil
}

// msisdn returns phone in pawaPay's MSISDN form (the country's dial code
// then the number, digits only), and false when it is not one of country's
// numbers.
func (c *Client) msisdn(country, phone string) (string, bool) {
	info, ok := c.guideline.Country(country)
	if !ok {
		return "", false
	}
	digits := strings.TrimPrefix(strings.ReplaceAll(phone, " ", ""), "+")
	dial := strings.TrimPrefix(info.PhoneCode, "+")
	if len(digits) < 8 || len(digits) > 15 || !strings.HasPrefix(digits, dial) || len(digits) == len(dial) {
		return "", false
	}
	for _, r := range digits {
		if r < '0' || r > '9' {
			return "", false
		}
	}
	return digits, true
}

// call sends one idempotent request (an initiation keyed by its id, or a
// GET) and retries it under c.retry on a network error, a 5xx or a 429;
// a 429 waits its Retry-After when the context's deadline allows. It
// returns the final status code and body; an error wraps
// operator.ErrUnavailable and never holds the token or the body.
func (c *Client) call(ctx context.Context, method, path string, body []byte) (int, []byte, error) {
	var code int
	var raw []byte
	_, err := c.retry.Do(ctx, func(ctx context.Context) (bool, error) {
		var req *http.Request
		var err error
		req, err = http.NewRequestWithContext(ctx, method, c.base.String()+path, bytes.NewReader(body))
		if err != nil {
			return false, fmt.Errorf("pawapay: %w", err)
		}
		req.Header.Set("Authorization", "Bearer "+c.token)
		req.Header.Set("Accept", "application/json")
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := c.http.Do(req)
		if err != nil {
			return ctx.Err() == nil, fmt.Errorf("%w: pawapay: %s %s: %v", operator.ErrUnavailable, method, path, cause(err))
		}
		raw, err = io.ReadAll(io.LimitReader(resp.Body, maxBody))
		resp.Body.Close()
		if err != nil {
			return ctx.Err() == nil, fmt.Errorf("%w: pawapay: %s %s: reading the answer: %v", operator.ErrUnavailable, method, path, cause(err))
		}
		code = resp.StatusCode
		switch {
		case code == http.StatusTooManyRequests:
			wait := retryAfter(resp.Header.Get("Retry-After"), c.now())
			limited := fmt.Errorf("%w: pawapay: %s %s: rate limited", operator.ErrUnavailable, method, path)
			if dl, ok := ctx.Deadline(); (ok && c.now().Add(wait).After(dl)) || (!ok && wait > maxRetryAfter) {
				return false, fmt.Errorf("%w; Retry-After %v is beyond the deadline", limited, wait)
			}
			if err := c.sleep(ctx, wait); err != nil {
				return false, fmt.Errorf("%w: %v", limited, err)
			}
			return true, limited
		case code >= 500:
			return true, fmt.Errorf("%w: pawapay: %s %s answered %d", operator.ErrUnavailable, method, path, code)
		}
		return false, nil
	})
	if err != nil {
		if !errors.Is(err, operator.ErrUnavailable) {
			err = fmt.Errorf("%w: %v", operator.ErrUnavailable, err)
		}
		return 0, nil, err
	}
	return code, raw, nil
}

// cause returns err without the URL a *url.Error repeats.
func cause(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date. Absent
// or unreadable: one second.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
		return 0
	}
	return time.Second
}
