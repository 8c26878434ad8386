package events

import "encoding/json"

// Payloads of the card events whose data the spec shows (§6.3, §6.4). Their
// keys are the spec's, camelCase ones included where it shows them; amounts
// are JSON numbers in major units (money.JSON).

// CardCreatedData is the data of card.created.
type CardCreatedData struct {
	Card         CreatedCard   `json:"card"`
	CardIssuance CardOperation `json:"card_issuance"`
	CardFund     CardOperation `json:"card_fund"`
}

// EventKind returns CardCreated.
func (CardCreatedData) EventKind() Kind { return CardCreated }

// CreatedCard is the card of card.created.
type CreatedCard struct {
	ID           string      `json:"id"`
	CustomerID   string      `json:"customer_id"`
	Brand        string      `json:"brand"` // VISA or MASTERCARD
	MaskedNumber string      `json:"masked_number"`
	Balance      json.Number `json:"balance"`
	Currency     string      `json:"currency"` // always USD
}

// CardOperation is the issuance fee or the initial funding of card.created.
type CardOperation struct {
	Status        string      `json:"status"` // SUCCESS, FAILED or PENDING
	TransactionID string      `json:"transaction_id"`
	Amount        json.Number `json:"amount"` // USD
	Description   string      `json:"description"`
}

// CardFundData is the data of card.fund: a card funded from a wallet, once
// the issuer has confirmed it.
type CardFundData struct {
	TransactionID string      `json:"transaction_id"`
	CardID        string      `json:"card_id"`
	Amount        json.Number `json:"amount"`
	Currency      string      `json:"currency"`
	FeeAmount     json.Number `json:"fee_amount"`
}

// EventKind returns CardFund.
func (CardFundData) EventKind() Kind { return CardFund }

// CardFundFailedData is the data of card.fund.failed, the keys of
// card.withdraw.failed: the issuer refused a funding, and its amount and
// fee went back to the wallet.
type CardFundFailedData struct {
	TransactionID string      `json:"transaction_id"`
	CardID        string      `json:"card_id"`
	Amount        json.Number `json:"amount"`
	Error         string      `json:"error"`
}

// EventKind returns CardFundFailed.
func (CardFundFailedData) EventKind() Kind { return CardFundFailed }

// CardWithdrawData is the data of card.withdraw: money moved from a card to
// the wallet.
type CardWithdrawData struct {
	TransactionID string      `json:"transaction_id"`
	CardID        string      `json:"card_id"`
	Amount        json.Number `json:"amount"`
	Currency      string      `json:"currency"`
	FeeAmount     json.Number `json:"fee_amount"`
}

// EventKind returns CardWithdraw.
func (CardWithdrawData) EventKind() Kind { return CardWithdraw }

// CardWithdrawFailedData is the data of card.withdraw.failed.
type CardWithdrawFailedData struct {
	TransactionID string      `json:"transaction_id"`
	CardID        string      `json:"card_id"`
	Amount        json.Number `json:"amount"`
	Error         string      `json:"error"`
}

// EventKind returns CardWithdrawFailed.
func (CardWithdrawFailedData) EventKind() Kind { return CardWithdrawFailed }

// Values of the fixed fields of card.terminated and
// card.verification.completed.
const (
	CardStatusTerminated           = "TERMINATED"
	TerminationReasonCompany       = "Card terminated"
	TerminationReasonProvider      = "provider_terminated"
	CardVerificationStatusVerified = "VERIFIED"
)

// CardTerminatedByCompanyData is the data of card.terminated when the
// company terminated the card (§6.4, legacy camelCase keys). Status is
// always TERMINATED.
type CardTerminatedByCompanyData struct {
	CardID          string      `json:"cardId"`
	CardNumber      string      `json:"cardNumber"` // masked, last 4 digits
	Status          string      `json:"status"`
	TerminatedAt    string      `json:"terminatedAt"`
	RefundAmount    json.Number `json:"refundAmount"` // to the company USD wallet; 0 without balance
	RefundProcessed bool        `json:"refundProcessed"`
	Reason          string      `json:"reason"` // typically "Card terminated"
}

// EventKind returns CardTerminated.
func (CardTerminatedByCompanyData) EventKind() Kind { return CardTerminated }

// CardTerminatedByProviderData is the data of card.terminated when the
// issuer terminated the card, for example on a risk block (§6.4): the
// previous balance replaces the refund fields; Reason is
// "provider_terminated".
type CardTerminatedByProviderData struct {
	CardID          string      `json:"cardId"`
	Status          string      `json:"status"`
	Reason          string      `json:"reason"`
	PreviousBalance json.Number `json:"previousBalance"`
}

// EventKind returns CardTerminated.
func (CardTerminatedByProviderData) EventKind() Kind { return CardTerminated }

// CardVerificationCompletedData is the data of card.verification.completed:
// a merchant verified the card with a zero-amount hold. Status is always
// VERIFIED. The keys are exactly the ones the spec shows.
type CardVerificationCompletedData struct {
	CardID    string   `json:"cardId"`
	Status    string   `json:"status"`
	Message   string   `json:"message"`
	Merchant  Merchant `json:"merchant"`
	Reference string   `json:"reference"`
}

// EventKind returns CardVerificationCompleted.
func (CardVerificationCompletedData) EventKind() Kind { return CardVerificationCompleted }

// Merchant names the merchant of a card verification.
type Merchant struct {
	Name string `json:"name"`
}
