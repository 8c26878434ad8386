package moneystore

import (
	"fmt"

	"payments/pkg/cards"
	"payments/pkg/store/schema"
	"payments/pkg/timestamp"
	"payments/pkg/vault"
)

// claimItem is a lookup or claim: an item that records that a key is taken
// and by what.
type claimItem struct {
	PK        string `dynamodbav:"PK"`
	SK        string `dynamodbav:"SK"`
	Type      string `dynamodbav:"type"`
	CompanyID string `dynamodbav:"company_id"`
	Of        string `dynamodbav:"of"`
}

// cardItem is a card as stored. DynamoDB Local refuses empty strings: an
// empty optional string is absent.
type cardItem struct {
	PK           string        `dynamodbav:"PK"`
	SK           string        `dynamodbav:"SK"`
	GSI1PK       string        `dynamodbav:"GSI1PK"`
	GSI1SK       string        `dynamodbav:"GSI1SK"`
	GSI3PK       string        `dynamodbav:"GSI3PK"` // the card index (schema.CardIndex)
	GSI3SK       string        `dynamodbav:"GSI3SK"`
	Type         string        `dynamodbav:"type"`
	ID           string        `dynamodbav:"id"`
	CompanyID    string        `dynamodbav:"company_id"`
	CustomerID   string        `dynamodbav:"customer_id"`
	Brand        string        `dynamodbav:"brand"`
	Status       string        `dynamodbav:"status"`
	Balance      int64         `dynamodbav:"balance"`
	Held         int64         `dynamodbav:"held"`
	Available    int64         `dynamodbav:"available"`
	Last4        string        `dynamodbav:"last4,omitempty"`
	ExpiryMonth  int           `dynamodbav:"expiry_month"`
	ExpiryYear   int           `dynamodbav:"expiry_year"`
	Number       *vault.Sealed `dynamodbav:"number,omitempty"` // read only: see below
	CVV          *vault.Sealed `dynamodbav:"cvv,omitempty"`
	IssuerCardID string        `dynamodbav:"issuer_card_id,omitempty"`
	IsLocked     bool          `dynamodbav:"is_locked"`
	CreatedAt    string        `dynamodbav:"created_at"`
	UpdatedAt    string        `dynamodbav:"updated_at"`
	// SealedKeyID, NumberToken and CVVToken name the sealed number and
	// CVV, which live in the card's secrets item (cardSecretsItem): the
	// card item, copied into GSI1 and GSI3, holds nothing sealed. Number
	// and CVV are the sealed values that a sandbox card issued before the
	// secrets item still holds inline (until the migration card-secrets
	// moves them): read, never written.
	SealedKeyID string `dynamodbav:"sealed_key_id,omitempty"`
	NumberToken string `dynamodbav:"number_token,omitempty"`
	CVVToken    string `dynamodbav:"cvv_token,omitempty"`
}

// cardSecretsItem holds a card's sealed number and CVV, in the card's
// partition (schema.CardSecretsSK). It has no index key attribute: every index of
// the table projects ALL, and this is the one item that no index copies.
type cardSecretsItem struct {
	PK        string       `dynamodbav:"PK"`
	SK        string       `dynamodbav:"SK"`
	Type      string       `dynamodbav:"type"`
	CompanyID string       `dynamodbav:"company_id"`
	CardID    string       `dynamodbav:"card_id"`
	Number    vault.Sealed `dynamodbav:"number"`
	CVV       vault.Sealed `dynamodbav:"cvv"`
}

func newCardSecretsItem(companyID, cardID string, sec cards.Secrets) cardSecretsItem {
	return cardSecretsItem{
		PK: schema.CompanyPK(companyID), SK: schema.CardSecretsSK(cardID), Type: schema.KindCardSecrets,
		CompanyID: companyID, CardID: cardID, Number: sec.Number, CVV: sec.CVV,
	}
}

// cardSlotsItem counts a company's live cards.
type cardSlotsItem struct {
	Used int `dynamodbav:"used"`
}

// cardTxItem is a card transaction as stored.
type cardTxItem struct {
	PK          string `dynamodbav:"PK"`
	SK          string `dynamodbav:"SK"`
	GSI1PK      string `dynamodbav:"GSI1PK"`
	GSI1SK      string `dynamodbav:"GSI1SK"`
	GSI2PK      string `dynamodbav:"GSI2PK,omitempty"`
	GSI2SK      string `dynamodbav:"GSI2SK,omitempty"`
	GSI3PK      string `dynamodbav:"GSI3PK"`
	GSI3SK      string `dynamodbav:"GSI3SK"`
	Type        string `dynamodbav:"type"`
	ID          string `dynamodbav:"id"`
	CompanyID   string `dynamodbav:"company_id"`
	CardID      string `dynamodbav:"card_id"`
	CustomerID  string `dynamodbav:"customer_id"`
	WalletID    string `dynamodbav:"wallet_id,omitempty"`
	TxType      string `dynamodbav:"tx_type"`
	Status      string `dynamodbav:"status"`
	Amount      int64  `dynamodbav:"amount"`
	Fee         int64  `dynamodbav:"fee"`
	CardDelta   int64  `dynamodbav:"card_delta"`
	WalletDelta int64  `dynamodbav:"wallet_delta"`
	Issuance    bool   `dynamodbav:"issuance"`
	FeeEntryID  string `dynamodbav:"fee_entry_id,omitempty"`
	Description string `dynamodbav:"description,omitempty"`
	Error       string `dynamodbav:"error,omitempty"`
	CreatedAt   string `dynamodbav:"created_at"`
	CompletedAt string `dynamodbav:"completed_at,omitempty"`
	// The card network's transactions.
	IssuerTxID      string `dynamodbav:"issuer_tx_id,omitempty"`
	Kind            string `dynamodbav:"kind,omitempty"`
	MerchantName    string `dynamodbav:"merchant_name,omitempty"`
	MerchantCity    string `dynamodbav:"merchant_city,omitempty"`
	MerchantCountry string `dynamodbav:"merchant_country,omitempty"`
	OriginalID      string `dynamodbav:"original_id,omitempty"`
	DeclineReason   string `dynamodbav:"decline_reason,omitempty"`
	Hold            int64  `dynamodbav:"hold"`
	Settled         int64  `dynamodbav:"settled"`
	Refunded        int64  `dynamodbav:"refunded"`
	Expired         bool   `dynamodbav:"expired,omitempty"`
	DebtID          string `dynamodbav:"debt_id,omitempty"`
	Debt            int64  `dynamodbav:"debt"`
}

// revealItem is the audit record of a reveal as stored.
type revealItem struct {
	PK        string `dynamodbav:"PK"`
	SK        string `dynamodbav:"SK"`
	Type      string `dynamodbav:"type"`
	ID        string `dynamodbav:"id"`
	CompanyID string `dynamodbav:"company_id"`
	CardID    string `dynamodbav:"card_id"`
	KeyID     string `dynamodbav:"key_id,omitempty"`
	SourceIP  string `dynamodbav:"source_ip,omitempty"`
	UserAgent string `dynamodbav:"user_agent,omitempty"`
	RequestID string `dynamodbav:"request_id,omitempty"`
	CreatedAt string `dynamodbav:"created_at"`
}

func newCardItem(c cards.Card) cardItem {
	return cardItem{
		PK: schema.CompanyPK(c.CompanyID), SK: schema.CardSK(c.ID),
		GSI1PK: schema.CustomerCardsPK(c.CompanyID, c.CustomerID), GSI1SK: schema.CardSK(c.ID),
		GSI3PK: schema.CardGSI3PK(c.ID), GSI3SK: c.ID,
		Type: schema.KindCard, ID: c.ID, CompanyID: c.CompanyID, CustomerID: c.CustomerID,
		Brand: string(c.Brand), Status: string(c.Status), Balance: c.Balance, Held: c.Held, Available: c.Available(),
		Last4: c.Last4, ExpiryMonth: c.ExpiryMonth, ExpiryYear: c.ExpiryYear,
		SealedKeyID: c.Sealed.KeyID, NumberToken: c.Sealed.NumberToken, CVVToken: c.Sealed.CVVToken, IssuerCardID: c.IssuerCardID,
		IsLocked: c.IsLocked, CreatedAt: timestamp.Format(c.CreatedAt), UpdatedAt: timestamp.Format(c.UpdatedAt),
	}
}

func (it cardItem) card() (cards.Card, error) {
	created, err := timestamp.Parse(it.CreatedAt)
	if err != nil {
		return cards.Card{}, fmt.Errorf("store: card %s created_at: %w", it.ID, err)
	}
	updated, err := timestamp.Parse(it.UpdatedAt)
	if err != nil {
		return cards.Card{}, fmt.Errorf("store: card %s updated_at: %w", it.ID, err)
	}
	c := cards.Card{
		ID: it.ID, CompanyID: it.CompanyID, CustomerID: it.CustomerID,
		Brand: cards.Brand(it.Brand), Status: cards.Status(it.Status), Balance: it.Balance, Held: it.Held,
		Last4: it.Last4, ExpiryMonth: it.ExpiryMonth, ExpiryYear: it.ExpiryYear, IssuerCardID: it.IssuerCardID,
		IsLocked: it.IsLocked, CreatedAt: created, UpdatedAt: updated,
	}
	c.Sealed = cards.SealedRefs{KeyID: it.SealedKeyID, NumberToken: it.NumberToken, CVVToken: it.CVVToken}
	if c.Sealed.IsZero() && it.Number != nil && it.CVV != nil { // sealed inline, before the secrets item
		c.Sealed = cards.RefsOf(*it.Number, *it.CVV)
	}
	return c, nil
}

// newCardTxItem returns t as stored: while it is PROCESSING, in the open
// card transaction index; an authorization whose hold is open, in the open
// hold index (both GSI2: a transaction is never both).
func newCardTxItem(t cards.Transaction) cardTxItem {
	created := timestamp.Format(t.CreatedAt)
	it := cardTxItem{
		PK: schema.CompanyPK(t.CompanyID), SK: schema.CardTxSK(t.ID),
		GSI1PK: schema.CardTxsPK(t.CompanyID, t.CardID), GSI1SK: schema.CardTxSK(t.ID),
		GSI3PK: schema.CustomerTxsPK(t.CompanyID, t.CustomerID), GSI3SK: schema.CardTxSK(t.ID),
		Type: schema.KindCardTx, ID: t.ID, CompanyID: t.CompanyID, CardID: t.CardID, CustomerID: t.CustomerID,
		WalletID: t.WalletID, TxType: string(t.Type), Status: string(t.Status),
		Amount: t.Amount, Fee: t.Fee, CardDelta: t.CardDelta, WalletDelta: t.WalletDelta,
		Issuance: t.Issuance, FeeEntryID: t.FeeEntryID, Description: t.Description, Error: t.Error, CreatedAt: created,
		IssuerTxID: t.IssuerTxID, Kind: string(t.Kind), OriginalID: t.OriginalID, DeclineReason: string(t.DeclineReason),
		Hold: t.Hold, Settled: t.Settled, Refunded: t.Refunded, Expired: t.Expired, DebtID: t.DebtID, Debt: t.Debt,
	}
	if m := t.Merchant; m != nil {
		it.MerchantName, it.MerchantCity, it.MerchantCountry = m.Name, m.City, m.Country
	}
	if t.Open() {
		it.GSI2PK, it.GSI2SK = schema.OpenCardTxGSI2PK(t.ID), schema.OpenCardTxGSI2SK(created, t.CompanyID, t.ID)
	} else if t.Hold > 0 {
		it.GSI2PK, it.GSI2SK = schema.OpenHoldGSI2PK(t.ID), schema.OpenHoldGSI2SK(created, t.CompanyID, t.ID)
	}
	if t.CompletedAt != nil {
		it.CompletedAt = timestamp.Format(*t.CompletedAt)
	}
	return it
}

func (it cardTxItem) transaction() (cards.Transaction, error) {
	created, err := timestamp.Parse(it.CreatedAt)
	if err != nil {
		return cards.Transaction{}, fmt.Errorf("store: card transaction %s created_at: %w", it.ID, err)
	}
	t := cards.Transaction{
		ID: it.ID, CompanyID: it.CompanyID, CardID: it.CardID, CustomerID: it.CustomerID, WalletID: it.WalletID,
		Type: cards.TxType(it.TxType), Status: cards.TxStatus(it.Status), Amount: it.Amount, Fee: it.Fee,
		CardDelta: it.CardDelta, WalletDelta: it.WalletDelta, Issuance: it.Issuance, FeeEntryID: it.FeeEntryID,
		Description: it.Description, Error: it.Error, CreatedAt: created,
		IssuerTxID: it.IssuerTxID, Kind: cards.AuthKind(it.Kind), OriginalID: it.OriginalID,
		DeclineReason: cards.DeclineReason(it.DeclineReason), Hold: it.Hold, Settled: it.Settled, Refunded: it.Refunded, Expired: it.Expired,
		DebtID: it.DebtID, Debt: it.Debt,
	}
	if it.MerchantName != "" || it.MerchantCity != "" || it.MerchantCountry != "" {
		t.Merchant = &cards.Merchant{Name: it.MerchantName, City: it.MerchantCity, Country: it.MerchantCountry}
	}
	if it.CompletedAt != "" {
		done, err := timestamp.Parse(it.CompletedAt)
		if err != nil {
			return cards.Transaction{}, fmt.Errorf("store: card transaction %s completed_at: %w", it.ID, err)
		}
		t.CompletedAt = &done
	}
	return t, nil
}

func newRevealItem(r cards.Reveal) revealItem {
	return revealItem{
		PK: schema.CompanyPK(r.CompanyID), SK: schema.RevealSK(r.CardID, r.ID), Type: schema.KindCardReveal,
		ID: r.ID, CompanyID: r.CompanyID, CardID: r.CardID, KeyID: r.KeyID,
		SourceIP: r.SourceIP, UserAgent: r.UserAgent, RequestID: r.RequestID,
		CreatedAt: timestamp.Format(r.CreatedAt),
	}
}

func (it revealItem) reveal() (cards.Reveal, error) {
	at, err := timestamp.Parse(it.CreatedAt)
	if err != nil {
		return cards.Reveal{}, fmt.Errorf("store: reveal %s created_at: %w", it.ID, err)
	}
	return cards.Reveal{
		ID: it.ID, CompanyID: it.CompanyID, CardID: it.CardID, KeyID: it.KeyID,
		SourceIP: it.SourceIP, UserAgent: it.UserAgent, RequestID: it.RequestID, CreatedAt: at,
	}, nil
}
