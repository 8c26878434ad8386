package events

import (
	"encoding/json"
	"time"

	"payments/pkg/timestamp"
)

// Payload is the data of one event kind: each payload type of this package
// knows its kind, so Build cannot pair a payload with the wrong name, and
// the object it is about (objects.go).
type Payload interface {
	EventKind() Kind
	// EventObject returns the id of the object the event is about.
	EventObject() string
}

// Build returns the event of p's kind with p as its data, about p's object.
// Like New, it fixes the body bytes now, but for the sequence the store
// adds: every delivery sends exactly them.
func Build(companyID string, p Payload, now time.Time) (Event, error) {
	e, err := New(companyID, p.EventKind(), p, now)
	if err != nil {
		return Event{}, err
	}
	e.Object = p.EventObject()
	return e, nil
}

// Entry describes one event kind (one payload form of it) in the catalogue.
type Entry struct {
	// Kind is the event name.
	Kind Kind
	// Form names the payload form when a kind has several (card.terminated:
	// "company" or "provider"); empty otherwise.
	Form string
	// Section is where the spec defines the kind ("6.3", "6.4", "6.5"), or
	// "ours" for the names the spec leaves to us.
	Section string
	// Shown reports whether the spec shows the payload; when it does, the
	// payload has exactly the spec's keys.
	Shown bool
	// Meaning says when the event is emitted.
	Meaning string
	// IDs are the keys of data that identify what the event is about; a
	// receiver deduplicates on them (with the event id header).
	IDs []string
	// Object is the key of data that holds the id of the object the event
	// is about (Payload.EventObject), the unit of the event's sequence.
	Object string
	// NotifyURL reports whether the event also goes to the notify_url of the
	// request that started it.
	NotifyURL bool
	// Sample returns a representative payload, as its builder makes it. The
	// catalogue test and docs/events.md are checked against it.
	Sample func() Payload
}

// Catalogue lists every event kind the service emits: the 21 of the spec
// (§6.3–§6.5) and the kinds we name (card.fund.failed, debt.recovered, the
// card disputes, the wallet movements, the conversions and deposits, and
// the two status updates).
// card.terminated has one entry per payload form.
var Catalogue = []Entry{
	// §6.3: shown payloads.
	{Kind: PaymentCollect, Object: "transaction_id", Section: "6.3", Shown: true, IDs: []string{"transaction_id", "external_id"},
		Meaning: "a collection (pay-in) is initiated",
		Sample: func() Payload {
			return paymentCollect{PaymentCollectData{TransactionID: sampleTxID, ExternalID: "order-1001", Status: "PENDING",
				Amount: "5000", Currency: "XAF", Country: "CM", Operator: "mtn", PhoneNumber: "237670000000",
				InitiatedAt: sampleAt}}
		}},
	{Kind: CardCreated, Object: "card.id", Section: "6.3", Shown: true, IDs: []string{"card.id", "card_issuance.transaction_id", "card_fund.transaction_id"},
		Meaning: "a card is created",
		Sample: func() Payload {
			return CardCreatedData{
				Card: CreatedCard{ID: sampleCardID, CustomerID: sampleCustomerID, Brand: "VISA",
					MaskedNumber: "**** **** **** 4242", Balance: "10", Currency: "USD"},
				CardIssuance: CardOperation{Status: "SUCCESS", TransactionID: sampleTxID, Amount: "2", Description: "Card issuance fee"},
				CardFund:     CardOperation{Status: "SUCCESS", TransactionID: sampleTx2ID, Amount: "10", Description: "Initial card funding"},
			}
		}},
	{Kind: CardFund, Object: "card_id", Section: "6.3", Shown: true, IDs: []string{"transaction_id", "card_id"},
		Meaning: "a card is funded from a wallet (sent once the issuer has confirmed it)",
		Sample: func() Payload {
			return CardFundData{TransactionID: sampleTxID, CardID: sampleCardID, Amount: "25", Currency: "USD", FeeAmount: "0.5"}
		}},
	{Kind: CardWithdraw, Object: "card_id", Section: "6.3", Shown: true, IDs: []string{"transaction_id", "card_id"},
		Meaning: "money moves from a card to the wallet",
		Sample: func() Payload {
			return CardWithdrawData{TransactionID: sampleTxID, CardID: sampleCardID, Amount: "15", Currency: "USD", FeeAmount: "0"}
		}},
	{Kind: CardWithdrawFailed, Object: "card_id", Section: "6.3", Shown: true, IDs: []string{"transaction_id", "card_id"},
		Meaning: "a card withdrawal fails",
		Sample: func() Payload {
			return CardWithdrawFailedData{TransactionID: sampleTxID, CardID: sampleCardID, Amount: "15", Error: "insufficient card balance"}
		}},
	{Kind: CardFundFailed, Object: "card_id", Section: "ours", IDs: []string{"transaction_id", "card_id"},
		Meaning: "the issuer refused a card funding; its amount and fee are back on the wallet",
		Sample: func() Payload {
			return CardFundFailedData{TransactionID: sampleTxID, CardID: sampleCardID, Amount: "25", Error: "the card issuer's card does not allow it"}
		}},
	{Kind: CardVerificationCompleted, Object: "cardId", Section: "6.3", Shown: true, IDs: []string{"cardId", "reference"},
		Meaning: "a merchant verifies the card with a zero-amount hold",
		Sample: func() Payload {
			return CardVerificationCompletedData{CardID: sampleCardID, Status: CardVerificationStatusVerified,
				Message: "Card verified by merchant", Merchant: Merchant{Name: "NETFLIX.COM"}, Reference: "ver_8f2a61"}
		}},

	// §6.4: card.terminated, two forms.
	{Kind: CardTerminated, Object: "cardId", Form: "company", Section: "6.4", Shown: true, IDs: []string{"cardId"},
		Meaning: "the company terminated a card; the remaining balance is refunded to its USD wallet",
		Sample: func() Payload {
			return CardTerminatedByCompanyData{CardID: sampleCardID, CardNumber: "**** **** **** 4242", Status: CardStatusTerminated,
				TerminatedAt: sampleAt, RefundAmount: "12.5", RefundProcessed: true, Reason: TerminationReasonCompany}
		}},
	{Kind: CardTerminated, Object: "cardId", Form: "provider", Section: "6.4", Shown: true, IDs: []string{"cardId"},
		Meaning: "the issuer terminated a card (for example a risk block)",
		Sample: func() Payload {
			return CardTerminatedByProviderData{CardID: sampleCardID, Status: CardStatusTerminated,
				Reason: TerminationReasonProvider, PreviousBalance: "12.5"}
		}},

	// §6.5: names and meanings only; the payloads are ours.
	{Kind: TransactionAuthorizationCreated, Object: "transaction_id", Section: "6.5", IDs: cardTxIDs,
		Meaning: "card payment authorization succeeded",
		Sample: func() Payload {
			return TransactionAuthorizationCreatedData{sampleCardTx("AUTHORIZATION", "PENDING")}
		}},
	{Kind: TransactionAuthorizationDeclined, Object: "transaction_id", Section: "6.5", IDs: cardTxIDs,
		Meaning: "authorization declined",
		Sample: func() Payload {
			return TransactionAuthorizationDeclinedData{sampleCardTx("DECLINE", "FAILED"), "insufficient_funds"}
		}},
	{Kind: TransactionPreauthorizationCreated, Object: "transaction_id", Section: "6.5", IDs: cardTxIDs,
		Meaning: "pre-authorization hold placed; later settled or reversed",
		Sample: func() Payload {
			return TransactionPreauthorizationCreatedData{sampleCardTx("AUTHORIZATION", "PENDING")}
		}},
	{Kind: TransactionSettlementCompleted, Object: "transaction_id", Section: "6.5", IDs: cardTxIDs,
		Meaning: "authorized transaction settled",
		Sample: func() Payload {
			return TransactionSettlementCompletedData{sampleRelatedTx("SETTLEMENT")}
		}},
	{Kind: TransactionReversalCompleted, Object: "transaction_id", Section: "6.5", IDs: cardTxIDs,
		Meaning: "transaction reversed, usually within 24 hours; reason expired when the hold expired",
		Sample: func() Payload {
			expired := ReversalReasonExpired
			return TransactionReversalCompletedData{sampleRelatedTx("REVERSAL"), &expired}
		}},
	{Kind: TransactionRefundCompleted, Object: "transaction_id", Section: "6.5", IDs: cardTxIDs,
		Meaning: "refund processed, usually after settlement",
		Sample: func() Payload {
			return TransactionRefundCompletedData{sampleRelatedTx("REFUND")}
		}},
	{Kind: TransactionFundingCompleted, Object: "transaction_id", Section: "6.5", IDs: cardTxIDs,
		Meaning: "card funding transaction completed",
		Sample: func() Payload {
			return TransactionFundingCompletedData{sampleCardTx("FUNDING", "SUCCESS")}
		}},
	{Kind: TransactionWithdrawalCompleted, Object: "transaction_id", Section: "6.5", IDs: cardTxIDs,
		Meaning: "card withdrawal transaction completed",
		Sample: func() Payload {
			return TransactionWithdrawalCompletedData{sampleCardTx("WITHDRAWAL", "SUCCESS")}
		}},
	{Kind: TransactionCrossborderCharged, Object: "transaction_id", Section: "6.5", IDs: cardTxIDs,
		Meaning: "cross-border charge recorded",
		Sample: func() Payload {
			return TransactionCrossborderChargedData{sampleRelatedTx("CROSS-BORDER")}
		}},
	{Kind: TransactionTerminated, Object: "transaction_id", Section: "6.5", IDs: cardTxIDs,
		Meaning: "termination-type transaction recorded",
		Sample: func() Payload {
			return TransactionTerminatedData{sampleCardTx("TERMINATION", "SUCCESS")}
		}},
	{Kind: FeePaymentFailureCharged, Object: "transaction_id", Section: "6.5", IDs: []string{"fee_id", "transaction_id", "card_id"},
		Meaning: "fee charged for a failed payment (0.50 USD)",
		Sample: func() Payload {
			return FeePaymentFailureChargedData{sampleFee("0.5", "0.5", "0", "0")}
		}},
	{Kind: FeeCrossborderCharged, Object: "transaction_id", Section: "6.5", IDs: []string{"fee_id", "transaction_id", "card_id"},
		Meaning: "cross-border fee charged (2.5 percent plus 0.50 USD)",
		Sample: func() Payload {
			return FeeCrossborderChargedData{sampleFee("3", "1.25", "1.75", "0"), "100"}
		}},
	{Kind: DebtRecoveryPending, Object: "debt_id", Section: "6.5", IDs: []string{"debt_id", "transaction_id", "card_id"},
		Meaning: "a fee debt was created because the fee could not be taken from the card or the wallet",
		Sample: func() Payload {
			return DebtRecoveryPendingData{DebtID: sampleDebtID, FeeType: FeeTypePaymentFailure, TransactionID: sampleTxID,
				CardID: sampleCardID, CustomerID: sampleCustomerID, Amount: "0.5", Currency: "USD", CreatedAt: sampleAt}
		}},
	{Kind: DebtRecovered, Object: "debt_id", Section: "ours", IDs: []string{"debt_id", "ledger_transaction_id"},
		Meaning: "a credit to the company USD wallet paid (part of) a pending debt",
		Sample: func() Payload {
			return DebtRecoveredData{DebtID: sampleDebtID, FeeType: FeeTypePaymentFailure, TransactionID: sampleTxID,
				CardID: sampleCardID, WalletID: sampleWalletID, LedgerTransactionID: sampleTx2ID, RecoveredAmount: "0.5",
				RemainingAmount: "0", Currency: "USD", Status: "RECOVERED", RecoveredAt: sampleAt}
		}},
	{Kind: CardDisputeCreated, Object: "dispute_id", Section: "ours", IDs: []string{"dispute_id"},
		Meaning: "a dispute of a card settlement is open at the card issuer (opened by the company, or at the issuer without us)",
		Sample: func() Payload {
			return CardDisputeCreatedData{sampleDispute("SUBMITTED", "0"), sampleAt}
		}},
	{Kind: CardDisputeUpdated, Object: "dispute_id", Section: "ours", IDs: []string{"dispute_id", "status", "credited_amount"},
		Meaning: "the card issuer moved a dispute on: its status, or what it credited for it, which the card (or the USD wallet of a terminated card) follows",
		Sample: func() Payload {
			tx := sampleTx2ID
			return CardDisputeUpdatedData{sampleDispute("LOST", "0"), "SUBMITTED", &tx, sampleAt}
		}},
	{Kind: WalletTransferCompleted, Object: "transfer_id", Section: "ours", IDs: []string{"transfer_id"},
		Meaning: "money moved between the payin and payout balances of one wallet (POST /wallets/{id}/transfer-internal)",
		Sample: func() Payload {
			fee := sampleTx3ID
			return WalletTransferCompletedData{TransferID: sampleTxID, WalletID: sampleWalletID, Currency: "XAF",
				Amount: "5000", FeeAmount: "50", From: "payin", To: "payout", DebitTransactionID: sampleTx2ID,
				CreditTransactionID: sampleOrigTxID, FeeTransactionID: &fee, CompletedAt: sampleAt}
		}},
	{Kind: WalletFundCompleted, Object: "transaction_id", Section: "ours", IDs: []string{"transaction_id"},
		Meaning: "a bank transfer the company declared (POST /wallets/fund) was confirmed and credited",
		Sample: func() Payload {
			return WalletFundCompletedData{sampleWalletFund("SUCCESS")}
		}},
	{Kind: WalletFundFailed, Object: "transaction_id", Section: "ours", IDs: []string{"transaction_id"},
		Meaning: "a bank transfer the company declared (POST /wallets/fund) was rejected; nothing was credited",
		Sample: func() Payload {
			return WalletFundFailedData{sampleWalletFund("FAILED")}
		}},
	{Kind: CustomerCreated, Object: "customer_id", Section: "6.5", IDs: []string{"customer_id"},
		Meaning: "a customer was created (POST /customers/enroll or POST /customers stored the record)",
		Sample: func() Payload {
			return CustomerCreatedData{CustomerID: sampleCustomerID, FirstName: "Amina", LastName: "Njoya", Email: "amina@example.com",
				Country: "Cameroon", PhoneCountryCode: "+237", PhoneNumber: "670000000", KYCStatus: "VERIFIED", IsActive: true, CreatedAt: sampleAt}
		}},
	{Kind: CustomerKYCUpdated, Object: "customer_id", Section: "ours", IDs: []string{"customer_id", "kyc_status"},
		Meaning: "the operator console decided the identity of a customer enrolled as PENDING_REVIEW (VERIFIED or REJECTED)",
		Sample: func() Payload {
			reason := "document does not match the identity"
			return CustomerKYCUpdatedData{CustomerID: sampleCustomerID, KYCStatus: "REJECTED", KYCReason: &reason, UpdatedAt: sampleAt}
		}},

	// Ours: money moved between a company's wallets at its exchange rate.
	{Kind: WalletConversionCompleted, Object: "conversion_id", Section: "ours", IDs: []string{"conversion_id"},
		Meaning: "a conversion from an XAF or XOF wallet to the company USD wallet was made",
		Sample: func() Payload {
			return WalletConversionCompletedData{ConversionID: sampleTxID, SourceWalletID: sampleWalletID, USDWalletID: sampleWallet2ID,
				Amount: "1000", Currency: "XAF", Rate: "0.001667", ExchangeRateID: sampleRateID, ConvertedAmount: "1.67",
				FeeAmount: "0.02", CreditedAmount: "1.65", CompletedAt: sampleAt}
		}},
	{Kind: WalletDepositCompleted, Object: "deposit_id", Section: "ours", IDs: []string{"deposit_id"},
		Meaning: "a deposit moved money between two wallets of the company in different currencies",
		Sample: func() Payload {
			return WalletDepositCompletedData{DepositID: sampleTxID, SourceWalletID: sampleWalletID, DestinationWalletID: sampleWallet2ID,
				Amount: "1000", FeeAmount: "10", TotalAmount: "1010", Currency: "XAF", Rate: "0.001667", ExchangeRateID: sampleRateID,
				ConvertedAmount: "1.67", DestinationCurrency: "USD", CompletedAt: sampleAt}
		}},

	// Ours: the status updates the spec leaves unnamed (§6.5, §4.14).
	{Kind: PayoutStatusUpdated, Object: "transaction_id", Section: "ours", IDs: []string{"transaction_id", "external_id", "status"}, NotifyURL: true,
		Meaning: "a payout changed status (one event per transition; also sent to the payout's notify_url)",
		Sample: func() Payload {
			return paymentStatus{PayoutStatusUpdated, samplePaymentStatus("PAYOUT", "PROCESSING", "PENDING")}
		}},
	{Kind: PaymentBulkCompleted, Object: "batch_id", Section: "ours", IDs: []string{"batch_id"},
		Meaning: "every accepted item of a bulk payout batch is SUCCESS or FAILED (once per batch)",
		Sample: func() Payload {
			desc, cur, done := "June payroll", "XAF", sampleAt
			return PaymentBulkCompletedData{BulkBatch{BatchID: sampleTxID, Status: "COMPLETED", Mode: "partial",
				Description: &desc, Currency: &cur, ItemCount: 3, AcceptedCount: 2, RejectedCount: 1,
				Counts:      BulkCounts{Success: 1, Failed: 1, Rejected: 1},
				TotalAmount: "3000", TotalFees: "30", Totals: BulkTotals{Reserved: "0", Paid: "1000", Fees: "10", Refunded: "2020"},
				CreatedAt: sampleAt, UpdatedAt: sampleAt, CompletedAt: &done}}
		}},
	{Kind: CollectionStatusUpdated, Object: "transaction_id", Section: "ours", IDs: []string{"transaction_id", "external_id", "status"}, NotifyURL: true,
		Meaning: "a collection changed status (one event per transition; also sent to the collection's notify_url)",
		Sample: func() Payload {
			return paymentStatus{CollectionStatusUpdated, samplePaymentStatus("COLLECTION", "SUCCESS", "PROCESSING")}
		}},
}

// Lookup returns the catalogue entries of kind k (two for card.terminated),
// or none when k is not a kind the service emits.
func Lookup(k Kind) []Entry {
	var out []Entry
	for _, e := range Catalogue {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// Kinds returns every kind of the catalogue once, in catalogue order.
func Kinds() []Kind {
	var out []Kind
	seen := map[Kind]bool{}
	for _, e := range Catalogue {
		if !seen[e.Kind] {
			seen[e.Kind] = true
			out = append(out, e.Kind)
		}
	}
	return out
}

// Known reports whether k is a kind of the catalogue.
func (k Kind) Known() bool { return len(Lookup(k)) > 0 }

// paymentCollect and paymentStatus give the payment payloads of
// payments.go, which are built by their own constructors, a kind for the
// catalogue; they marshal exactly as the payload they wrap.
type paymentCollect struct{ PaymentCollectData }

func (paymentCollect) EventKind() Kind { return PaymentCollect }

type paymentStatus struct {
	kind Kind
	PaymentStatusData
}

func (p paymentStatus) EventKind() Kind { return p.kind }

// Sample values of the catalogue.
var (
	sampleAt         = timestamp.Format(time.Date(2025, 5, 1, 10, 0, 0, 0, time.UTC))
	sampleTxID       = "0196897a-5f0c-7d3e-9a41-1c2b3d4e5f60"
	sampleTx2ID      = "0196897a-5f0c-7d3e-9a41-1c2b3d4e5f61"
	sampleOrigTxID   = "0196897a-5f0c-7d3e-9a41-1c2b3d4e5f62"
	sampleTx3ID      = "0196897a-5f0c-7d3e-9a41-1c2b3d4e5f65"
	sampleCardID     = "8d7f3c2a-1b4e-4f6a-9c8d-7e6f5a4b3c2d"
	sampleCustomerID = "3f2e1d0c-9b8a-4765-8432-10fedcba9876"
	sampleFeeID      = "0196897a-5f0c-7d3e-9a41-1c2b3d4e5f63"
	sampleDebtID     = "0196897a-5f0c-7d3e-9a41-1c2b3d4e5f64"
	sampleDisputeID  = "0196897a-5f0c-7d3e-9a41-1c2b3d4e5f66"
	sampleWalletID   = "5a4b3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d"
	sampleWallet2ID  = "6b5c4d3e-2f10-4b0c-9d8e-7f6a5b4c3d2e"
	sampleRateID     = "0196897a-5f0c-7d3e-9a41-1c2b3d4e5f65"
	cardTxIDs        = []string{"transaction_id", "card_id"}
)

func sampleCardTx(typ, status string) CardTransaction {
	return CardTransaction{TransactionID: sampleTxID, CardID: sampleCardID, CustomerID: sampleCustomerID, Type: typ,
		Status: status, Amount: "42.9", Currency: "USD", Description: "AMAZON MKTPLACE, SEATTLE", CreatedAt: sampleAt}
}

func sampleRelatedTx(typ string) RelatedCardTransaction {
	orig := sampleOrigTxID
	return RelatedCardTransaction{sampleCardTx(typ, "SUCCESS"), &orig}
}

func sampleFee(amount, card, wallet, debt string) FeeCharge {
	f := FeeCharge{FeeID: sampleFeeID, TransactionID: sampleTxID, CardID: sampleCardID, CustomerID: sampleCustomerID,
		Amount: json.Number(amount), Currency: "USD", FromCard: json.Number(card), FromWallet: json.Number(wallet),
		DebtAmount: json.Number(debt), CreatedAt: sampleAt}
	if wallet != "0" {
		w := sampleWalletID
		f.WalletID = &w
	}
	if debt != "0" {
		d := sampleDebtID
		f.DebtID = &d
	}
	return f
}

func sampleDispute(status, credited string) CardDispute {
	reason := "NOT_RECEIVED"
	return CardDispute{DisputeID: sampleDisputeID, CardID: sampleCardID, CustomerID: sampleCustomerID, TransactionID: sampleTxID,
		Status: status, Reason: &reason, Amount: "42.9", CreditedAmount: json.Number(credited), Currency: "USD"}
}

func samplePaymentStatus(typ, status, previous string) PaymentStatusData {
	return PaymentStatusData{TransactionID: sampleTxID, ExternalID: "order-1001", Type: typ, Status: status,
		PreviousStatus: &previous, Amount: "5000", FeeAmount: "100", Currency: "XAF", Country: "CM", Operator: "mtn",
		PhoneNumber: "237670000000", UpdatedAt: sampleAt}
}

func sampleWalletFund(status string) WalletFund {
	return WalletFund{TransactionID: sampleTxID, WalletID: sampleWalletID, Reference: "bank-transfer-0001",
		Balance: "payout", Amount: "100000", Currency: "XAF", Status: status, CompletedAt: sampleAt}
}
