package events

import "encoding/json"

// Wallet movement kinds, ours: money moved between two wallets of a
// company at its exchange rate (docs/fx.md).
const (
	// WalletConversionCompleted is a conversion of POST
	// /partner/wallets/xaf-usd-conversion.
	WalletConversionCompleted Kind = "wallet.conversion.completed"
	// WalletDepositCompleted is a deposit of POST /wallets/deposit.
	WalletDepositCompleted Kind = "wallet.deposit.completed"
)

// WalletConversionCompletedData is the data of wallet.conversion.completed:
// amount, in currency (XAF or XOF), left the payin balance of the source
// wallet, and credited_amount (converted_amount, amount × rate, less
// fee_amount, all USD) reached the payout balance of the company USD
// wallet, in one transaction at the rate version exchange_rate_id.
type WalletConversionCompletedData struct {
	ConversionID    string      `json:"conversion_id"`
	SourceWalletID  string      `json:"source_wallet_id"`
	USDWalletID     string      `json:"usd_wallet_id"`
	Amount          json.Number `json:"amount"`
	Currency        string      `json:"currency"`
	Rate            json.Number `json:"rate"`
	ExchangeRateID  string      `json:"exchange_rate_id"`
	ConvertedAmount json.Number `json:"converted_amount"`
	FeeAmount       json.Number `json:"fee_amount"`
	CreditedAmount  json.Number `json:"credited_amount"`
	CompletedAt     string      `json:"completed_at"`
}

// EventKind returns WalletConversionCompleted.
func (WalletConversionCompletedData) EventKind() Kind { return WalletConversionCompleted }

// WalletDepositCompletedData is the data of wallet.deposit.completed:
// total_amount (amount plus fee_amount, in currency) left the payin balance
// of the source wallet, and converted_amount (amount × rate, in
// destination_currency) reached the payout balance of the destination
// wallet, in one transaction at the rate version exchange_rate_id.
type WalletDepositCompletedData struct {
	DepositID           string      `json:"deposit_id"`
	SourceWalletID      string      `json:"source_wallet_id"`
	DestinationWalletID string      `json:"destination_wallet_id"`
	Amount              json.Number `json:"amount"`
	FeeAmount           json.Number `json:"fee_amount"`
	TotalAmount         json.Number `json:"total_amount"`
	Currency            string      `json:"currency"`
	Rate                json.Number `json:"rate"`
	ExchangeRateID      string      `json:"exchange_rate_id"`
	ConvertedAmount     json.Number `json:"converted_amount"`
	DestinationCurrency string      `json:"destination_currency"`
	CompletedAt         string      `json:"completed_at"`
}

// EventKind returns WalletDepositCompleted.
func (WalletDepositCompletedData) EventKind() Kind { return WalletDepositCompleted }
