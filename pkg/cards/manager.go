package cards

import (
	"context"
	"errors"

	"payments/pkg/customers"
	"payments/pkg/page"
	"payments/pkg/providers/issuer"
)

// Manager reads a company's cards and freezes and unfreezes them: what the
// company dashboard does with cards. It needs the cards' store, a reader
// of the customers, the companies (their card slots, for the statistics)
// and the issuer it tells of a freeze; never the card secrets' vault, the
// wallets, the fees or a publisher: nothing built over it can reveal a
// card number or move money. Its reads never sync with the issuer (a sync
// may terminate a card, which moves money).
type Manager struct{ svc *Service }

// CustomerReader reads a company's customers (customers.Directory).
type CustomerReader interface {
	// Get reads a customer of the company; customers.ErrNotFound if
	// absent.
	Get(ctx context.Context, companyID, id string) (customers.Customer, error)
}

// ManagerDeps are what a Manager is built from; NewManager refuses a
// ManagerDeps without one of them.
type ManagerDeps struct {
	Store     Store
	Customers CustomerReader
	Companies Companies
	// Issuer is told of each freeze and unfreeze: issuer.None where none
	// is configured, with which they are ErrNoIssuer and reads work.
	Issuer issuer.Issuer
}

// NewManager returns the Manager over d, or an error naming the
// dependency d lacks.
func NewManager(d ManagerDeps) (*Manager, error) {
	switch {
	case d.Store == nil:
		return nil, errors.New("cards: no Store to build the manager")
	case d.Customers == nil:
		return nil, errors.New("cards: no Customers to build the manager")
	case d.Companies == nil:
		return nil, errors.New("cards: no Companies to build the manager")
	case d.Issuer == nil:
		return nil, errors.New("cards: no Issuer to build the manager (issuer.None where there is no issuer)")
	}
	if d.Issuer == issuer.None {
		d.Issuer = nil
	}
	return &Manager{newService(Deps{Store: d.Store, Customers: readOnly{d.Customers}, Companies: d.Companies, Issuer: d.Issuer})}, nil
}

// errNoRegistration is a cardholder asked of a Manager's customers, which
// registers none (no Manager method asks for one).
var errNoRegistration = errors.New("cards: the manager registers no cardholder")

// readOnly is a CustomerReader as the service's Customers: it registers
// no cardholder.
type readOnly struct{ CustomerReader }

// Cardholder refuses: errNoRegistration.
func (readOnly) Cardholder(context.Context, customers.Customer) (string, error) {
	return "", errNoRegistration
}

// Card returns card id of the company (Service.Get without its options):
// ErrNotFound when it is not the company's.
func (m *Manager) Card(ctx context.Context, companyID, id string) (Card, error) {
	return m.svc.card(ctx, companyID, id)
}

// List is Service.List without its sync.
func (m *Manager) List(ctx context.Context, companyID string, q ListQuery) ([]Card, Statistics, error) {
	q.Sync = false
	return m.svc.List(ctx, companyID, q)
}

// CustomerCards is Service.CustomerCards without its sync.
func (m *Manager) CustomerCards(ctx context.Context, companyID, customerID string) ([]Card, error) {
	return m.svc.CustomerCards(ctx, companyID, customerID, false)
}

// ListTransactions is Service.ListTransactions.
func (m *Manager) ListTransactions(ctx context.Context, companyID, id string, q TxQuery) (page.Result[TxView], error) {
	return m.svc.ListTransactions(ctx, companyID, id, q)
}

// Freeze is Service.Freeze.
func (m *Manager) Freeze(ctx context.Context, companyID, cardID string, lock bool) (Card, error) {
	return m.svc.Freeze(ctx, companyID, cardID, lock)
}

// Unfreeze is Service.Unfreeze.
func (m *Manager) Unfreeze(ctx context.Context, companyID, cardID string, unlock bool) (Card, error) {
	return m.svc.Unfreeze(ctx, companyID, cardID, unlock)
}
