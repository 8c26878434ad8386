package cards_test

import (
	"context"
	"strings"
	"testing"

	"payments/pkg/cards"
	"payments/pkg/customers"
	"payments/pkg/events"
	"payments/pkg/fees"
	"payments/pkg/providers/issuer"
	"payments/pkg/store"
	"payments/pkg/store/moneystore"
	"payments/pkg/vault"
	"payments/pkg/wallets"
)

type noCustomers struct{}

func (noCustomers) Get(context.Context, string, string) (customers.Customer, error) {
	return customers.Customer{}, customers.ErrNotFound
}
func (noCustomers) Cardholder(context.Context, customers.Customer) (string, error) {
	return "", customers.ErrNoProviders
}

type noSlots struct{}

func (noSlots) CardSlots(context.Context, string) (int, error) { return 0, nil }

type noSealer struct{}

func (noSealer) Seal(context.Context, []byte, vault.Context) (vault.Sealed, error) {
	return vault.Sealed{}, nil
}
func (noSealer) Open(context.Context, vault.Sealed, vault.Context) ([]byte, error) { return nil, nil }

type noEvents struct{}

func (noEvents) Publish(context.Context, ...events.Event) error { return nil }

// TestNewServiceRefusesMissingDeps: a service is never built without a
// dependency it needs, and the error names it; issuer.None is a
// dependency (no issuer: changes refused), not a missing one.
func TestNewServiceRefusesMissingDeps(t *testing.T) {
	t.Parallel()
	balances, err := wallets.NewBalances(moneystore.NewWallets(nil))
	if err != nil {
		t.Fatal(err)
	}
	full := func() cards.Deps {
		return cards.Deps{
			Store: moneystore.NewCards(nil), Customers: noCustomers{}, Wallets: balances, Companies: noSlots{},
			Fees: fees.NewService(store.NewFees(nil)), Issuer: issuer.None, Vault: noSealer{}, Events: noEvents{},
		}
	}
	svc, err := cards.NewService(full())
	if err != nil {
		t.Fatalf("every dependency given: %v", err)
	}
	if svc.Issuer != nil {
		t.Errorf("Issuer = %v, want none for issuer.None", svc.Issuer)
	}
	tests := []struct {
		missing string
		drop    func(*cards.Deps)
	}{
		{"Store", func(d *cards.Deps) { d.Store = nil }},
		{"Customers", func(d *cards.Deps) { d.Customers = nil }},
		{"Wallets", func(d *cards.Deps) { d.Wallets = nil }},
		{"Companies", func(d *cards.Deps) { d.Companies = nil }},
		{"Fees", func(d *cards.Deps) { d.Fees = nil }},
		{"Issuer", func(d *cards.Deps) { d.Issuer = nil }},
		{"Vault", func(d *cards.Deps) { d.Vault = nil }},
		{"Events", func(d *cards.Deps) { d.Events = nil }},
	}
	for _, tt := range tests {
		t.Run(tt.missing, func(t *testing.T) {
			d := full()
			tt.drop(&d)
			svc, err := cards.NewService(d)
			if err == nil || svc != nil || !strings.Contains(err.Error(), tt.missing) {
				t.Fatalf("NewService without %s = %v, %v; want an error naming it", tt.missing, svc, err)
			}
		})
	}
}

// TestNewApplierRefusesMissingDeps: the card-worker's applier needs the
// cards' store, the wallets, the fees, the issuer and the events, and
// nothing else.
func TestNewApplierRefusesMissingDeps(t *testing.T) {
	t.Parallel()
	balances, err := wallets.NewBalances(moneystore.NewWallets(nil))
	if err != nil {
		t.Fatal(err)
	}
	full := func() cards.ApplierDeps {
		return cards.ApplierDeps{
			Store: moneystore.NewCards(nil), Wallets: balances, Fees: fees.NewService(store.NewFees(nil)),
			Issuer: issuer.None, Events: noEvents{},
		}
	}
	if _, err := cards.NewApplier(full()); err != nil {
		t.Fatalf("every dependency given: %v", err)
	}
	tests := []struct {
		missing string
		drop    func(*cards.ApplierDeps)
	}{
		{"Store", func(d *cards.ApplierDeps) { d.Store = nil }},
		{"Wallets", func(d *cards.ApplierDeps) { d.Wallets = nil }},
		{"Fees", func(d *cards.ApplierDeps) { d.Fees = nil }},
		{"Issuer", func(d *cards.ApplierDeps) { d.Issuer = nil }},
		{"Events", func(d *cards.ApplierDeps) { d.Events = nil }},
	}
	for _, tt := range tests {
		t.Run(tt.missing, func(t *testing.T) {
			d := full()
			tt.drop(&d)
			a, err := cards.NewApplier(d)
			if err == nil || a != nil || !strings.Contains(err.Error(), tt.missing) {
				t.Fatalf("NewApplier without %s = %v, %v; want an error naming it", tt.missing, a, err)
			}
		})
	}
}
