package events

import "encoding/json"

// Ours: the money a company moves into or within its wallets (spec §4.23
// names the routes, not their events).
const (
	// WalletTransferCompleted is an internal transfer between the two
	// sub-balances of one wallet.
	WalletTransferCompleted Kind = "wallet.transfer.completed"
	// WalletFundCompleted is a declared bank transfer (a funding)
	// confirmed: the wallet is credited.
	WalletFundCompleted Kind = "wallet.fund.completed"
	// WalletFundFailed is a declared bank transfer rejected: nothing is
	// credited.
	WalletFundFailed Kind = "wallet.fund.failed"
)

// WalletTransferCompletedData is the data of wallet.transfer.completed:
// amount moved from one sub-balance of the wallet to the other, and
// fee_amount taken from the source on top of it. The ledger entries are
// debit_transaction_id and credit_transaction_id (type TRANSFER) and
// fee_transaction_id (type FEE, null without a fee); each has transfer_id
// as its reference.
type WalletTransferCompletedData struct {
	TransferID          string      `json:"transfer_id"`
	WalletID            string      `json:"wallet_id"`
	Currency            string      `json:"currency"`
	Amount              json.Number `json:"amount"`
	FeeAmount           json.Number `json:"fee_amount"`
	From                string      `json:"from"` // payin or payout
	To                  string      `json:"to"`
	DebitTransactionID  string      `json:"debit_transaction_id"`
	CreditTransactionID string      `json:"credit_transaction_id"`
	FeeTransactionID    *string     `json:"fee_transaction_id"`
	CompletedAt         string      `json:"completed_at"`
}

// EventKind returns WalletTransferCompleted.
func (WalletTransferCompletedData) EventKind() Kind { return WalletTransferCompleted }

// WalletFund is the common data of the wallet.fund.* events: a funding (a
// FUND wallet transaction the company declared with POST /wallets/fund) as
// it stands once decided.
type WalletFund struct {
	TransactionID string      `json:"transaction_id"`
	WalletID      string      `json:"wallet_id"`
	Reference     string      `json:"reference"` // the company's
	Balance       string      `json:"balance"`   // payin or payout: the sub-balance credited
	Amount        json.Number `json:"amount"`
	Currency      string      `json:"currency"`
	Status        string      `json:"status"` // SUCCESS or FAILED
	CompletedAt   string      `json:"completed_at"`
}

// WalletFundCompletedData is the data of wallet.fund.completed: the
// funding is confirmed and its amount credited.
type WalletFundCompletedData struct{ WalletFund }

// EventKind returns WalletFundCompleted.
func (WalletFundCompletedData) EventKind() Kind { return WalletFundCompleted }

// WalletFundFailedData is the data of wallet.fund.failed: the funding is
// rejected and nothing is credited.
type WalletFundFailedData struct{ WalletFund }

// EventKind returns WalletFundFailed.
func (WalletFundFailedData) EventKind() Kind { return WalletFundFailed }
