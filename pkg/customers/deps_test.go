package customers

import (
	"errors"
	"strings"
	"testing"

	"payments/pkg/providers/issuer"
	"payments/pkg/providers/kyc"
)

// TestNewServiceRefusesMissingDeps: a service is never built without a
// dependency it needs, and the error names it; kyc.None and issuer.None
// are dependencies (no providers: enrolments wait for review, syncs are
// refused), not missing ones.
func TestNewServiceRefusesMissingDeps(t *testing.T) {
	t.Parallel()
	full := func() Deps {
		return Deps{
			Store: &fakeStore{}, Companies: approvedCompanies{}, Documents: &fakeDocuments{}, Fetcher: &fakeFetcher{},
			Verifier: kyc.None, Issuer: issuer.None, Events: nopPublisher{},
		}
	}
	svc, err := NewService(full())
	if err != nil {
		t.Fatalf("every dependency given: %v", err)
	}
	if svc.verifier != nil || svc.issuer != nil {
		t.Errorf("Verifier, Issuer = %v, %v; want none for kyc.None and issuer.None", svc.verifier, svc.issuer)
	}
	tests := []struct {
		missing string
		drop    func(*Deps)
	}{
		{"Store", func(d *Deps) { d.Store = nil }},
		{"Companies", func(d *Deps) { d.Companies = nil }},
		{"Documents", func(d *Deps) { d.Documents = nil }},
		{"Fetcher", func(d *Deps) { d.Fetcher = nil }},
		{"Verifier", func(d *Deps) { d.Verifier = nil }},
		{"Issuer", func(d *Deps) { d.Issuer = nil }},
		{"Events", func(d *Deps) { d.Events = nil }},
	}
	for _, tt := range tests {
		t.Run(tt.missing, func(t *testing.T) {
			d := full()
			tt.drop(&d)
			svc, err := NewService(d)
			if err == nil || svc != nil || !strings.Contains(err.Error(), tt.missing) {
				t.Fatalf("NewService without %s = %v, %v; want an error naming it", tt.missing, svc, err)
			}
		})
	}
}

// TestCardholdersWithoutIssuer: the cards service's smaller customers
// service refuses to build without its dependencies, and with issuer.None
// registers no cardholder (ErrNoProviders).
func TestCardholdersWithoutIssuer(t *testing.T) {
	t.Parallel()
	for name, build := range map[string]func() (*Cardholders, error){
		"Store":  func() (*Cardholders, error) { return NewCardholders(nil, issuer.None, nopPublisher{}) },
		"Issuer": func() (*Cardholders, error) { return NewCardholders(&fakeStore{}, nil, nopPublisher{}) },
		"Events": func() (*Cardholders, error) { return NewCardholders(&fakeStore{}, issuer.None, nil) },
	} {
		if c, err := build(); err == nil || c != nil || !strings.Contains(err.Error(), name) {
			t.Errorf("NewCardholders without %s = %v, %v; want an error naming it", name, c, err)
		}
	}
	c, err := NewCardholders(&fakeStore{}, issuer.None, nopPublisher{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Cardholder(t.Context(), Customer{ID: "c1", CompanyID: "co1"}); !errors.Is(err, ErrNoProviders) {
		t.Errorf("Cardholder with issuer.None: err = %v, want ErrNoProviders", err)
	}
}
