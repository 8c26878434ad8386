// Package operatorcallbacks is the operator-callbacks function: POST
// /operator/callbacks/pawapay, which the mobile-money aggregator calls.
package operatorcallbacks

import (
	"context"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"strings"
	"time"

	"payments/pkg/companies/companieshttp"
	"payments/pkg/fees/feeshttp"
	"payments/pkg/function"
	"payments/pkg/httpapi"
	"payments/pkg/idempotency/idempotencyhttp"
	"payments/pkg/limits/limitshttp"
	"payments/pkg/operatorhooks"
	"payments/pkg/operatorhooks/operatorhookshttp"
	"payments/pkg/payments/paymentshttp"
	"payments/pkg/providers/operator/pawapay"
	"payments/pkg/queue"
	"payments/pkg/wallets/walletshttp"
	"payments/pkg/webhooks/webhookshttp"
)

// Errors is the function's error catalogue: the answers to the errors of
// what it links (function.Catalogue).
var Errors = function.Catalogue(operatorhookshttp.Errors, companieshttp.Errors, webhookshttp.Errors, feeshttp.Errors, idempotencyhttp.Errors, limitshttp.Errors, paymentshttp.Errors, walletshttp.Errors)

// New builds the operator-callbacks function: POST
// /operator/callbacks/pawapay, called by the aggregator, so without the
// token guard. A callback whose signature verifies with the aggregator's
// key (OPERATOR_CALLBACK_PUBLIC_KEY) is put on the payouts queue for the
// payout worker; that send is its only effect.
func New(ctx context.Context, cfg function.Config) (function.HTTPHandler, error) {
	return NewWithClock(cfg, time.Now)
}

// NewWithClock is New with the clock that signatures' dates are checked
// against.
func NewWithClock(cfg function.Config, now func() time.Time) (function.HTTPHandler, error) {
	h, err := Hooks(cfg, queue.NewPublisher(queue.NewClient(cfg.AWS, cfg.SQSEndpoint), cfg.PayoutsQueueURL), now)
	if err != nil {
		return nil, err
	}
	return Handler(h), nil
}

// Handler serves h's route as the function does, behind API Gateway.
func Handler(h *operatorhooks.Handler) function.HTTPHandler {
	rt := httpapi.NewRouter(Errors, nil)
	operatorhookshttp.Routes(rt, h)
	return function.HTTP(rt)
}

// CallbackMaxAge is how old a callback's signature may be.
const CallbackMaxAge = 5 * time.Minute

// NoCallbackKeyNotice is what start-up says (function.StartupNotice) when the
// operator callbacks have no key to verify them with.
const NoCallbackKeyNotice = "operator callbacks are refused: no OPERATOR_CALLBACK_PUBLIC_KEY (sandbox mode: no aggregator calls back)"

// Hooks returns the handler of the aggregator's callbacks,
// verified with cfg's key and queued on payouts. Without a key (sandbox
// mode, where no aggregator calls back: the sandbox operator answers the
// worker's polls) every callback is refused, as start-up says once
// (function.StartupNotice); production mode has one (function.ConfigFromEnv).
func Hooks(cfg function.Config, payouts function.Queue, now func() time.Time) (*operatorhooks.Handler, error) {
	if cfg.OperatorCallbackKey == "" {
		function.StartupNotice(NoCallbackKeyNotice, "mode", cfg.Mode)
		return &operatorhooks.Handler{Jobs: payouts}, nil
	}
	key, err := PublicKeyPEM(cfg.OperatorCallbackKey)
	if err != nil {
		return nil, err
	}
	v, err := pawapay.NewCallbacks(key, CallbackMaxAge, now)
	if err != nil {
		return nil, fmt.Errorf("%w: OPERATOR_CALLBACK_PUBLIC_KEY: %v", function.ErrConfig, err)
	}
	return &operatorhooks.Handler{Jobs: payouts, Verifier: v}, nil
}

// PublicKeyPEM returns the PEM of a public key given as PEM, or as the
// base64 of its DER (one line, easier to pass as a stack parameter).
func PublicKeyPEM(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "-----BEGIN") {
		return []byte(s), nil
	}
	der, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%w: OPERATOR_CALLBACK_PUBLIC_KEY is neither a PEM nor the base64 of a DER key", function.ErrConfig)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}
