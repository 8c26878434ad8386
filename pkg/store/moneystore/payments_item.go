package moneystore

import (
	"encoding/json"
	"fmt"
	"time"

	"payments/pkg/payments"
	"payments/pkg/store/schema"
	"payments/pkg/timestamp"
)

// paymentItem is a payment as stored.
type paymentItem struct {
	PK           string `dynamodbav:"PK"`
	SK           string `dynamodbav:"SK"`
	GSI1PK       string `dynamodbav:"GSI1PK,omitempty"`
	GSI1SK       string `dynamodbav:"GSI1SK,omitempty"`
	GSI2PK       string `dynamodbav:"GSI2PK,omitempty"`
	GSI2SK       string `dynamodbav:"GSI2SK,omitempty"`
	GSI3PK       string `dynamodbav:"GSI3PK"` // the created-payment index (schema.CreatedPaymentIndex)
	GSI3SK       string `dynamodbav:"GSI3SK"`
	Type         string `dynamodbav:"type"`
	ID           string `dynamodbav:"id"`
	CompanyID    string `dynamodbav:"company_id"`
	ExternalID   string `dynamodbav:"external_id"`
	PayType      string `dynamodbav:"pay_type"`
	Status       string `dynamodbav:"status"`
	Amount       int64  `dynamodbav:"amount"`
	FeeAmount    int64  `dynamodbav:"fee_amount"`
	Currency     string `dynamodbav:"currency"`
	Country      string `dynamodbav:"country"`
	Operator     string `dynamodbav:"operator"`
	PhoneNumber  string `dynamodbav:"phone_number"`
	Reason       string `dynamodbav:"reason,omitempty"`
	Description  string `dynamodbav:"description,omitempty"`
	ReferenceID  string `dynamodbav:"reference_id,omitempty"`
	Lang         string `dynamodbav:"lang,omitempty"`
	NotifyURL    string `dynamodbav:"notify_url,omitempty"`
	WalletID     string `dynamodbav:"wallet_id"`
	EntryID      string `dynamodbav:"entry_id,omitempty"`
	BatchID      string `dynamodbav:"batch_id,omitempty"`
	BatchEntryID string `dynamodbav:"batch_entry_id,omitempty"`
	OrderID      string `dynamodbav:"order_id,omitempty"`
	Submission   string `dynamodbav:"submission,omitempty"`
	ErrorMessage string `dynamodbav:"error_message,omitempty"`
	Upstream     string `dynamodbav:"upstream,omitempty"`
	Correlation  string `dynamodbav:"correlation_id,omitempty"`
	CreatedAt    string `dynamodbav:"created_at"`
	WrittenAt    string `dynamodbav:"written_at,omitempty"` // a bulk item's (Payment.WrittenAt)
	UpdatedAt    string `dynamodbav:"updated_at"`
	CompletedAt  string `dynamodbav:"completed_at,omitempty"`

	ReconciliationRequired bool   `dynamodbav:"reconciliation_required"`
	NextPollAt             string `dynamodbav:"next_poll_at,omitempty"`
	ResolvedStatus         string `dynamodbav:"resolved_status,omitempty"`
	ResolvedBy             string `dynamodbav:"resolved_by,omitempty"`
	ResolutionNote         string `dynamodbav:"resolution_note,omitempty"`
	ResolvedAt             string `dynamodbav:"resolved_at,omitempty"`
}

// paymentRefItem maps a payment id to its company.
type paymentRefItem struct {
	PK        string `dynamodbav:"PK"`
	SK        string `dynamodbav:"SK"`
	Type      string `dynamodbav:"type"`
	ID        string `dynamodbav:"id"`
	CompanyID string `dynamodbav:"company_id"`
}

// externalIDItem claims an external_id for one payment.
type externalIDItem struct {
	PK            string `dynamodbav:"PK"`
	SK            string `dynamodbav:"SK"`
	Type          string `dynamodbav:"type"`
	ExternalID    string `dynamodbav:"external_id"`
	TransactionID string `dynamodbav:"transaction_id"`
}

func newPaymentItem(p payments.Payment) paymentItem {
	created := timestamp.Format(p.CreatedAt)
	it := paymentItem{
		PK:           schema.CompanyPK(p.CompanyID),
		SK:           schema.PaymentSK(p.ID),
		GSI3PK:       schema.CreatedPaymentGSI3PK(p.ID),
		GSI3SK:       schema.CreatedPaymentGSI3SK(created, p.CompanyID, p.ID),
		Type:         schema.KindPayment,
		ID:           p.ID,
		CompanyID:    p.CompanyID,
		ExternalID:   p.ExternalID,
		PayType:      string(p.Type),
		Status:       string(p.Status),
		Amount:       p.Amount,
		FeeAmount:    p.Fee,
		Currency:     p.Currency,
		Country:      p.Country,
		Operator:     p.Operator,
		PhoneNumber:  p.PhoneNumber,
		Reason:       p.Reason,
		Description:  p.Description,
		ReferenceID:  p.ReferenceID,
		Lang:         p.Lang,
		NotifyURL:    p.NotifyURL,
		WalletID:     p.WalletID,
		EntryID:      p.EntryID,
		BatchID:      p.BatchID,
		BatchEntryID: p.BatchEntryID,
		OrderID:      p.OrderID,
		Submission:   string(p.Submission),
		ErrorMessage: p.ErrorMessage,
		Upstream:     string(p.Upstream),
		Correlation:  p.CorrelationID,
		CreatedAt:    created,
		UpdatedAt:    timestamp.Format(p.UpdatedAt),
	}
	if !p.Status.Terminal() && !p.NextPollAt.IsZero() {
		it.NextPollAt = timestamp.Format(p.NextPollAt)
		it.GSI2PK = schema.OpenPaymentGSI2PK(p.ID)
		it.GSI2SK = schema.OpenPaymentGSI2SK(it.NextPollAt, p.CompanyID, p.ID)
	}
	if !p.Status.Terminal() && p.ReconciliationRequired {
		it.ReconciliationRequired = true
		it.GSI1PK, it.GSI1SK = schema.ReconcileGSI1PK, p.ID
	}
	if p.CompletedAt != nil {
		it.CompletedAt = timestamp.Format(*p.CompletedAt)
	}
	if !p.WrittenAt.IsZero() {
		it.WrittenAt = timestamp.Format(p.WrittenAt)
	}
	if r := p.Resolution; r != nil {
		it.ResolvedStatus, it.ResolvedBy, it.ResolutionNote = string(r.Status), r.By, r.Note
		it.ResolvedAt = timestamp.Format(r.At)
	}
	return it
}

func (it paymentItem) payment() (payments.Payment, error) {
	created, err := timestamp.Parse(it.CreatedAt)
	if err != nil {
		return payments.Payment{}, fmt.Errorf("store: payment %s created_at: %w", it.ID, err)
	}
	updated, err := timestamp.Parse(it.UpdatedAt)
	if err != nil {
		return payments.Payment{}, fmt.Errorf("store: payment %s updated_at: %w", it.ID, err)
	}
	p := payments.Payment{
		ID:           it.ID,
		CompanyID:    it.CompanyID,
		ExternalID:   it.ExternalID,
		Type:         payments.Type(it.PayType),
		Status:       payments.Status(it.Status),
		Amount:       it.Amount,
		Fee:          it.FeeAmount,
		Currency:     it.Currency,
		Country:      it.Country,
		Operator:     it.Operator,
		PhoneNumber:  it.PhoneNumber,
		Reason:       it.Reason,
		Description:  it.Description,
		ReferenceID:  it.ReferenceID,
		Lang:         it.Lang,
		NotifyURL:    it.NotifyURL,
		WalletID:     it.WalletID,
		EntryID:      it.EntryID,
		BatchID:      it.BatchID,
		BatchEntryID: it.BatchEntryID,
		OrderID:      it.OrderID,
		Submission:   payments.Submission(it.Submission),
		ErrorMessage: it.ErrorMessage,
		CreatedAt:    created,
		UpdatedAt:    updated,

		CorrelationID: it.Correlation,
	}
	if it.Upstream != "" {
		p.Upstream = json.RawMessage(it.Upstream)
	}
	p.ReconciliationRequired = it.ReconciliationRequired
	var completed, next, resolved time.Time
	for _, t := range []struct {
		text string
		into *time.Time
	}{{it.CompletedAt, &completed}, {it.NextPollAt, &next}, {it.ResolvedAt, &resolved}, {it.WrittenAt, &p.WrittenAt}} {
		if t.text == "" {
			continue
		}
		if *t.into, err = timestamp.Parse(t.text); err != nil {
			return payments.Payment{}, fmt.Errorf("store: payment %s: %w", it.ID, err)
		}
	}
	p.NextPollAt = next
	if it.CompletedAt != "" {
		p.CompletedAt = &completed
	}
	if it.ResolvedStatus != "" {
		p.Resolution = &payments.Resolution{Status: payments.Status(it.ResolvedStatus), By: it.ResolvedBy, Note: it.ResolutionNote, At: resolved}
	}
	return p, nil
}
