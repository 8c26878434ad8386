// Package wallets holds a company's wallets, one per (currency, country)
// pair of the payment guideline, and their ledger: the wallet transactions
// that explain every change of a balance.
//
// A wallet has two sub-balances, payin (collected from end users) and payout
// (available to disburse). Of the payout balance, payout_reserved is held by
// payouts in flight; payout_available = payout_balance − payout_reserved is
// stored with the wallet so that a DynamoDB condition can test it. Every
// change to a balance writes a ledger entry in the same DynamoDB transaction,
// and VerifyLedger checks that the balances equal the sums of their entries.
package wallets

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"payments/pkg/companies"
	"payments/pkg/countries"
	"payments/pkg/field"
	"payments/pkg/guideline"
	"payments/pkg/ids"
	"payments/pkg/providers/bank"
	"payments/pkg/timestamp"
)

// Errors of this package; the catalogue (pkg/function/errors.go) maps them to HTTP.
var (
	// ErrNotFound is a wallet that does not exist for the caller's company.
	ErrNotFound = errors.New("wallets: not found")
	// ErrUSDWalletNotFound is a read of the company's USD wallet, for a
	// company without one.
	ErrUSDWalletNotFound = errors.New("wallets: USD wallet not found")
	// ErrNoUSDWallet is a movement that needs the company's USD wallet (a
	// card's, a conversion's), for a company without one.
	ErrNoUSDWallet = errors.New("wallets: no USD wallet")
	// ErrTransactionNotFound is a wallet transaction that does not exist
	// for the caller's company.
	ErrTransactionNotFound = errors.New("wallets: transaction not found")
	// ErrExists is a second wallet for a (currency, country) pair.
	ErrExists = errors.New("wallets: wallet for this currency and country already exists")
	// ErrInvalidCombination is a (country, currency) pair the payment
	// guideline does not hold.
	ErrInvalidCombination = errors.New("wallets: invalid country and currency combination")
	// ErrDuplicateReference is a credit reference the company has already
	// used for another credit (another wallet, sub-balance or amount).
	ErrDuplicateReference = errors.New("wallets: reference used by another credit")
	// ErrCreditDisabled is a sandbox credit asked of a production-mode
	// deployment that does not allow it (ADMIN_CREDIT_IN_PRODUCTION).
	ErrCreditDisabled = errors.New("wallets: sandbox credit is disabled in production mode")
	// ErrInactive is a money movement on a wallet whose is_active is false.
	ErrInactive = errors.New("wallets: wallet is not active")
	// ErrInsufficientBalance is a debit larger than what the wallet has
	// available, fees included.
	ErrInsufficientBalance = errors.New("wallets: insufficient balance including fees")
	// ErrInsufficientWalletBalance is an internal transfer whose source
	// sub-balance does not cover its amount and fee: it answers as every
	// move between the company's own balances that falls short
	// (conversions, deposits, card funding), where ErrInsufficientBalance
	// answers a payout.
	ErrInsufficientWalletBalance = errors.New("wallets: insufficient wallet balance")
	// ErrLedgerMismatch is a broken ledger invariant (see VerifyLedger).
	ErrLedgerMismatch = errors.New("wallets: ledger does not match balances")
)

// CurrencyUSD is the currency of the company USD wallet, held under country
// CountryUSD: each company has at most one.
const (
	CurrencyUSD = "USD"
	CountryUSD  = "US"
)

// Wallet is a company's wallet. Amounts are minor units of Currency.
type Wallet struct {
	ID               string
	CompanyID        string
	Currency         string
	Country          string
	CountryISOCode   string
	CountryPhoneCode string
	PayinBalance     int64
	PayoutBalance    int64
	PayoutReserved   int64
	// PayoutAvailable is always PayoutBalance − PayoutReserved.
	PayoutAvailable int64
	IsActive        bool
	// Version counts the writes to the wallet.
	Version   int64
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Balance returns the total of the wallet: payin plus payout.
func (w Wallet) Balance() int64 { return w.PayinBalance + w.PayoutBalance }

// SubBalance returns the sub-balance named by b.
func (w Wallet) SubBalance(b SubBalance) int64 {
	if b == Payin {
		return w.PayinBalance
	}
	return w.PayoutBalance
}

// Companies answers whether a company may create wallets.
type Companies interface {
	// KYBApproved reports whether company companyID has KYB status
	// APPROVED. An unknown company is not approved.
	KYBApproved(ctx context.Context, companyID string) (bool, error)
}

// LedgerReader is what VerifyLedger reads.
type LedgerReader interface {
	// ListWallets returns every wallet of the company, strongly consistent.
	ListWallets(ctx context.Context, companyID string) ([]Wallet, error)
	// AllTransactions returns every ledger entry of the company, strongly
	// consistent. Only the invariant reads a whole ledger: the routes read
	// pages (TransactionLister).
	AllTransactions(ctx context.Context, companyID string) ([]Transaction, error)
}

// Store is the persistence the service needs.
type Store interface {
	LedgerReader
	TransactionLister
	MoveStore
	FundStore
	// CreateWallet writes a new wallet together with the claim of its
	// (currency, country) pair and its wallet-id lookup; ErrExists when the
	// pair is taken.
	CreateWallet(ctx context.Context, w Wallet) error
	// GetWallet reads a wallet of the company, strongly consistent;
	// ErrNotFound if absent.
	GetWallet(ctx context.Context, companyID, walletID string) (Wallet, error)
	// WalletCompany returns the id of the company that owns walletID, from
	// the lookup item; ErrNotFound if absent. Only the operator console
	// uses it.
	WalletCompany(ctx context.Context, walletID string) (string, error)
	// GetTransaction reads a ledger entry of the company;
	// ErrTransactionNotFound if absent.
	GetTransaction(ctx context.Context, companyID, id string) (Transaction, error)
	// ApplyChange applies c in one transaction and returns the wallet after
	// it and the entry as written: ErrNotFound when the wallet does not
	// exist, ErrInsufficientBalance when a balance would go below 0,
	// ErrDuplicateReference when c.Reference is already claimed.
	ApplyChange(ctx context.Context, c Change) (Wallet, Transaction, error)
	// CreditByReference returns the credit that claimed reference for the
	// company; ErrTransactionNotFound when none did.
	CreditByReference(ctx context.Context, companyID, reference string) (CreditClaim, error)
}

// Adjustment is a signed change of a wallet's balances, in minor units.
// payout_available moves by Payout − Reserved.
type Adjustment struct {
	Payin    int64
	Payout   int64
	Reserved int64
}

// Available returns the change of payout_available.
func (a Adjustment) Available() int64 { return a.Payout - a.Reserved }

// Of returns the change of sub-balance b.
func (a Adjustment) Of(b SubBalance) int64 {
	if b == Payin {
		return a.Payin
	}
	return a.Payout
}

// Change is one atomic change of a wallet: its balances adjusted and its
// ledger entry written together. The store sets the entry's BalanceBefore
// and BalanceAfter (its Balance sub-balance before and after Adjust) from
// the wallet as read just before the write.
type Change struct {
	CompanyID string
	WalletID  string
	Adjust    Adjustment
	// Entry is the ledger entry to write; it must be new.
	Entry Transaction
	// Reference, when not empty, is claimed for the company in the same
	// transaction, so that it can be used once.
	Reference string
	// Now is written as the wallet's updated_at.
	Now time.Time
}

// CreditClaim is what a sandbox credit's reference claims: the credit's
// wallet, sub-balance, amount and ledger entry.
type CreditClaim struct {
	Reference     string
	WalletID      string
	Balance       SubBalance
	Amount        int64
	TransactionID string
}

// Service manages wallets and reads their ledger.
type Service struct {
	store     Store
	companies Companies
	guideline *guideline.Guideline
	// Now returns the current time; tests may replace it.
	Now func() time.Time
	// CreditEnabled admits the operator console's sandbox credits
	// (Deps.CreditEnabled). Off, Credit is ErrCreditDisabled.
	CreditEnabled bool
	// Fees prices internal transfers.
	Fees FeeQuoter
	// Events publishes the events of transfers and fundings after their
	// commit; nil leaves them to the sweeper.
	Events Publisher
	// Bank is told of each funding declared and answers CheckFunding; nil
	// for bank.None, which leaves fundings to the operator console.
	Bank bank.Bank
}

// Deps are what a Service is built from; NewService refuses a Deps without
// one of Store, Companies, Fees, Events or Bank.
type Deps struct {
	Store Store
	// Companies answers whether a company's KYB is approved.
	Companies Companies
	// Fees prices internal transfers.
	Fees FeeQuoter
	// Events publishes the events of transfers and fundings after their
	// commit.
	Events Publisher
	// Bank is told of each funding declared and answers CheckFunding: the
	// sandbox bank in sandbox mode; bank.None (production mode, no bank
	// adapter yet) leaves fundings to the operator console.
	Bank bank.Bank
	// CreditEnabled admits the operator console's sandbox credits: in
	// sandbox mode, or in production mode with
	// ADMIN_CREDIT_IN_PRODUCTION=true.
	CreditEnabled bool
}

// NewService returns a Service over d, checking pairs against the
// embedded payment guideline, or an error naming the dependency d lacks.
func NewService(d Deps) (*Service, error) {
	switch {
	case d.Store == nil:
		return nil, errors.New("wallets: no Store to build the service")
	case d.Companies == nil:
		return nil, errors.New("wallets: no Companies to build the service")
	case d.Fees == nil:
		return nil, errors.New("wallets: no Fees to build the service")
	case d.Events == nil:
		return nil, errors.New("wallets: no Events publisher to build the service")
	case d.Bank == nil:
		return nil, errors.New("wallets: no Bank to build the service (bank.None where there is no bank)")
	}
	s := newService(d.Store, d.Companies)
	s.Fees, s.Events, s.Bank, s.CreditEnabled = d.Fees, d.Events, d.Bank, d.CreditEnabled
	if d.Bank == bank.None {
		s.Bank = nil
	}
	return s, nil
}

// newService returns a Service over store that moves no money.
func newService(store Store, companies Companies) *Service {
	return &Service{
		store:     store,
		companies: companies,
		guideline: guideline.Default(),
		Now:       time.Now,
	}
}

// now returns the current time in UTC at millisecond precision, the
// precision timestamps are stored and shown with.
func (s *Service) now() time.Time { return timestamp.Of(s.Now()) }

// Time returns the present as the service records it (timestamp.Of).
func (s *Service) Time() time.Time { return s.now() }

// CreateInput is the body of POST /wallets.
type CreateInput struct {
	Currency         string `json:"currency"`
	Country          string `json:"country"`
	CountryISOCode   string `json:"country_iso_code"`
	CountryPhoneCode string `json:"country_phone_code"`
}

var (
	currencyPattern = regexp.MustCompile(`^[A-Z]{3}$`)
)

// Create opens a wallet for company companyID. The order of the checks is:
// the input alone (required fields, formats, lengths; 400 naming the field),
// then KYB (403), then the guideline (400 INVALID_COMBINATION, then the dial
// code of the country), then uniqueness of the pair (400 WALLET_EXISTS).
// The currency is forced to CDF when the country is CD.
func (s *Service) Create(ctx context.Context, companyID string, in CreateInput) (Wallet, error) {
	in = CreateInput{
		Currency:         strings.TrimSpace(in.Currency),
		Country:          strings.TrimSpace(in.Country),
		CountryISOCode:   strings.TrimSpace(in.CountryISOCode),
		CountryPhoneCode: strings.TrimSpace(in.CountryPhoneCode),
	}
	for _, f := range []struct{ name, value string }{
		{"currency", in.Currency},
		{"country", in.Country},
		{"country_iso_code", in.CountryISOCode},
		{"country_phone_code", in.CountryPhoneCode},
	} {
		if f.value == "" {
			return Wallet{}, field.Invalid(f.name, "is required")
		}
	}
	if !countries.IsAlpha2(in.CountryISOCode) {
		return Wallet{}, field.Invalid("country_iso_code", countries.Alpha2Rule)
	}
	if in.CountryISOCode == "CD" {
		in.Currency = "CDF"
	}
	if !currencyPattern.MatchString(in.Currency) {
		return Wallet{}, field.Invalid("currency", "must be an ISO 4217 code of three capital letters")
	}
	if !countries.IsDialCode(in.CountryPhoneCode) {
		return Wallet{}, field.Invalid("country_phone_code", countries.DialCodeRule)
	}
	if n := utf8.RuneCountInString(in.Country); n < 2 || n > 255 {
		return Wallet{}, field.Invalid("country", "must be 2 to 255 characters")
	}
	ok, err := s.companies.KYBApproved(ctx, companyID)
	if err != nil {
		return Wallet{}, fmt.Errorf("wallets: check KYB: %w", err)
	}
	if !ok {
		return Wallet{}, companies.ErrKYBNotApproved
	}
	row, ok := s.guideline.Lookup(in.CountryISOCode, in.Currency)
	if !ok {
		return Wallet{}, ErrInvalidCombination
	}
	if in.CountryPhoneCode != row.CountryPhoneCode {
		return Wallet{}, field.Invalid("country_phone_code",
			fmt.Sprintf("must be %s for %s", row.CountryPhoneCode, row.CountryISOCode))
	}
	now := s.now()
	w := Wallet{
		ID:               uuid.NewString(),
		CompanyID:        companyID,
		Currency:         in.Currency,
		Country:          in.Country,
		CountryISOCode:   in.CountryISOCode,
		CountryPhoneCode: in.CountryPhoneCode,
		IsActive:         true,
		Version:          1,
		CreatedAt:        now,
		UpdatedAt:        now,
	}
	if err := s.store.CreateWallet(ctx, w); err != nil {
		if errors.Is(err, ErrExists) {
			return Wallet{}, err
		}
		return Wallet{}, fmt.Errorf("wallets: create: %w", err)
	}
	return w, nil
}

// List returns every wallet of the company, oldest first.
func (s *Service) List(ctx context.Context, companyID string) ([]Wallet, error) {
	ws, err := s.store.ListWallets(ctx, companyID)
	if err != nil {
		return nil, fmt.Errorf("wallets: list: %w", err)
	}
	slices.SortFunc(ws, func(a, b Wallet) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return ws, nil
}

// Get returns wallet walletID of the company, or ErrNotFound.
func (s *Service) Get(ctx context.Context, companyID, walletID string) (Wallet, error) {
	if !ids.IsUUID(walletID) {
		return Wallet{}, ErrNotFound
	}
	return s.store.GetWallet(ctx, companyID, walletID)
}

// USDWallet returns the company USD wallet, or ErrUSDWalletNotFound.
func (s *Service) USDWallet(ctx context.Context, companyID string) (Wallet, error) {
	ws, err := s.List(ctx, companyID)
	if err != nil {
		return Wallet{}, err
	}
	for _, w := range ws {
		if w.Currency == CurrencyUSD && w.CountryISOCode == CountryUSD {
			return w, nil
		}
	}
	return Wallet{}, ErrUSDWalletNotFound
}

// Guideline returns the payment guideline the service checks pairs against.
func (s *Service) Guideline() *guideline.Guideline { return s.guideline }
