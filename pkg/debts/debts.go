// Package debts holds the fees a company owes: a card fee that neither the
// card nor the company USD wallet could pay when it was charged (spec §6.5,
// fee collection order card → wallet → debt) is recorded as a debt, and
// every later credit to the USD wallet's payout balance pays the oldest
// pending debts first, in the same DynamoDB transaction as the credit.
package debts

import (
	"errors"
	"strings"
	"time"

	"payments/pkg/events"
	"payments/pkg/money"
	"payments/pkg/timestamp"
	"payments/pkg/wallets"
)

// Errors of this package; the catalogue (pkg/function/errors.go) maps them to HTTP.
var (
	ErrInvalidStatus = errors.New("debts: invalid status")
)

// Currency is the currency of every debt: card fees are USD.
const Currency = "USD"

// Status is a debt's state.
type Status string

// Debt statuses.
const (
	// Pending is a debt not fully recovered yet.
	Pending Status = "PENDING"
	// Recovered is a debt paid in full.
	Recovered Status = "RECOVERED"
)

// Fee types a debt comes from (the fee.* events' fee_type), and
// FeeDispute, what a lost card dispute took back that neither the card nor
// the wallet had.
const (
	FeePaymentFailure = events.FeeTypePaymentFailure
	FeeCrossborder    = events.FeeTypeCrossborder
	FeeDispute        = events.FeeTypeDispute
)

// Debt is a fee the company owes. Amounts are USD cents.
type Debt struct {
	ID        string // UUID v7: debts sort oldest first
	CompanyID string
	// FeeType is FeePaymentFailure, FeeCrossborder or FeeDispute;
	// TransactionID is the card transaction that incurred the fee (for a
	// dispute, the DISPUTE transaction that took the credit back), on
	// CardID of CustomerID.
	FeeType       string
	TransactionID string
	CardID        string
	CustomerID    string
	// Amount is what the fee left owed; Remaining what is still owed.
	Amount      int64
	Remaining   int64
	Status      Status
	CreatedAt   time.Time
	RecoveredAt *time.Time // set once Remaining is 0
}

// Payment is the part of a wallet credit that pays a debt.
type Payment struct {
	// Debt is the debt as read before the payment.
	Debt   Debt
	Amount int64
}

// After returns the debt once p is paid, at now.
func (p Payment) After(now time.Time) Debt {
	d := p.Debt
	d.Remaining -= p.Amount
	if d.Remaining == 0 {
		d.Status, d.RecoveredAt = Recovered, &now
	}
	return d
}

// Plan returns how a credit of credit cents pays the pending debts, oldest
// first: each is paid as far as what is left of the credit allows. Debts
// not pending are skipped.
func Plan(pending []Debt, credit int64) []Payment {
	var out []Payment
	for _, d := range pending {
		if credit <= 0 {
			break
		}
		if d.Status != Pending || d.Remaining <= 0 {
			continue
		}
		pay := min(d.Remaining, credit)
		out = append(out, Payment{Debt: d, Amount: pay})
		credit -= pay
	}
	return out
}

// Entry returns the ledger entry of p on the USD wallet walletID: a FEE
// that takes p.Amount from the payout balance, referencing the debt.
func (p Payment) Entry(id, walletID string, now time.Time) wallets.Transaction {
	w := wallets.Wallet{ID: walletID, CompanyID: p.Debt.CompanyID, Currency: Currency}
	return wallets.Completed(id, w, wallets.TypeFee, p.Debt.ID, wallets.Payout, -p.Amount, now)
}

// Event returns debt.recovered for p, paid from wallet walletID by ledger
// entry entryID.
func (p Payment) Event(walletID, entryID string, now time.Time) (events.Event, error) {
	d := p.After(now)
	return events.Build(d.CompanyID, events.DebtRecoveredData{
		DebtID: d.ID, FeeType: d.FeeType, TransactionID: d.TransactionID, CardID: d.CardID,
		WalletID: walletID, LedgerTransactionID: entryID,
		RecoveredAmount: money.JSON(p.Amount, Currency), RemainingAmount: money.JSON(d.Remaining, Currency),
		Currency: Currency, Status: string(d.Status), RecoveredAt: timestamp.Format(now),
	}, now)
}

// ParseStatus reads a status filter: "" (any), PENDING or RECOVERED, in
// any case.
func ParseStatus(s string) (Status, error) {
	switch st := Status(strings.ToUpper(s)); st {
	case "", Pending, Recovered:
		return st, nil
	}
	return "", ErrInvalidStatus
}
