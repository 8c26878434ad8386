package events

import (
	"errors"
	"fmt"
	"slices"
)

// The object each event is about (Payload.EventObject), the unit of the
// per-object sequence: a payment, a card, a card transaction (the fee.*
// events too: a fee belongs to the card transaction that incurred it), a
// debt, a customer, a wallet transfer, a wallet funding, a conversion or a
// deposit. The catalogue names the payload key that holds it (Entry.Object).

// EventObject returns the payment's transaction_id.
func (d PaymentCollectData) EventObject() string { return d.TransactionID }

// EventObject returns the payment's transaction_id.
func (d PaymentStatusData) EventObject() string { return d.TransactionID }

// EventObject returns the card's id.
func (d CardCreatedData) EventObject() string { return d.Card.ID }

// EventObject returns the card's id.
func (d CardFundData) EventObject() string { return d.CardID }

// EventObject returns the card's id.
func (d CardFundFailedData) EventObject() string { return d.CardID }

// EventObject returns the card's id.
func (d CardWithdrawData) EventObject() string { return d.CardID }

// EventObject returns the card's id.
func (d CardWithdrawFailedData) EventObject() string { return d.CardID }

// EventObject returns the card's id.
func (d CardTerminatedByCompanyData) EventObject() string { return d.CardID }

// EventObject returns the card's id.
func (d CardTerminatedByProviderData) EventObject() string { return d.CardID }

// EventObject returns the card's id.
func (d CardVerificationCompletedData) EventObject() string { return d.CardID }

// EventObject returns the card transaction's transaction_id.
func (t CardTransaction) EventObject() string { return t.TransactionID }

// EventObject returns transaction_id, the card transaction that incurred
// the fee.
func (f FeeCharge) EventObject() string { return f.TransactionID }

// EventObject returns the debt's id.
func (d DebtRecoveryPendingData) EventObject() string { return d.DebtID }

// EventObject returns the debt's id.
func (d DebtRecoveredData) EventObject() string { return d.DebtID }

// EventObject returns the customer's id.
func (d CustomerCreatedData) EventObject() string { return d.CustomerID }

// EventObject returns the customer's id.
func (d CustomerKYCUpdatedData) EventObject() string { return d.CustomerID }

// EventObject returns the transfer's id.
func (d WalletTransferCompletedData) EventObject() string { return d.TransferID }

// EventObject returns the funding's transaction_id.
func (f WalletFund) EventObject() string { return f.TransactionID }

// EventObject returns the conversion's id.
func (d WalletConversionCompletedData) EventObject() string { return d.ConversionID }

// EventObject returns the deposit's id.
func (d WalletDepositCompletedData) EventObject() string { return d.DepositID }

// ErrSequenceBroken is a set of events whose numbers about one object are
// not 1, 2, … n, each once (see VerifySequences).
var ErrSequenceBroken = errors.New("events: the sequence of an object's events is broken")

// VerifySequences checks the ordering invariant over evs, every event of a
// company: the events about each object carry 1, 2, … n, each once. Events
// written before sequences existed (Sequence 0) are left out.
func VerifySequences(evs []Event) error {
	byObject := map[string][]int64{}
	for _, e := range evs {
		if e.Sequence > 0 {
			byObject[e.Object] = append(byObject[e.Object], e.Sequence)
		}
	}
	for object, seqs := range byObject {
		slices.Sort(seqs)
		for i, n := range seqs {
			if n != int64(i+1) {
				return fmt.Errorf("%w: the events about %s carry %v", ErrSequenceBroken, object, seqs)
			}
		}
	}
	return nil
}
