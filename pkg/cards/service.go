package cards

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"payments/pkg/cache"
	"payments/pkg/customers"
	"payments/pkg/events"
	"payments/pkg/fees"
	"payments/pkg/ids"
	"payments/pkg/providers/issuer"
	"payments/pkg/timestamp"
	"payments/pkg/vault"
	"payments/pkg/wallets"
)

// Customers is what the service reads of a company's customers.
type Customers interface {
	// Get reads a customer of the company; customers.ErrNotFound if
	// absent.
	Get(ctx context.Context, companyID, id string) (customers.Customer, error)
	// Cardholder returns the issuer's id of verified customer c,
	// registering it with the issuer first when it has none.
	Cardholder(ctx context.Context, c customers.Customer) (string, error)
}

// Wallets finds the company USD wallet.
type Wallets interface {
	// USDWallet returns the company USD wallet, or
	// wallets.ErrUSDWalletNotFound.
	USDWallet(ctx context.Context, companyID string) (wallets.Wallet, error)
}

// Companies reads a company's plan.
type Companies interface {
	// CardSlots returns how many live cards the company may hold.
	CardSlots(ctx context.Context, companyID string) (int, error)
}

// Fees prices an operation.
type Fees interface {
	Quote(ctx context.Context, companyID, typ, operator, country, currency string, amount int64) (fees.Quote, error)
}

// Sealer seals and opens card secrets (a *vault.Vault).
type Sealer interface {
	Seal(ctx context.Context, secret []byte, ec vault.Context) (vault.Sealed, error)
	Open(ctx context.Context, s vault.Sealed, ec vault.Context) ([]byte, error)
}

// Publisher queues committed events.
type Publisher interface {
	// Publish queues evs; an event it could not queue is left for the
	// sweeper.
	Publish(ctx context.Context, evs ...events.Event) error
}

// Deps are what a Service is built from; NewService refuses a Deps
// without one of them.
type Deps struct {
	Store     Store
	Customers Customers
	Wallets   Wallets
	Companies Companies
	Fees      Fees
	// Issuer is the card issuer: issuer.None where none is configured,
	// which NewService keeps as nil, so that every change is ErrNoIssuer
	// and reads work.
	Issuer issuer.Issuer
	Vault  Sealer
	Events Publisher
	// RevealQuota admits or refuses each reveal of a company's cards (its
	// hourly quota); nil, as for the functions that never reveal, refuses
	// every reveal.
	RevealQuota RevealLimiter
	// Now is the clock (default time.Now); tests give one they move.
	Now func() time.Time
}

// RevealLimiter admits or refuses one reveal of the cards of company key at
// now; refused, retryAfter is how long until one would be admitted.
// store.RateLimiter implements it.
type RevealLimiter interface {
	Allow(ctx context.Context, key string, now time.Time) (allowed bool, retryAfter time.Duration, err error)
}

// ErrNoIssuer is a change asked of a deployment without a card issuer
// (production mode, until its adapter exists).
var ErrNoIssuer = errors.New("cards: no card issuer configured")

// Service issues and runs cards.
type Service struct {
	Deps
	// companies keeps the company of each card the network named: it never
	// changes.
	companies *cache.Cache[string]
}

// NewService returns a Service over d, or an error naming the dependency
// d lacks.
func NewService(d Deps) (*Service, error) {
	switch {
	case d.Store == nil:
		return nil, errors.New("cards: no Store to build the service")
	case d.Customers == nil:
		return nil, errors.New("cards: no Customers to build the service")
	case d.Wallets == nil:
		return nil, errors.New("cards: no Wallets to build the service")
	case d.Companies == nil:
		return nil, errors.New("cards: no Companies to build the service")
	case d.Fees == nil:
		return nil, errors.New("cards: no Fees to build the service")
	case d.Issuer == nil:
		return nil, errors.New("cards: no Issuer to build the service (issuer.None where there is no issuer)")
	case d.Vault == nil:
		return nil, errors.New("cards: no Vault to build the service")
	case d.Events == nil:
		return nil, errors.New("cards: no Events publisher to build the service")
	}
	if d.Issuer == issuer.None {
		d.Issuer = nil
	}
	return newService(d), nil
}

// Applier applies the card issuer's notifications (Service.Apply) and
// decides the network's authorization requests (Service.Decide): all the
// card-worker and the issuer-authorizations function do. It needs the
// cards' store, the wallets, the fees, the issuer it tells what each
// notification moved, and a publisher of the events; never the customers,
// the companies or the card secrets.
type Applier struct{ svc *Service }

// ApplierDeps are what an Applier is built from; NewApplier refuses an
// ApplierDeps without one of them.
type ApplierDeps struct {
	Store   Store
	Wallets Wallets
	Fees    Fees
	// Issuer is told what each notification moved on its card;
	// issuer.None where none is configured, which tells nothing.
	Issuer issuer.Issuer
	Events Publisher
}

// NewApplier returns the Applier over d, or an error naming the
// dependency d lacks.
func NewApplier(d ApplierDeps) (*Applier, error) {
	switch {
	case d.Store == nil:
		return nil, errors.New("cards: no Store to build the applier")
	case d.Wallets == nil:
		return nil, errors.New("cards: no Wallets to build the applier")
	case d.Fees == nil:
		return nil, errors.New("cards: no Fees to build the applier")
	case d.Issuer == nil:
		return nil, errors.New("cards: no Issuer to build the applier (issuer.None where there is no issuer)")
	case d.Events == nil:
		return nil, errors.New("cards: no Events publisher to build the applier")
	}
	if d.Issuer == issuer.None {
		d.Issuer = nil
	}
	return &Applier{newService(Deps{Store: d.Store, Wallets: d.Wallets, Fees: d.Fees, Issuer: d.Issuer, Events: d.Events})}, nil
}

// newService returns the Service over d.
func newService(d Deps) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Service{Deps: d, companies: cache.New[string](0, time.Now)}
}

// Apply is Service.Apply.
func (a *Applier) Apply(ctx context.Context, n issuer.Notification) error {
	return a.svc.Apply(ctx, n)
}

// Decide is Service.Decide.
func (a *Applier) Decide(ctx context.Context, r issuer.AuthorizationRequest) (issuer.AuthorizationAnswer, error) {
	return a.svc.Decide(ctx, r)
}

// now returns the current time as stored.
func (s *Service) now() time.Time { return timestamp.Of(s.Now()) }

// publish queues committed events; what it cannot queue, the sweeper will.
func (s *Service) publish(ctx context.Context, evs []events.Event) {
	if len(evs) == 0 {
		return
	}
	if err := s.Events.Publish(ctx, evs...); err != nil {
		slog.WarnContext(ctx, "publish card events after commit; the sweeper will", "error", err)
	}
}

// usdWallet returns the company's active USD wallet, or
// wallets.ErrNoUSDWallet.
func (s *Service) usdWallet(ctx context.Context, companyID string) (wallets.Wallet, error) {
	w, err := s.Wallets.USDWallet(ctx, companyID)
	switch {
	case errors.Is(err, wallets.ErrUSDWalletNotFound):
		return wallets.Wallet{}, wallets.ErrNoUSDWallet
	case err != nil:
		return wallets.Wallet{}, fmt.Errorf("cards: read the USD wallet: %w", err)
	case !w.IsActive:
		return wallets.Wallet{}, wallets.ErrInactive
	}
	return w, nil
}

// fee returns the company's fee of type typ on amount USD cents.
func (s *Service) fee(ctx context.Context, companyID, typ string, amount int64) (int64, error) {
	q, err := s.Fees.Quote(ctx, companyID, typ, "", wallets.CountryUSD, Currency, amount)
	if err != nil {
		return 0, fmt.Errorf("cards: price %s: %w", typ, err)
	}
	return q.Fee, nil
}

// entry returns a ledger entry of card transaction tx on its USD wallet:
// delta moved on the payout balance, of type typ.
func entry(tx Transaction, typ wallets.Type, delta int64, id string, now time.Time) wallets.Transaction {
	w := wallets.Wallet{ID: tx.WalletID, CompanyID: tx.CompanyID, Currency: Currency}
	return wallets.Completed(id, w, typ, tx.ID, wallets.Payout, delta, now)
}

// credit returns the change of tx's wallet that adds amount to its payout
// balance, and its ledger entry of type typ.
func credit(tx Transaction, typ wallets.Type, amount int64, now time.Time) (wallets.Adjustment, []wallets.Transaction) {
	return wallets.Adjustment{Payout: amount}, []wallets.Transaction{entry(tx, typ, amount, ids.NewV7(now), now)}
}

// card reads a card of the company; a malformed id is ErrNotFound.
func (s *Service) card(ctx context.Context, companyID, id string) (Card, error) {
	if !validID(id) {
		return Card{}, ErrNotFound
	}
	return s.Store.Card(ctx, companyID, id)
}

// definitive reports whether an issuer's error is a final answer (the
// request was refused and nothing was done), not a failure to answer.
func definitive(err error) bool {
	return errors.Is(err, issuer.ErrDeclined) || errors.Is(err, issuer.ErrCardState) ||
		errors.Is(err, issuer.ErrInsufficientFunds) || errors.Is(err, issuer.ErrNotFound)
}
