// Package bank is the gateway to the bank that receives the transfers
// companies send to fund their wallets (POST /wallets/fund): a company
// declares a transfer, and its wallet is credited only once the bank has
// received it.
//
// This package is the contract alone: the interface, its types and None.
// Bank is what a bank adapter implements; the simulated bank of sandbox
// stages and tests (banksandbox) answers a few seconds after a transfer is
// declared, through a delayed message on its queue, and decides
// deterministically from the transfer's reference (the README's table).
package bank

import "context"

// Outcome is the bank's view of a declared transfer.
type Outcome string

// Outcomes a bank reports. Received and Refused are definitive.
const (
	// Awaited is a transfer the bank has not seen yet.
	Awaited Outcome = "AWAITED"
	// Received is a transfer that arrived: the wallet is to be credited.
	Received Outcome = "RECEIVED"
	// Refused is a transfer that will not arrive (refused, returned).
	Refused Outcome = "REFUSED"
)

// Transfer is one bank transfer a company declared: one funding of a
// wallet.
type Transfer struct {
	CompanyID string
	// FundingID is our FUND wallet transaction.
	FundingID string
	WalletID  string
	Amount    int64 // minor units of Currency
	Currency  string
	// Reference is the company's reference, which the transfer carries.
	Reference string
}

// Bank watches for the transfers companies declare.
type Bank interface {
	// Expect tells the bank that t is on its way; it is called once t is
	// recorded PENDING. The bank's answer comes later, through Check.
	Expect(ctx context.Context, t Transfer) error
	// Check reports what became of t: Received or Refused are final,
	// Awaited means ask again later.
	Check(ctx context.Context, t Transfer) (Outcome, error)
}
