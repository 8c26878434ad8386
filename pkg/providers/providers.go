// Package providers chooses, by the deployment's mode, the adapters of the
// outside providers: the mobile-money operator, the card issuer, the KYC
// verifier and the bank. ForMode is the one place that choice is made,
// and the seam where a real adapter plugs in.
package providers

import (
	"fmt"

	"payments/pkg/providers/bank"
	"payments/pkg/providers/bank/banksandbox"
	"payments/pkg/providers/issuer"
	"payments/pkg/providers/issuer/issuersandbox"
	"payments/pkg/providers/kyc"
	"payments/pkg/providers/kyc/kycsandbox"
	"payments/pkg/providers/operator"
	"payments/pkg/providers/operator/operatorsandbox"
	"payments/pkg/providers/operator/pawapay"
)

// Modes of a deployment.
const (
	// ModeSandbox runs on the simulated providers.
	ModeSandbox = "sandbox"
	// ModeProduction runs on the real providers' adapters; a provider
	// without one is its kind's None, which refuses every request.
	ModeProduction = "production"
)

// Providers are the adapters of one mode. None of them is nil: a provider
// that has no adapter in the mode is its kind's None (operator.None,
// issuer.None, kyc.None, bank.None), which the services take for "none
// configured" and answer as such.
type Providers struct {
	Operator operator.Gateway
	Issuer   issuer.Issuer
	KYC      kyc.Verifier
	Bank     bank.Bank
	// Sandbox is true for the simulated providers, whose test-only routes
	// (the sandbox card network) are then served.
	Sandbox bool
}

// SandboxStores are the simulated providers' own records, kept apart from
// ours as a remote system keeps its own.
type SandboxStores struct {
	Orders        operatorsandbox.Store
	Cards         issuersandbox.Store
	Verifications kycsandbox.Store
}

// Deps are what the providers of a mode work with; the functions give
// what they need, the rest may be nil.
type Deps struct {
	// Sandbox returns the simulated providers' records. ForMode calls it
	// in ModeSandbox alone: production mode builds no simulated store.
	Sandbox func() SandboxStores
	// Sealer seals the secrets of the cards the sandbox issuer issues; nil
	// where no card is issued (the card-worker only posts).
	Sealer issuersandbox.Sealer
	// Documents are read by the sandbox verifier; nil where no customer
	// is verified.
	Documents kycsandbox.DocumentReader
	// Funds is the queue on which the sandbox bank answers the fundings
	// declared; nil where the bank is only asked (banksandbox.Bank.Check).
	Funds banksandbox.Queue
	// Aggregator is the real mobile-money aggregator's (pawaPay's) API of
	// production mode; its zero value, where a function never calls it
	// (the sweeper), leaves the operator None.
	Aggregator Aggregator
	// CardIssuer is the real card issuer's adapter of production mode
	// (Stripe Issuing's, pkg/function/cardissuer), built by the functions
	// that call it, so that no other links it; issuer.Reported for the
	// card-worker, which only applies its events; nil leaves the issuer
	// None.
	CardIssuer issuer.Issuer
}

// Aggregator is where the mobile-money aggregator's API is and how to
// call it.
type Aggregator struct {
	BaseURL, Token string
}

// ForMode returns the providers of mode: the simulated ones over d (and
// d.Sandbox's records) in ModeSandbox; in ModeProduction, the real adapters (the operator is
// pawaPay when d.Aggregator is set, the issuer d.CardIssuer), and None for
// a kind that has none yet (the KYC verifier and the bank).
func ForMode(mode string, d Deps) (Providers, error) {
	switch mode {
	case ModeSandbox:
		var st SandboxStores
		if d.Sandbox != nil {
			st = d.Sandbox()
		}
		p := Providers{
			Operator: operatorsandbox.New(st.Orders),
			Issuer:   issuersandbox.New(st.Cards, d.Sealer),
			Bank:     banksandbox.New(d.Funds),
			Sandbox:  true,
		}
		if d.Documents != nil {
			p.KYC = kycsandbox.New(d.Documents, st.Verifications)
		} else {
			p.KYC = kyc.None
		}
		return p, nil
	case ModeProduction:
		p := Providers{Operator: operator.None, Issuer: issuer.None, KYC: kyc.None, Bank: bank.None}
		if d.CardIssuer != nil {
			p.Issuer = d.CardIssuer
		}
		if d.Aggregator.BaseURL != "" {
			gw, err := pawapay.New(pawapay.Config{BaseURL: d.Aggregator.BaseURL, Token: d.Aggregator.Token})
			if err != nil {
				return Providers{}, fmt.Errorf("providers: the aggregator: %w", err)
			}
			p.Operator = gw
		}
		return p, nil
	}
	return Providers{}, fmt.Errorf("providers: mode %q is neither %s nor %s", mode, ModeSandbox, ModeProduction)
}
