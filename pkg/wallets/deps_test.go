package wallets_test

import (
	"strings"
	"testing"

	"payments/pkg/providers/bank"
	"payments/pkg/store/moneystore"
	"payments/pkg/wallets"
)

// TestNewServiceRefusesMissingDeps: a service is never built without a
// dependency it needs, and the error names it; bank.None is a dependency
// (no bank), not a missing one.
func TestNewServiceRefusesMissingDeps(t *testing.T) {
	t.Parallel()
	full := func() wallets.Deps {
		return wallets.Deps{Store: moneystore.NewWallets(nil), Companies: approved{}, Fees: noFees{}, Events: noEvents{}, Bank: bank.None}
	}
	svc, err := wallets.NewService(full())
	if err != nil {
		t.Fatalf("every dependency given: %v", err)
	}
	if svc.Bank != nil {
		t.Errorf("Bank = %v, want none for bank.None", svc.Bank)
	}
	tests := []struct {
		missing string
		drop    func(*wallets.Deps)
	}{
		{"Store", func(d *wallets.Deps) { d.Store = nil }},
		{"Companies", func(d *wallets.Deps) { d.Companies = nil }},
		{"Fees", func(d *wallets.Deps) { d.Fees = nil }},
		{"Events", func(d *wallets.Deps) { d.Events = nil }},
		{"Bank", func(d *wallets.Deps) { d.Bank = nil }},
	}
	for _, tt := range tests {
		t.Run(tt.missing, func(t *testing.T) {
			d := full()
			tt.drop(&d)
			svc, err := wallets.NewService(d)
			if err == nil || svc != nil || !strings.Contains(err.Error(), tt.missing) {
				t.Fatalf("NewService without %s = %v, %v; want an error naming it", tt.missing, svc, err)
			}
		})
	}
	if b, err := wallets.NewBalances(nil); err == nil || b != nil || !strings.Contains(err.Error(), "Store") {
		t.Errorf("NewBalances without a store = %v, %v; want an error naming it", b, err)
	}
}
