package function

import (
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"strings"
	"time"

	"payments/pkg/operatorhooks"
	"payments/pkg/providers/operator/pawapay"
)

// CallbackMaxAge is how old a callback's signature may be.
const CallbackMaxAge = 5 * time.Minute

// NoCallbackKeyNotice is what start-up says (StartupNotice) when the
// operator callbacks have no key to verify them with.
const NoCallbackKeyNotice = "operator callbacks are refused: no OPERATOR_CALLBACK_PUBLIC_KEY (sandbox mode: no aggregator calls back)"

// OperatorHooks returns the handler of the aggregator's callbacks,
// verified with cfg's key and queued on payouts. Without a key (sandbox
// mode, where no aggregator calls back: the sandbox operator answers the
// worker's polls) every callback is refused, as start-up says once
// (StartupNotice); production mode has one (ConfigFromEnv).
func OperatorHooks(cfg Config, payouts Queue, now func() time.Time) (*operatorhooks.Handler, error) {
	if cfg.OperatorCallbackKey == "" {
		StartupNotice(NoCallbackKeyNotice, "mode", cfg.Mode)
		return &operatorhooks.Handler{Jobs: payouts}, nil
	}
	key, err := PublicKeyPEM(cfg.OperatorCallbackKey)
	if err != nil {
		return nil, err
	}
	v, err := pawapay.NewCallbacks(key, CallbackMaxAge, now)
	if err != nil {
		return nil, fmt.Errorf("%w: OPERATOR_CALLBACK_PUBLIC_KEY: %v", ErrConfig, err)
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
		return nil, fmt.Errorf("%w: OPERATOR_CALLBACK_PUBLIC_KEY is neither a PEM nor the base64 of a DER key", ErrConfig)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}
