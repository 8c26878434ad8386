package payments_test

import (
	"strings"
	"testing"

	"payments/pkg/fees"
	"payments/pkg/payments"
	"payments/pkg/providers/operator"
	"payments/pkg/store"
	"payments/pkg/store/moneystore"
)

// TestNewServiceRefusesMissingDeps: a service is never built without a
// dependency it needs, and the error names it; operator.None is a
// dependency (no operator), not a missing one.
func TestNewServiceRefusesMissingDeps(t *testing.T) {
	t.Parallel()
	full := func() payments.Deps {
		return payments.Deps{
			Store: moneystore.NewPayments(nil), Wallets: moneystore.NewWallets(nil), Fees: fees.NewService(store.NewFees(nil)),
			Gateway: operator.None, Jobs: &jobQueue{}, BulkJobs: &jobQueue{}, Events: &eventLog{}, Batches: noBatches{},
		}
	}
	if _, err := payments.NewService(full()); err != nil {
		t.Fatalf("every dependency given: %v", err)
	}
	tests := []struct {
		missing string
		drop    func(*payments.Deps)
	}{
		{"Store", func(d *payments.Deps) { d.Store = nil }},
		{"Wallets", func(d *payments.Deps) { d.Wallets = nil }},
		{"Fees", func(d *payments.Deps) { d.Fees = nil }},
		{"Gateway", func(d *payments.Deps) { d.Gateway = nil }},
		{"Jobs", func(d *payments.Deps) { d.Jobs = nil }},
		{"BulkJobs", func(d *payments.Deps) { d.BulkJobs = nil }},
		{"Events", func(d *payments.Deps) { d.Events = nil }},
		{"Batches", func(d *payments.Deps) { d.Batches = nil }},
	}
	for _, tt := range tests {
		t.Run(tt.missing, func(t *testing.T) {
			d := full()
			tt.drop(&d)
			svc, err := payments.NewService(d)
			if err == nil || svc != nil || !strings.Contains(err.Error(), tt.missing) {
				t.Fatalf("NewService without %s = %v, %v; want an error naming it", tt.missing, svc, err)
			}
		})
	}
}

// TestNewAdminRefusesMissingDeps: the console's service needs the store and
// an events publisher, and nothing else.
func TestNewAdminRefusesMissingDeps(t *testing.T) {
	t.Parallel()
	if _, err := payments.NewAdmin(moneystore.NewPayments(nil), &eventLog{}); err != nil {
		t.Fatalf("store and events given: %v", err)
	}
	if a, err := payments.NewAdmin(nil, &eventLog{}); err == nil || a != nil || !strings.Contains(err.Error(), "Store") {
		t.Errorf("NewAdmin without a store = %v, %v; want an error naming it", a, err)
	}
	if a, err := payments.NewAdmin(moneystore.NewPayments(nil), nil); err == nil || a != nil || !strings.Contains(err.Error(), "Events") {
		t.Errorf("NewAdmin without events = %v, %v; want an error naming it", a, err)
	}
}
