package wallets

import (
	"context"
	"errors"
	"fmt"
	"time"

	"payments/pkg/ids"
	"payments/pkg/page"
)

// Type is the kind of a wallet transaction (spec §2.6).
type Type string

// Wallet transaction types.
const (
	TypeFund     Type = "FUND"
	TypeWithdraw Type = "WITHDRAW"
	TypeDeposit  Type = "DEPOSIT"
	TypeTransfer Type = "TRANSFER"
	TypeFee      Type = "FEE"
	TypeRefund   Type = "REFUND"
	// TypeBulkPayout is the reservation of a bulk payout batch on one
	// wallet: it holds the total of the batch's items on the wallet in
	// payout_reserved, and each item draws its own total out of it when it
	// settles (EntryDraw), with a WITHDRAW or REFUND entry of its own. It
	// moves no balance itself (its delta is 0) and turns SUCCESS, holding
	// nothing, once every item has settled.
	TypeBulkPayout Type = "BULK_PAYOUT"
)

// Types lists every wallet transaction type.
var Types = []Type{TypeFund, TypeWithdraw, TypeDeposit, TypeTransfer, TypeFee, TypeRefund, TypeBulkPayout}

// Status is where a wallet transaction stands (spec §2.6).
type Status string

// Wallet transaction statuses. SUCCESS and FAILED are terminal.
const (
	StatusPending    Status = "PENDING"
	StatusProcessing Status = "PROCESSING"
	StatusSuccess    Status = "SUCCESS"
	StatusFailed     Status = "FAILED"
)

// Statuses lists every wallet transaction status.
var Statuses = []Status{StatusPending, StatusProcessing, StatusSuccess, StatusFailed}

// Terminal reports whether s is SUCCESS or FAILED.
func (s Status) Terminal() bool { return s == StatusSuccess || s == StatusFailed }

// SubBalance names one of a wallet's two sub-balances.
type SubBalance string

// The sub-balances of a wallet.
const (
	Payin  SubBalance = "payin"
	Payout SubBalance = "payout"
)

// Category is the category of every wallet transaction.
const Category = "WALLET"

// Transaction is a wallet transaction: one entry of the ledger. Amounts are
// minor units of Currency.
//
// Balance and Delta make the ledger checkable: Delta is the signed amount
// the entry has actually applied to the Balance sub-balance of its wallet
// (0 for an entry that has moved nothing yet). Reserved is the amount the
// entry holds in payout_reserved while its status is not terminal (a
// pending payout); it counts for nothing once the entry is terminal.
type Transaction struct {
	ID            string
	CompanyID     string
	WalletID      string
	Amount        int64
	AmountWithFee int64
	FeeAmount     int64
	NetAmount     int64
	Currency      string
	Status        Status
	Type          Type
	Operator      string
	PhoneNumber   string
	Reference     string
	OrderID       string
	// BalanceBefore and BalanceAfter are the Balance sub-balance around
	// the entry; nil while the entry is PENDING.
	BalanceBefore *int64
	BalanceAfter  *int64
	Balance       SubBalance
	Delta         int64
	Reserved      int64
	// PaymentID is the payment transaction the entry belongs to, if any.
	PaymentID   string
	CreatedAt   time.Time
	CompletedAt *time.Time
}

// Open reports whether the entry still holds its Reserved amount: it is
// not terminal.
func (t Transaction) Open() bool { return !t.Status.Terminal() }

// TransactionQuery selects wallet transactions. Zero fields select all.
type TransactionQuery struct {
	WalletID string
	Type     Type
	Status   Status
	Currency string
	// From is inclusive, To exclusive.
	From, To time.Time
}

// TransactionLister reads the ledger a page at a time.
type TransactionLister interface {
	// ListTransactions reads page p of the company's ledger entries that
	// match q, newest first, with the total of those entries (counted
	// unless p continues a cursor) and the position of the page's last
	// entry when more follow. With an empty WalletID the read is strongly
	// consistent. A cursor position outside the list is
	// page.ErrBadCursor.
	ListTransactions(ctx context.Context, companyID string, q TransactionQuery, p page.Request) (page.Result[Transaction], error)
}

// Transaction returns ledger entry id of the company, or
// ErrTransactionNotFound.
func (s *Service) Transaction(ctx context.Context, companyID, id string) (Transaction, error) {
	if !ids.IsUUID(id) {
		return Transaction{}, ErrTransactionNotFound
	}
	return s.store.GetTransaction(ctx, companyID, id)
}

// WalletTransactions returns page p of the ledger of wallet walletID,
// newest first; ErrNotFound when the company has no such wallet.
func (s *Service) WalletTransactions(ctx context.Context, companyID, walletID string, p page.Request) (page.Result[Transaction], error) {
	if _, err := s.Get(ctx, companyID, walletID); err != nil {
		return page.Result[Transaction]{}, err
	}
	return s.Transactions(ctx, companyID, TransactionQuery{WalletID: walletID}, p)
}

// Transactions returns page p of the company's ledger entries that match
// q, newest first.
func (s *Service) Transactions(ctx context.Context, companyID string, q TransactionQuery, p page.Request) (page.Result[Transaction], error) {
	res, err := s.store.ListTransactions(ctx, companyID, q, p)
	if err != nil {
		return page.Result[Transaction]{}, fmt.Errorf("wallets: list transactions: %w", err)
	}
	return res, nil
}

// VerifyLedger checks the ledger invariant of s's store for one company;
// see the package function.
func (s *Service) VerifyLedger(ctx context.Context, companyID string) error {
	return VerifyLedger(ctx, s.store, companyID)
}

// VerifyLedger checks, for every wallet of the company, that
//
//   - payin_balance is the sum of the Delta of its payin entries,
//   - payout_balance is the sum of the Delta of its payout entries,
//   - payout_reserved is the sum of the Reserved of its open entries,
//   - payout_available is payout_balance − payout_reserved,
//   - no balance is negative,
//
// and that every entry belongs to a wallet of the company, in its currency,
// on a named sub-balance. It returns nil or an error wrapping
// ErrLedgerMismatch that lists every violation.
func VerifyLedger(ctx context.Context, r LedgerReader, companyID string) error {
	ws, err := r.ListWallets(ctx, companyID)
	if err != nil {
		return fmt.Errorf("wallets: verify ledger: %w", err)
	}
	entries, err := r.AllTransactions(ctx, companyID)
	if err != nil {
		return fmt.Errorf("wallets: verify ledger: %w", err)
	}
	type sums struct{ payin, payout, reserved int64 }
	byWallet := make(map[string]*sums, len(ws))
	currency := make(map[string]string, len(ws))
	for _, w := range ws {
		byWallet[w.ID] = &sums{}
		currency[w.ID] = w.Currency
	}
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: %s", ErrLedgerMismatch, fmt.Sprintf(format, args...)))
	}
	for _, e := range entries {
		sum, ok := byWallet[e.WalletID]
		if !ok {
			bad("entry %s: wallet %s is not the company's", e.ID, e.WalletID)
			continue
		}
		if e.Currency != currency[e.WalletID] {
			bad("entry %s: currency %s, wallet holds %s", e.ID, e.Currency, currency[e.WalletID])
		}
		switch e.Balance {
		case Payin:
			sum.payin += e.Delta
		case Payout:
			sum.payout += e.Delta
		default:
			bad("entry %s: balance %q is neither payin nor payout", e.ID, e.Balance)
		}
		if e.Open() {
			sum.reserved += e.Reserved
		}
	}
	for _, w := range ws {
		sum := byWallet[w.ID]
		if w.PayinBalance != sum.payin {
			bad("wallet %s: payin_balance %d, entries sum to %d", w.ID, w.PayinBalance, sum.payin)
		}
		if w.PayoutBalance != sum.payout {
			bad("wallet %s: payout_balance %d, entries sum to %d", w.ID, w.PayoutBalance, sum.payout)
		}
		if w.PayoutReserved != sum.reserved {
			bad("wallet %s: payout_reserved %d, open reservations sum to %d", w.ID, w.PayoutReserved, sum.reserved)
		}
		if w.PayoutAvailable != w.PayoutBalance-w.PayoutReserved {
			bad("wallet %s: payout_available %d, payout_balance − payout_reserved is %d",
				w.ID, w.PayoutAvailable, w.PayoutBalance-w.PayoutReserved)
		}
		for name, v := range map[string]int64{
			"payin_balance": w.PayinBalance, "payout_balance": w.PayoutBalance,
			"payout_reserved": w.PayoutReserved, "payout_available": w.PayoutAvailable,
		} {
			if v < 0 {
				bad("wallet %s: %s is negative (%d)", w.ID, name, v)
			}
		}
	}
	return errors.Join(errs...)
}
