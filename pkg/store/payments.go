package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/events"
	"payments/pkg/payments"
	"payments/pkg/timestamp"
	"payments/pkg/wallets"
)

var _ payments.Store = (*Payments)(nil)

// Payments stores payment transactions (payouts and collections). In the
// company partition (COMPANY#<id>):
//
//   - PAY#<transaction id>: the payment; the id is a UUID v7 of its
//     created_at, so a Query on the prefix lists payments by time. While
//     the payment is not terminal it also carries GSI2 keys in the sparse
//     partition OPEN_PAYMENT (GSI2SK "<created_at>#<company id>#<id>"),
//     which is how the sweeper finds stale ones; the final transition
//     removes them.
//   - EXTID#<external_id>: the claim that makes an external_id unique in
//     the company, payouts and collections alike.
//
// Acceptance and every transition are one TransactWriteItems each, with the
// wallet, the ledger and the outbox event (see docs/payments.md).
type Payments struct {
	db      *DB
	wallets *Wallets
	tx      transactWriter
	// backoff returns the wait before retry n (1-based) of a transaction
	// that DynamoDB cancelled for a conflict.
	backoff func(n int) time.Duration
}

// transactWriter is the one DynamoDB call that composes a payment's
// writes; tests put a fault injector in front of it.
type transactWriter interface {
	TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
}

// NewPayments returns the payments store on db.
func NewPayments(db *DB) *Payments {
	return &Payments{db: db, wallets: NewWallets(db), tx: db.Client, backoff: conflictBackoff}
}

// conflictAttempts bounds the tries of a transaction that DynamoDB keeps
// cancelling with TransactionConflict.
const conflictAttempts = 8

// conflictBackoff waits a random time of up to 10 ms × 2^(n−1), at most
// 320 ms: contending writers spread out.
func conflictBackoff(n int) time.Duration {
	ceiling := min(10*time.Millisecond<<(n-1), 320*time.Millisecond)
	return time.Duration(rand.Int64N(int64(ceiling)) + 1)
}

// Item kinds and keys of payments.
const (
	kindPayment        = "payment"
	kindExternalID     = "external_id"
	paymentSKPrefix    = "PAY#"
	openPaymentsGSI2PK = "OPEN_PAYMENT"
)

// paymentSK is the sort key of a payment in its company's partition.
func paymentSK(id string) string { return paymentSKPrefix + id }

// externalIDSK is the sort key of the claim of an external_id.
func externalIDSK(externalID string) string { return "EXTID#" + externalID }

// openPaymentGSI2SK orders open payments by creation time and names them.
func openPaymentGSI2SK(createdAt, companyID, id string) string {
	return createdAt + "#" + companyID + "#" + id
}

// paymentItem is a payment as stored.
type paymentItem struct {
	PK           string `dynamodbav:"PK"`
	SK           string `dynamodbav:"SK"`
	GSI2PK       string `dynamodbav:"GSI2PK,omitempty"`
	GSI2SK       string `dynamodbav:"GSI2SK,omitempty"`
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
	OrderID      string `dynamodbav:"order_id,omitempty"`
	ErrorMessage string `dynamodbav:"error_message,omitempty"`
	Upstream     string `dynamodbav:"upstream,omitempty"`
	CreatedAt    string `dynamodbav:"created_at"`
	UpdatedAt    string `dynamodbav:"updated_at"`
	CompletedAt  string `dynamodbav:"completed_at,omitempty"`
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
		PK:           companyPK(p.CompanyID),
		SK:           paymentSK(p.ID),
		Type:         kindPayment,
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
		OrderID:      p.OrderID,
		ErrorMessage: p.ErrorMessage,
		Upstream:     string(p.Upstream),
		CreatedAt:    created,
		UpdatedAt:    timestamp.Format(p.UpdatedAt),
	}
	if !p.Status.Terminal() {
		it.GSI2PK = openPaymentsGSI2PK
		it.GSI2SK = openPaymentGSI2SK(created, p.CompanyID, p.ID)
	}
	if p.CompletedAt != nil {
		it.CompletedAt = timestamp.Format(*p.CompletedAt)
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
		OrderID:      it.OrderID,
		ErrorMessage: it.ErrorMessage,
		CreatedAt:    created,
		UpdatedAt:    updated,
	}
	if it.Upstream != "" {
		p.Upstream = json.RawMessage(it.Upstream)
	}
	if it.CompletedAt != "" {
		c, err := timestamp.Parse(it.CompletedAt)
		if err != nil {
			return payments.Payment{}, fmt.Errorf("store: payment %s completed_at: %w", it.ID, err)
		}
		p.CompletedAt = &c
	}
	return p, nil
}

// paymentPut returns the transaction item that writes p as new.
func (s *Payments) paymentPut(p payments.Payment) (types.TransactWriteItem, error) {
	item, err := attributevalue.MarshalMap(newPaymentItem(p))
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("store: marshal payment: %w", err)
	}
	return s.wallets.putNew(item), nil
}

// externalIDPut returns the transaction item that claims p's external_id.
func (s *Payments) externalIDPut(p payments.Payment) (types.TransactWriteItem, error) {
	item, err := attributevalue.MarshalMap(externalIDItem{
		PK: companyPK(p.CompanyID), SK: externalIDSK(p.ExternalID), Type: kindExternalID,
		ExternalID: p.ExternalID, TransactionID: p.ID,
	})
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("store: marshal external_id claim: %w", err)
	}
	return s.wallets.putNew(item), nil
}

// CreatePayout writes the acceptance of a payout in one transaction: [0]
// the wallet's reservation (payout_reserved and payout_available move by
// the total, on the condition payout_available >= total and is_active),
// [1] the payment, [2] the external_id claim, [3] the reservation entry,
// [4] the event. A cancellation for a conflict is retried with jittered
// back-off, then payments.ErrBusy.
func (s *Payments) CreatePayout(ctx context.Context, p payments.Payment, reservation wallets.Transaction, ev events.Event) error {
	wallet := s.wallets.walletAdjustment(p.CompanyID, p.WalletID, wallets.Adjustment{Reserved: p.Total()}, 0, p.CreatedAt)
	u := wallet.Update
	u.ConditionExpression = aws.String(aws.ToString(u.ConditionExpression) + " AND #active = :active")
	u.ExpressionAttributeNames["#active"] = "is_active"
	u.ExpressionAttributeValues[":active"] = &types.AttributeValueMemberBOOL{Value: true}
	items := []types.TransactWriteItem{wallet}
	payment, err := s.paymentPut(p)
	if err != nil {
		return err
	}
	claim, err := s.externalIDPut(p)
	if err != nil {
		return err
	}
	entry, err := s.wallets.ledgerPut(reservation)
	if err != nil {
		return err
	}
	event, err := eventPut(s.db.Table, ev)
	if err != nil {
		return err
	}
	items = append(items, payment, claim, entry, event)
	return s.write(ctx, "create payout "+p.ID, items, func(reasons []string) error {
		switch {
		case reasons[2] == "ConditionalCheckFailed":
			return payments.ErrDuplicateExternalID
		case reasons[0] == "ConditionalCheckFailed":
			return s.whyRefused(ctx, p.CompanyID, p.WalletID)
		}
		return nil
	}, payments.ErrBusy)
}

// whyRefused tells why a reservation's wallet condition failed.
func (s *Payments) whyRefused(ctx context.Context, companyID, walletID string) error {
	w, err := s.wallets.GetWallet(ctx, companyID, walletID)
	switch {
	case err != nil:
		return err
	case !w.IsActive:
		return wallets.ErrInactive
	}
	return payments.ErrInsufficientBalance
}

// CreateCollection writes the acceptance of a collection in one
// transaction: [0] the payment, [1] the external_id claim, [2] the event.
func (s *Payments) CreateCollection(ctx context.Context, p payments.Payment, ev events.Event) error {
	payment, err := s.paymentPut(p)
	if err != nil {
		return err
	}
	claim, err := s.externalIDPut(p)
	if err != nil {
		return err
	}
	event, err := eventPut(s.db.Table, ev)
	if err != nil {
		return err
	}
	return s.write(ctx, "create collection "+p.ID, []types.TransactWriteItem{payment, claim, event}, func(reasons []string) error {
		if reasons[1] == "ConditionalCheckFailed" {
			return payments.ErrDuplicateExternalID
		}
		return nil
	}, payments.ErrBusy)
}

// write runs one transaction. When DynamoDB cancels it, refused maps the
// reason codes (one per item) to an error, or nil when no condition it
// knows failed; a conflict is then retried with back-off, at most
// conflictAttempts times, and ends in busy.
func (s *Payments) write(ctx context.Context, what string, items []types.TransactWriteItem, refused func([]string) error, busy error) error {
	in := &dynamodb.TransactWriteItemsInput{TransactItems: items}
	for attempt := 1; ; attempt++ {
		_, err := s.tx.TransactWriteItems(ctx, in)
		if err == nil {
			return nil
		}
		if reasons := cancelReasons(err); len(reasons) == len(items) {
			if err := refused(reasons); err != nil {
				return err
			}
			for i, r := range reasons {
				if r == "ConditionalCheckFailed" {
					return fmt.Errorf("store: %s: condition of item %d failed", what, i)
				}
			}
		}
		if !transactionConflict(err) {
			return fmt.Errorf("store: %s: %w", what, err)
		}
		if attempt == conflictAttempts {
			return fmt.Errorf("store: %s after %d conflicts: %w", what, attempt, busy)
		}
		t := time.NewTimer(s.backoff(attempt))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// ApplyTransition writes t in one transaction: [0] the payment, replaced on
// the condition that its status is still t.From (its GSI2 keys go with a
// terminal status); then, as t asks, the wallet adjustment conditioned on
// t.Wallet.Version, the reservation entry's change conditioned on its
// status, the new ledger entries and the event. A payment that moved on is
// payments.ErrStatusChanged; a wallet that moved on, or conflicts beyond
// the retries, wallets.ErrStale.
func (s *Payments) ApplyTransition(ctx context.Context, t payments.Transition) error {
	p := t.Payment
	item, err := attributevalue.MarshalMap(newPaymentItem(p))
	if err != nil {
		return fmt.Errorf("store: marshal payment: %w", err)
	}
	items := []types.TransactWriteItem{{Put: &types.Put{
		TableName:                aws.String(s.db.Table),
		Item:                     item,
		ConditionExpression:      aws.String("#status = :from"),
		ExpressionAttributeNames: map[string]string{"#status": "status"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":from": &types.AttributeValueMemberS{Value: string(t.From)},
		},
	}}}
	walletAt := -1
	if t.Wallet != nil {
		walletAt = len(items)
		items = append(items, s.wallets.walletAdjustment(p.CompanyID, t.Wallet.ID, t.Adjust, t.Wallet.Version, t.Now))
	}
	if t.Entry != nil {
		items = append(items, s.entryChange(p.CompanyID, *t.Entry))
	}
	for _, e := range t.NewEntries {
		put, err := s.wallets.ledgerPut(e)
		if err != nil {
			return err
		}
		items = append(items, put)
	}
	if t.Event.ID != "" {
		event, err := eventPut(s.db.Table, t.Event)
		if err != nil {
			return err
		}
		items = append(items, event)
	}
	return s.write(ctx, fmt.Sprintf("move payment %s from %s to %s", p.ID, t.From, p.Status), items, func(reasons []string) error {
		switch {
		case reasons[0] == "ConditionalCheckFailed":
			return payments.ErrStatusChanged
		case walletAt >= 0 && reasons[walletAt] == "ConditionalCheckFailed":
			w, err := s.wallets.GetWallet(ctx, p.CompanyID, t.Wallet.ID)
			if err != nil {
				return err
			}
			if w.Version == t.Wallet.Version {
				return fmt.Errorf("store: wallet %s at version %d refuses adjustment %+v", w.ID, w.Version, t.Adjust)
			}
			return fmt.Errorf("store: wallet %s at version %d, not %d: %w", w.ID, w.Version, t.Wallet.Version, wallets.ErrStale)
		}
		return nil
	}, wallets.ErrStale)
}

// entryChange returns the transaction item that moves a ledger entry from
// c.From to c.To with its new delta, reservation, balances and completion.
func (s *Payments) entryChange(companyID string, c payments.EntryChange) types.TransactWriteItem {
	num := func(n int64) types.AttributeValue {
		return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
	}
	str := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	names := map[string]string{"#st": "status", "#delta": "delta", "#res": "reserved"}
	values := map[string]types.AttributeValue{
		":from": str(string(c.From)), ":to": str(string(c.To)), ":delta": num(c.Delta), ":res": num(c.Reserved),
	}
	set := []string{"#st = :to", "#delta = :delta", "#res = :res"}
	add := func(attr, placeholder string, v types.AttributeValue) {
		names["#"+placeholder] = attr
		values[":"+placeholder] = v
		set = append(set, "#"+placeholder+" = :"+placeholder)
	}
	if c.OrderID != "" {
		add("order_id", "order", str(c.OrderID))
	}
	if c.BalanceBefore != nil {
		add("wallet_balance_before", "before", num(*c.BalanceBefore))
	}
	if c.BalanceAfter != nil {
		add("wallet_balance_after", "after", num(*c.BalanceAfter))
	}
	if c.CompletedAt != nil {
		add("completed_at", "done", str(timestamp.Format(*c.CompletedAt)))
	}
	return types.TransactWriteItem{Update: &types.Update{
		TableName:                 aws.String(s.db.Table),
		Key:                       primaryKeyOf(companyPK(companyID), ledgerSK(c.ID)),
		UpdateExpression:          aws.String("SET " + strings.Join(set, ", ")),
		ConditionExpression:       aws.String("#st = :from"),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	}}
}

// GetPayment reads a payment of the company, strongly consistent.
func (s *Payments) GetPayment(ctx context.Context, companyID, id string) (payments.Payment, error) {
	var it paymentItem
	found, err := s.db.getItem(ctx, companyPK(companyID), paymentSK(id), &it)
	if err != nil {
		return payments.Payment{}, fmt.Errorf("store: get payment %s: %w", id, err)
	}
	if !found {
		return payments.Payment{}, payments.ErrNotFound
	}
	return it.payment()
}

// ListPayments returns the company's payments created in [from, to), newest
// first, strongly consistent. The bounds become a range of sort keys
// (payment ids are UUID v7 of their created_at), refined on created_at.
func (s *Payments) ListPayments(ctx context.Context, companyID string, from, to time.Time) ([]payments.Payment, error) {
	lo, hi := timeRange(paymentSKPrefix, from, to)
	items, err := s.wallets.query(ctx, &dynamodb.QueryInput{
		TableName:              aws.String(s.db.Table),
		KeyConditionExpression: aws.String("PK = :pk AND SK BETWEEN :lo AND :hi"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: companyPK(companyID)},
			":lo": &types.AttributeValueMemberS{Value: lo},
			":hi": &types.AttributeValueMemberS{Value: hi},
		},
		ScanIndexForward: aws.Bool(false),
		ConsistentRead:   aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("store: list payments: %w", err)
	}
	out, err := decodeAll(items, paymentItem.payment)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(out, func(p payments.Payment) bool {
		return (!from.IsZero() && p.CreatedAt.Before(from)) || (!to.IsZero() && !p.CreatedAt.Before(to))
	}), nil
}

// OpenPayments returns up to limit non-terminal payments created before
// cutoff, oldest first, from the sparse OPEN_PAYMENT partition of GSI2
// (eventually consistent: the caller reads each again).
func (s *Payments) OpenPayments(ctx context.Context, cutoff time.Time, limit int) ([]payments.Ref, error) {
	in := &dynamodb.QueryInput{
		TableName:              aws.String(s.db.Table),
		IndexName:              aws.String(GSI2),
		KeyConditionExpression: aws.String("GSI2PK = :pk AND GSI2SK < :cut"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk":  &types.AttributeValueMemberS{Value: openPaymentsGSI2PK},
			":cut": &types.AttributeValueMemberS{Value: timestamp.Format(cutoff)},
		},
		ProjectionExpression:     aws.String("#sk"),
		ExpressionAttributeNames: map[string]string{"#sk": attrGSI2SK},
	}
	var refs []payments.Ref
	p := dynamodb.NewQueryPaginator(s.db.Client, in)
	for p.HasMorePages() && len(refs) < limit {
		out, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("store: query open payments: %w", err)
		}
		for _, item := range out.Items {
			sk, _ := item[attrGSI2SK].(*types.AttributeValueMemberS)
			if sk == nil {
				continue
			}
			parts := strings.SplitN(sk.Value, "#", 3)
			if len(parts) != 3 {
				return nil, errors.New("store: malformed open payment key " + sk.Value)
			}
			at, err := timestamp.Parse(parts[0])
			if err != nil {
				return nil, fmt.Errorf("store: open payment key %s: %w", sk.Value, err)
			}
			refs = append(refs, payments.Ref{CreatedAt: at, CompanyID: parts[1], ID: parts[2]})
			if len(refs) == limit {
				break
			}
		}
	}
	return refs, nil
}
