package walletshttp

import (
	"encoding/json"

	"payments/pkg/money"
	"payments/pkg/timestamp"
	"payments/pkg/wallets"
)

// WalletResponse is a Wallet as clients see it (spec §2.3), with our
// additions payout_reserved and payout_available. Amounts are major units.
type WalletResponse struct {
	ID               string      `json:"id"`
	CompanyID        string      `json:"company_id"`
	Currency         string      `json:"currency"`
	Country          string      `json:"country"`
	CountryISOCode   string      `json:"country_iso_code"`
	CountryPhoneCode string      `json:"country_phone_code"`
	Balance          json.Number `json:"balance"`
	PayinBalance     json.Number `json:"payin_balance"`
	PayoutBalance    json.Number `json:"payout_balance"`
	PayoutReserved   json.Number `json:"payout_reserved"`
	PayoutAvailable  json.Number `json:"payout_available"`
	IsActive         bool        `json:"is_active"`
	CreatedAt        string      `json:"created_at"`
	UpdatedAt        string      `json:"updated_at"`
}

// NewWalletResponse returns w as clients see it.
func NewWalletResponse(w wallets.Wallet) WalletResponse {
	return WalletResponse{
		ID:               w.ID,
		CompanyID:        w.CompanyID,
		Currency:         w.Currency,
		Country:          w.Country,
		CountryISOCode:   w.CountryISOCode,
		CountryPhoneCode: w.CountryPhoneCode,
		Balance:          money.JSON(w.Balance(), w.Currency),
		PayinBalance:     money.JSON(w.PayinBalance, w.Currency),
		PayoutBalance:    money.JSON(w.PayoutBalance, w.Currency),
		PayoutReserved:   money.JSON(w.PayoutReserved, w.Currency),
		PayoutAvailable:  money.JSON(w.PayoutAvailable, w.Currency),
		IsActive:         w.IsActive,
		CreatedAt:        timestamp.Format(w.CreatedAt),
		UpdatedAt:        timestamp.Format(w.UpdatedAt),
	}
}

// partnerWallet is an item of GET /partner/wallets (spec §4.7).
type partnerWallet struct {
	ID            string      `json:"id"`
	Currency      string      `json:"currency"`
	Country       string      `json:"country"`
	Balance       json.Number `json:"balance"`
	PayinBalance  json.Number `json:"payin_balance"`
	PayoutBalance json.Number `json:"payout_balance"`
	IsActive      bool        `json:"is_active"`
}

// usdBalance is the data of GET /wallet/usd-balance.
type usdBalance struct {
	WalletID        string      `json:"wallet_id"`
	Currency        string      `json:"currency"`
	Balance         json.Number `json:"balance"`
	PayinBalance    json.Number `json:"payin_balance"`
	PayoutBalance   json.Number `json:"payout_balance"`
	PayoutReserved  json.Number `json:"payout_reserved"`
	PayoutAvailable json.Number `json:"payout_available"`
}

// balanceEntry is a Balance entry of GET /payment/balance (spec §2.4).
type balanceEntry struct {
	Currency      string      `json:"currency"`
	Country       string      `json:"country"`
	PayinBalance  json.Number `json:"payin_balance"`
	PayoutBalance json.Number `json:"payout_balance"`
}

// paymentBalance is the data of GET /payment/balance (spec §4.13).
type paymentBalance struct {
	Balances  []balanceEntry `json:"balances"`
	UpdatedAt string         `json:"updated_at"`
}

// TransactionResponse is a wallet transaction as clients see it (spec
// §2.6), with our additions balance (the sub-balance the entry moves) and
// payment_id. Amounts are major units.
type TransactionResponse struct {
	ID                  string             `json:"id"`
	WalletID            string             `json:"wallet_id"`
	Amount              json.Number        `json:"amount"`
	AmountWithFee       json.Number        `json:"amount_with_fee"`
	FeeAmount           json.Number        `json:"fee_amount"`
	NetAmount           json.Number        `json:"net_amount"`
	Currency            string             `json:"currency"`
	Status              wallets.Status     `json:"status"`
	Type                wallets.Type       `json:"type"`
	Category            string             `json:"category"`
	Operator            string             `json:"operator"`
	PhoneNumber         string             `json:"phone_number"`
	Reference           string             `json:"reference"`
	OrderID             string             `json:"order_id"`
	WalletBalanceBefore *json.Number       `json:"wallet_balance_before"`
	WalletBalanceAfter  *json.Number       `json:"wallet_balance_after"`
	Balance             wallets.SubBalance `json:"balance"`
	PaymentID           *string            `json:"payment_id"`
	CreatedAt           string             `json:"created_at"`
	CompletedAt         *string            `json:"completed_at"`
}

// NewTransactionResponse returns t as clients see it.
func NewTransactionResponse(t wallets.Transaction) TransactionResponse {
	amount := func(p *int64) *json.Number {
		if p == nil || t.Status == wallets.StatusPending {
			return nil
		}
		n := money.JSON(*p, t.Currency)
		return &n
	}
	r := TransactionResponse{
		ID:                  t.ID,
		WalletID:            t.WalletID,
		Amount:              money.JSON(t.Amount, t.Currency),
		AmountWithFee:       money.JSON(t.AmountWithFee, t.Currency),
		FeeAmount:           money.JSON(t.FeeAmount, t.Currency),
		NetAmount:           money.JSON(t.NetAmount, t.Currency),
		Currency:            t.Currency,
		Status:              t.Status,
		Type:                t.Type,
		Category:            wallets.Category,
		Operator:            t.Operator,
		PhoneNumber:         t.PhoneNumber,
		Reference:           t.Reference,
		OrderID:             t.OrderID,
		WalletBalanceBefore: amount(t.BalanceBefore),
		WalletBalanceAfter:  amount(t.BalanceAfter),
		Balance:             t.Balance,
		CreatedAt:           timestamp.Format(t.CreatedAt),
	}
	if t.PaymentID != "" {
		r.PaymentID = &t.PaymentID
	}
	if t.CompletedAt != nil {
		s := timestamp.Format(*t.CompletedAt)
		r.CompletedAt = &s
	}
	return r
}

func transactionResponses(txs []wallets.Transaction) []TransactionResponse {
	out := make([]TransactionResponse, len(txs))
	for i, t := range txs {
		out[i] = NewTransactionResponse(t)
	}
	return out
}
