package schema

import "strconv"

// Transaction item names. The dynamo toolkit names each item of a
// transaction (dynamo.Txn.Add), and a cancellation's reasons are read back
// by those names (dynamo.Cancellation.Failed). These are the names more
// than one write shares; a write's own items are named where it builds
// them.
const (
	// WalletItem is the wallet adjustment of a posting's first leg (see
	// WalletLegItem), and a new wallet.
	WalletItem = "wallet"
	// CardItem is a card, updated or created.
	CardItem = "card"
	// CardTxItem is a card transaction.
	CardTxItem = "tx"
	// EventItem is the event a write records.
	EventItem = "event"
	// EventClaimItem is the claim of an issuer notification applied.
	EventClaimItem = "event_claim"
	// BatchItem is a bulk payout batch.
	BatchItem = "batch"
	// RateItem is a company's rate of a currency pair.
	RateItem = "rate"
	// CompanyItem is a company's own record.
	CompanyItem = "company"
	// ReferenceItem is the claim of a reference (a funding's, a credit's).
	ReferenceItem = "reference"
	// DebtItem is a new pending debt's record, and, numbered (Nth), the
	// record of a debt a posting pays.
	DebtItem = "debt"
	// PendingDebtItem is a new pending debt's marker.
	PendingDebtItem = "debt_pending"
)

// The numbered items of a posting, named Nth(name, n) across the posting:
// its new ledger entries, its entry updates, its draws, the FEE entries
// and the events of the debts it pays, and the markers of those debts.
const (
	EntryItems     = "entry"
	UpdatedItems   = "updated"
	DrawItems      = "draw"
	FeeItems       = "fee"
	DebtEventItems = "debtevent"
	DebtMarkItems  = "debtmark"
)

// Nth returns the name of the n-th item named name of a transaction
// ("updated0", "debt1").
func Nth(name string, n int) string { return name + strconv.Itoa(n) }

// WalletLegItem names the wallet adjustment of leg i of a posting:
// WalletItem, then "wallet1", "wallet2"….
func WalletLegItem(i int) string {
	if i == 0 {
		return WalletItem
	}
	return Nth(WalletItem, i)
}
