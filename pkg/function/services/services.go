// Package services builds, over one table, the domain services that more
// than one function serves: the token guard, the providers of the mode,
// wallets, payments, cards and the Idempotency-Key middleware. Each is
// built here once, by its package's constructor, which refuses to build
// without a dependency it needs; a function that needs less takes a
// smaller service (payments.Admin, cards.Applier, cards.Manager,
// customers.Cardholders, customers.Directory, wallets.Balances). It calls
// DynamoDB through pkg/store and nothing else: a queue, the card vault's
// key service or a bucket is given by the function, which alone builds the
// client it needs, and so are the function's caches (base.Caches) and its
// clock.
package services

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"payments/pkg/bulk"
	"payments/pkg/cache"
	"payments/pkg/cards"
	"payments/pkg/companies"
	"payments/pkg/companies/companieshttp"
	"payments/pkg/customers"
	"payments/pkg/fees"
	"payments/pkg/fees/feeshttp"
	"payments/pkg/function"
	"payments/pkg/fx"
	"payments/pkg/httpapi"
	"payments/pkg/idempotency/idempotencyhttp"
	"payments/pkg/outbox"
	"payments/pkg/payments"
	"payments/pkg/payments/paymentshttp"
	"payments/pkg/providers"
	"payments/pkg/providers/bank"
	"payments/pkg/providers/issuer"
	"payments/pkg/providers/issuer/issuerdb"
	"payments/pkg/providers/issuer/issuersandbox"
	"payments/pkg/providers/kyc"
	"payments/pkg/providers/kyc/kycdb"
	"payments/pkg/providers/operator"
	"payments/pkg/providers/operator/operatordb"
	"payments/pkg/reconcile"
	"payments/pkg/store"
	"payments/pkg/store/customerstore"
	"payments/pkg/store/moneystore"
	"payments/pkg/vault"
	"payments/pkg/wallets"
	"payments/pkg/wallets/walletshttp"
)

// PayoutErrors are the answers to the errors of a single payout: what a
// bulk batch's item is rejected with.
var PayoutErrors = function.Catalogue(paymentshttp.Errors, walletshttp.Errors, feeshttp.Errors, companieshttp.Errors, idempotencyhttp.Errors)

// NoAdapterNotice is what start-up says (function.StartupNotice) in a mode
// that lacks some providers' adapters.
const NoAdapterNotice = "providers without an adapter"

// Providers returns the providers of cfg's mode (providers.ForMode): the
// simulated ones keep their records in db, apart from ours (SandboxStores,
// built in sandbox mode alone), and work with what with gives them besides
// (providers.Deps), which a function leaves nil where it never asks for it. A mode without a provider's adapter
// refuses what needs it, or leaves it to the console, and says so once at
// start-up (NoAdapterNotice, at INFO: it is how that mode works); the
// operator's adapter is built for the functions that read the aggregator's
// settings, which do not start in production mode without them
// (function.ConfigFromEnv).
func Providers(cfg function.Config, db *store.DB, with providers.Deps) (providers.Providers, error) {
	with.Sandbox = func() providers.SandboxStores { return SandboxStores(db) }
	if cfg.OperatorAPIToken != "" { // production mode, a function that calls the aggregator
		with.Aggregator = providers.Aggregator{BaseURL: cfg.OperatorBaseURL, Token: cfg.OperatorAPIToken}
	}
	p, err := providers.ForMode(cfg.Mode, with)
	if err != nil {
		return providers.Providers{}, fmt.Errorf("%w: %v", function.ErrConfig, err)
	}
	if !p.Sandbox {
		var none []string
		for _, k := range []struct {
			what string
			none bool
		}{
			{"KYC verifier: enrolments wait for the console's review", p.KYC == kyc.None},
			{"bank: the console decides fundings", p.Bank == bank.None},
		} {
			if k.none {
				none = append(none, k.what)
			}
		}
		if len(none) > 0 {
			function.StartupNotice(NoAdapterNotice, "mode", cfg.Mode, "none", strings.Join(none, "; "))
		}
	}
	return p, nil
}

// sandboxBuilds counts the builds of the simulated providers' records
// (SandboxStores), for the test that production mode builds none.
var sandboxBuilds atomic.Int64

// SandboxStores returns the simulated providers' records in db, under
// their own keys: only what runs the simulated providers builds them
// (providers.ForMode in sandbox mode, the sandbox card network).
func SandboxStores(db *store.DB) providers.SandboxStores {
	sandboxBuilds.Add(1)
	return providers.SandboxStores{
		Orders:        operatordb.New(db.DB),
		Cards:         issuerdb.New(db.DB),
		Verifications: kycdb.New(db.DB),
	}
}

// Operator returns the operator of p, for a function that cannot run
// without one (the payout worker): a mode without one is a configuration
// error rather than a silent sandbox.
func Operator(cfg function.Config, p providers.Providers) (operator.Gateway, error) {
	if p.Operator == operator.None {
		return nil, fmt.Errorf("%w: MODE %q has no operator adapter: set OPERATOR_BASE_URL and OPERATOR_API_TOKEN_ARN (the aggregator's API)",
			function.ErrConfig, cfg.Mode)
	}
	return p.Operator, nil
}

// Events returns the publisher of the outbox events of db on the webhooks
// queue.
func Events(db *store.DB, webhooks function.Queue) *outbox.Publisher {
	return outbox.NewPublisher(store.NewOutbox(db), webhooks)
}

// Wallets returns the wallets service over db, checking KYB through the
// companies in the same table, pricing internal transfers by the company's
// fee schedule, publishing its events (and the conversions' and deposits')
// on the webhooks queue, and telling p's bank of the fundings declared.
// It admits the console's sandbox credits in sandbox mode, and in
// production mode with ADMIN_CREDIT_IN_PRODUCTION=true.
func Wallets(cfg function.Config, db *store.DB, p providers.Providers, webhooks function.Queue) (*wallets.Service, error) {
	return wallets.NewService(wallets.Deps{
		Store:         moneystore.NewWallets(db),
		Companies:     KYBChecker{companies.NewService(store.NewCompanies(db), nil)},
		Fees:          fees.NewService(store.NewFees(db)),
		Events:        Events(db, webhooks),
		Bank:          p.Bank,
		CreditEnabled: p.Sandbox || cfg.AdminCreditInProduction,
	})
}

// Balances returns the wallets' balances over db: what the payments
// function and the cards service read of wallets.
func Balances(db *store.DB) (*wallets.Balances, error) {
	return wallets.NewBalances(moneystore.NewWallets(db))
}

// FX returns the exchange rates service over db, pricing conversions with
// the companies' fee schedules.
func FX(db *store.DB) *fx.Service {
	return fx.NewService(moneystore.NewRates(db), fees.NewService(store.NewFees(db)))
}

// Converter returns the converter of conversions and deposits between the
// wallets of ws, at the rates of FX(db), publishing their events as ws
// does.
func Converter(db *store.DB, ws *wallets.Service) (*fx.Converter, error) {
	return fx.NewConverter(FX(db), ws, moneystore.NewConversions(db), ws.Events)
}

// KYBChecker answers wallets.Companies and customers.Companies from the
// companies service.
type KYBChecker struct{ Companies *companies.Service }

// KYBApproved reports whether the company's KYB status is APPROVED; an
// unknown company is not approved.
func (k KYBChecker) KYBApproved(ctx context.Context, companyID string) (bool, error) {
	c, err := k.Companies.Get(ctx, companyID)
	if errors.Is(err, companies.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return c.KYBStatus == companies.KYBApproved, nil
}

// Payments returns the payments service over db of the payments
// function, the payout worker and the sweeper: gw is the operator, jobs
// the payouts queue, bulkJobs the bulk payouts queue (the messages of the
// items of bulk batches), and events publishes the payments' events after
// commit, on the clock now. Fee schedules are read through feeCache (the
// function's, Caches.Fees). The final transitions of bulk batches' items
// complete their batches through a bulk.Completer over db, publishing on
// events too: it needs neither the payments service nor the bulk service
// (Bulk), which is built over this one after it.
func Payments(cfg function.Config, db *store.DB, gw operator.Gateway, jobs, bulkJobs function.Queue, events payments.Publisher,
	feeCache *cache.Cache[fees.Schedule], now func() time.Time) (*payments.Service, error) {
	batches, err := bulk.NewCompleter(moneystore.NewBulk(db), events, now)
	if err != nil {
		return nil, err
	}
	return payments.NewService(payments.Deps{
		Store:    moneystore.NewPayments(db),
		Wallets:  moneystore.NewWallets(db),
		Fees:     fees.NewService(fees.CachedStore(store.NewFees(db), feeCache)),
		Gateway:  gw,
		Jobs:     jobs,
		BulkJobs: bulkJobs,
		Events:   events,
		Deadline: cfg.PaymentDeadline,
		Batches:  batches,
		Now:      now,
	})
}

// Catalogue gives the error answer of an error (httpapi.Catalogue): the
// function's error catalogue.
type Catalogue interface {
	Body(err error) (httpapi.ErrorBody, bool)
}

// Bulk returns the bulk payout service over db for pays, on the clock now:
// chunk jobs go to jobs (the bulk payouts queue), the batches' events to
// events. An item is rejected with the field, code and message the single
// payout's answer would have in errs, the function's error catalogue. The
// batches complete as pays's Batches (Payments) complete them.
func Bulk(db *store.DB, pays *payments.Service, jobs function.Queue, events payments.Publisher, errs Catalogue, now func() time.Time) (*bulk.Service, error) {
	return bulk.NewService(bulk.Deps{
		Store: moneystore.NewBulk(db), Payouts: pays, Jobs: jobs, Events: events, Describer: rejections{errs}, Now: now,
	})
}

// rejections describes an item's refusal by an error catalogue
// (bulk.Describer): a refusal is an error the catalogue knows with a
// status below 500.
type rejections struct{ errs Catalogue }

// Describe returns the rejection of an item refused with err.
func (r rejections) Describe(err error) (bulk.Rejection, bool) {
	body, known := r.errs.Body(err)
	return bulk.Rejection{Field: body.Field, Code: body.Code, Message: body.Message}, known && body.StatusCode < 500
}

// PaymentsAdmin returns the operator console's payments service over db,
// publishing the events of the payments it resolves on the webhooks
// queue.
func PaymentsAdmin(db *store.DB, webhooks function.Queue) (*payments.Admin, error) {
	return payments.NewAdmin(moneystore.NewPayments(db), Events(db, webhooks))
}

// Cards returns the cards service over db, sealing with v, publishing on
// the webhooks queue, with the card issuer of p: the sandbox issuer in
// sandbox mode; in production mode Stripe Issuing, for a function that
// built it (pkg/function/cardissuer), else issuer.None, with which every
// change is refused (cards.ErrNoIssuer) and reads work. reveals is the
// companies' reveal quota, nil for a function that reveals nothing. Fee
// schedules are read through feeCache (the function's, Caches.Fees); now is
// its clock.
func Cards(db *store.DB, p providers.Providers, v *vault.Vault, webhooks function.Queue, reveals cards.RevealLimiter,
	feeCache *cache.Cache[fees.Schedule], now func() time.Time) (*cards.Service, error) {
	events := Events(db, webhooks)
	holders, err := customers.NewCardholders(customerstore.NewCustomers(db), p.Issuer, events)
	if err != nil {
		return nil, err
	}
	balances, err := Balances(db)
	if err != nil {
		return nil, err
	}
	return cards.NewService(cards.Deps{
		Store:       moneystore.NewCards(db),
		Customers:   holders,
		Wallets:     balances,
		Companies:   cardSlots{companies.NewService(store.NewCompanies(db), nil)},
		Fees:        fees.NewService(fees.CachedStore(store.NewFees(db), feeCache)),
		Issuer:      p.Issuer,
		Vault:       v,
		Events:      events,
		RevealQuota: reveals,
		Now:         now,
	})
}

// CardManager returns the cards' manager over db (cards.Manager: read,
// freeze, unfreeze), telling the card issuer of p: the company dashboard's.
// It is built without the card vault, so that nothing over it can reveal a
// card number, and without the wallets, the fees or a queue.
func CardManager(db *store.DB, p providers.Providers) (*cards.Manager, error) {
	dir, err := CustomerDirectory(db)
	if err != nil {
		return nil, err
	}
	return cards.NewManager(cards.ManagerDeps{
		Store:     moneystore.NewCards(db),
		Customers: dir,
		Companies: cardSlots{companies.NewService(store.NewCompanies(db), nil)},
		Issuer:    p.Issuer,
	})
}

// CustomerDirectory returns the customers' directory over db
// (customers.Directory: read, never enrolled nor synced).
func CustomerDirectory(db *store.DB) (*customers.Directory, error) {
	return customers.NewDirectory(customerstore.NewCustomers(db))
}

// CardApplier returns the applier of the card issuer's notifications over
// db, telling p's issuer what each moved and publishing on the webhooks
// queue: the card-worker's service. Fee schedules are read through
// feeCache (the function's, Caches.Fees).
func CardApplier(db *store.DB, p providers.Providers, webhooks function.Queue, feeCache *cache.Cache[fees.Schedule]) (*cards.Applier, error) {
	return cardApplier(db, p.Issuer, Events(db, webhooks), feeCache)
}

// CardDecider returns the decider of the network's authorization requests
// over db (cards.Applier.Decide), the issuer-authorizations function's: it
// tells no issuer anything, and its decisions' events wait in the outbox
// (outbox.Deferred) for the network's advice, which the card-worker
// applies, to publish them. Fee schedules are read through feeCache (the
// function's, Caches.Fees).
func CardDecider(db *store.DB, feeCache *cache.Cache[fees.Schedule]) (*cards.Applier, error) {
	return cardApplier(db, issuer.None, outbox.Deferred{}, feeCache)
}

// cardApplier returns the applier over db telling iss and publishing with
// events, reading fee schedules through feeCache.
func cardApplier(db *store.DB, iss issuer.Issuer, events cards.Publisher, feeCache *cache.Cache[fees.Schedule]) (*cards.Applier, error) {
	balances, err := Balances(db)
	if err != nil {
		return nil, err
	}
	return cards.NewApplier(cards.ApplierDeps{
		Store:   moneystore.NewCards(db),
		Wallets: balances,
		Fees:    fees.NewService(fees.CachedStore(store.NewFees(db), feeCache)),
		Issuer:  iss,
		Events:  events,
	})
}

// CardNetwork returns the sandbox card network of a sandbox deployment,
// as far as it reports to us: it delivers its notifications through
// deliver (issuerreceivers.Notifications' Deliver: the handler of POST
// /issuer/webhooks, in process, onto the issuer-events queue), and
// keeps each in db's sandbox issuer partitions until it is acknowledged
// (issuersandbox.Network.Redeliver), and logs what it moved there, which
// the sandbox issuer's statements list (the reconciliation's). It asks for
// each authorization's decision through ask, waiting deadline
// (issuersandbox.DefaultDecisionDeadline when 0): the card-network
// function gives it the handler of POST /issuer/authorizations; the
// sweeper, which only redelivers, gives none.
func CardNetwork(db *store.DB, ask func(ctx context.Context, body []byte) (issuer.AuthorizationAnswer, error),
	deliver func(ctx context.Context, body []byte) error, deadline time.Duration) *issuersandbox.Network {
	sandboxBuilds.Add(1)
	st := issuerdb.New(db.DB)
	return &issuersandbox.Network{Ask: ask, Deliver: deliver, Deadline: deadline,
		Notices: st, Decisions: st, Statements: st, Now: time.Now}
}

// cardSlots answers cards.Companies from the companies service.
type cardSlots struct{ companies *companies.Service }

// CardSlots returns the company's card_slots.
func (c cardSlots) CardSlots(ctx context.Context, companyID string) (int, error) {
	co, err := c.companies.Get(ctx, companyID)
	if err != nil {
		return 0, err
	}
	return co.CardSlots, nil
}

// Reconciler returns the reconciliation of the providers of p whose
// records it can read (pkg/reconcile): the card issuer's when it lists
// them (issuer.Statements: Stripe Issuing, or the sandbox network's log),
// what we missed applied by applier; the operator's when it answers for
// each payment (operator.Records: pawaPay, or the sandbox operator). Its
// reports are kept in db; now is its clock.
func Reconciler(cfg function.Config, db *store.DB, p providers.Providers, applier reconcile.Applier, now func() time.Time) (*reconcile.Service, error) {
	d := reconcile.Deps{Store: moneystore.NewReconciliations(db), FirstWindow: cfg.ReconciliationFirstWindow, Now: now}
	if st, ok := p.Issuer.(issuer.Statements); ok {
		d.Issuer, d.Cards, d.Applier = st, moneystore.NewCards(db), applier
	}
	if rec, ok := p.Operator.(operator.Records); ok {
		d.Operator, d.Payments = rec, moneystore.NewPayments(db)
	}
	return reconcile.NewService(d)
}
