package events

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
