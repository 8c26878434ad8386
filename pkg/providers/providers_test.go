package providers_test

import (
	"context"
	"errors"
	"testing"

	"payments/pkg/providers"
	"payments/pkg/providers/bank"
	"payments/pkg/providers/bank/banksandbox"
	"payments/pkg/providers/issuer"
	"payments/pkg/providers/issuer/issuersandbox"
	"payments/pkg/providers/kyc"
	"payments/pkg/providers/kyc/kycsandbox"
	"payments/pkg/providers/operator"
	"payments/pkg/providers/operator/operatorsandbox"
)

type noDocuments struct{}

func (noDocuments) GetDocument(context.Context, string) ([]byte, error) {
	return nil, errors.New("none")
}

// TestForMode: the sandbox mode has the simulated providers, the
// production mode the None of every kind (no adapter yet) and builds no
// simulated provider's records, and any other mode is an error.
func TestForMode(t *testing.T) {
	stores := 0
	counted := func() providers.SandboxStores { stores++; return providers.SandboxStores{} }
	p, err := providers.ForMode(providers.ModeSandbox, providers.Deps{Documents: noDocuments{}, Sandbox: counted})
	if err != nil {
		t.Fatal(err)
	}
	if stores != 1 {
		t.Errorf("sandbox mode built the simulated providers' records %d times, want 1", stores)
	}
	if !p.Sandbox {
		t.Error("sandbox providers not marked Sandbox")
	}
	if _, ok := p.Operator.(*operatorsandbox.Gateway); !ok {
		t.Errorf("sandbox Operator = %T", p.Operator)
	}
	if _, ok := p.Issuer.(*issuersandbox.Issuer); !ok {
		t.Errorf("sandbox Issuer = %T", p.Issuer)
	}
	if _, ok := p.KYC.(*kycsandbox.Verifier); !ok {
		t.Errorf("sandbox KYC = %T", p.KYC)
	}
	if _, ok := p.Bank.(*banksandbox.Bank); !ok {
		t.Errorf("sandbox Bank = %T", p.Bank)
	}
	if p, err := providers.ForMode(providers.ModeSandbox, providers.Deps{}); err != nil || p.KYC != kyc.None {
		t.Errorf("sandbox without documents: KYC = %T, %v; want kyc.None", p.KYC, err)
	}

	stores = 0
	p, err = providers.ForMode(providers.ModeProduction, providers.Deps{Sandbox: counted})
	if err != nil {
		t.Fatal(err)
	}
	if stores != 0 {
		t.Errorf("production mode built the simulated providers' records %d times", stores)
	}
	if p.Sandbox || p.Operator != operator.None || p.Issuer != issuer.None || p.KYC != kyc.None || p.Bank != bank.None {
		t.Errorf("production providers = %+v, want the None of every kind", p)
	}

	if _, err := providers.ForMode("staging", providers.Deps{}); err == nil {
		t.Error("an unknown mode gave providers")
	}
}

// TestNoneRefuses: the None of every kind refuses whatever it is asked.
func TestNoneRefuses(t *testing.T) {
	ctx := context.Background()
	if _, err := operator.None.Submit(ctx, operator.Request{}); !errors.Is(err, operator.ErrNone) {
		t.Errorf("operator.None.Submit: %v", err)
	}
	if _, err := issuer.None.PostCard(ctx, issuer.Posting{}); !errors.Is(err, issuer.ErrNone) {
		t.Errorf("issuer.None.PostCard: %v", err)
	}
	if _, err := kyc.None.Verify(ctx, kyc.Request{}); !errors.Is(err, kyc.ErrNone) {
		t.Errorf("kyc.None.Verify: %v", err)
	}
	if err := bank.None.Expect(ctx, bank.Transfer{}); !errors.Is(err, bank.ErrNone) {
		t.Errorf("bank.None.Expect: %v", err)
	}
}
