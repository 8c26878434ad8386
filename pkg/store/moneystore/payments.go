package moneystore

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/events"
	"payments/pkg/page"
	"payments/pkg/payments"
	"payments/pkg/store"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
	"payments/pkg/timestamp"
	"payments/pkg/wallets"
)

var _ payments.Store = (*Payments)(nil)

// Payments stores payment transactions (payouts and collections). In the
// company partition (COMPANY#<id>):
//
//   - PAY#<transaction id>: the payment; the id is a UUID v7 of its
//     created_at, so a Query on the prefix lists payments by time. While
//     the worker expects to handle the payment (NextPollAt set) it also
//     carries GSI2 keys in one of the schema.IndexShards partitions
//     OPEN_PAYMENT#<nn> (GSI2SK "<next_poll_at>#<company id>#<id>"), which
//     is how the sweeper finds payments whose message was lost; while it is
//     flagged for reconciliation it carries GSI1 keys in the partition
//     RECONCILE (GSI1SK its id), the operator console's list. A final
//     transition removes both.
//   - EXTID#<external_id>: the claim that makes an external_id unique in
//     the company, payouts and collections alike.
//
// Outside it, PAYREF#<transaction id> maps a payment to its company for the
// operator console. Acceptance and every transition are one
// TransactWriteItems each, with the wallet, the ledger and the outbox event
// (see docs/payments.md).
type Payments struct {
	db      *store.DB
	wallets *Wallets
}

// NewPayments returns the payments store on db.
func NewPayments(db *store.DB) *Payments {
	return &Payments{db: db, wallets: NewWallets(db)}
}

// acceptance returns the items every acceptance writes: the payment (the
// effect ctx's Idempotency-Key records, RecordEffect), the claim of its
// external_id, its id lookup and the event.
func (s *Payments) acceptance(ctx context.Context, p payments.Payment, ev events.Event) (*store.Txn, error) {
	payment, err := attributevalue.MarshalMap(newPaymentItem(p))
	if err != nil {
		return nil, fmt.Errorf("store: marshal payment: %w", err)
	}
	claim, err := attributevalue.MarshalMap(externalIDItem{
		PK: schema.CompanyPK(p.CompanyID), SK: schema.ExternalIDSK(p.ExternalID), Type: schema.KindExternalID,
		ExternalID: p.ExternalID, TransactionID: p.ID,
	})
	if err != nil {
		return nil, fmt.Errorf("store: marshal external_id claim: %w", err)
	}
	ref, err := s.paymentRefPut(p)
	if err != nil {
		return nil, err
	}
	t := &store.Txn{}
	s.db.RecordEffect(ctx, t, p.ID, nil)
	t.Add("payment", s.wallets.putNew(payment))
	t.Add("external_id", s.wallets.putNew(claim))
	t.Add("payment_ref", ref)
	t.Creates(p.ID)
	t.AddEvent(schema.EventItem, ev)
	return t, nil
}

// paymentRefPut returns the transaction item that writes p's id lookup as
// new.
func (s *Payments) paymentRefPut(p payments.Payment) (types.TransactWriteItem, error) {
	ref, err := attributevalue.MarshalMap(paymentRefItem{
		PK: schema.PaymentRefPK(p.ID), SK: schema.PaymentRefSK, Type: schema.KindPaymentRef, ID: p.ID, CompanyID: p.CompanyID,
	})
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("store: marshal payment ref: %w", err)
	}
	return s.wallets.putNew(ref), nil
}

// CreatePayout writes the acceptance of a payout in one transaction: the
// acceptance items and its posting (post): the wallet's reservation
// (payout_reserved and payout_available move by the total, on the
// condition payout_available >= total and is_active) and the reservation
// entry.
func (s *Payments) CreatePayout(ctx context.Context, p payments.Payment, reservation wallets.Transaction, ev events.Event) error {
	posting, err := wallets.NewPosting(p.CompanyID, p.CreatedAt, wallets.Leg{
		WalletID: p.WalletID, Adjust: wallets.Adjustment{Reserved: p.Total()}, ActiveOnly: true,
		Entries: []wallets.Transaction{reservation},
	})
	if err != nil {
		return fmt.Errorf("store: payout %s: %w", p.ID, err)
	}
	return s.db.Commit(ctx, "create payout "+p.ID, func(ctx context.Context) (*store.Txn, error) {
		t, err := s.acceptance(ctx, p, ev)
		if err != nil {
			return nil, err
		}
		if _, err := s.wallets.post(ctx, t, posting); err != nil {
			return nil, err
		}
		return t, nil
	}, func(ctx context.Context, c dynamo.Cancellation) error {
		switch {
		case c.Failed("external_id"):
			return payments.ErrDuplicateExternalID
		case c.Failed(schema.WalletItem):
			return s.wallets.whyRefusedActive(ctx, p.CompanyID, p.WalletID, wallets.ErrInsufficientBalance)
		}
		return nil
	})
}

// CreateCollection writes the acceptance of a collection in one
// transaction.
func (s *Payments) CreateCollection(ctx context.Context, p payments.Payment, ev events.Event) error {
	t, err := s.acceptance(ctx, p, ev)
	if err != nil {
		return err
	}
	return s.db.CommitOnce(ctx, "create collection "+p.ID, t, func(_ context.Context, c dynamo.Cancellation) error {
		if c.Failed("external_id") {
			return payments.ErrDuplicateExternalID
		}
		return nil
	})
}

// ApplyTransition writes t in one transaction: the payment, replaced on the
// condition that its status is still t.From (and, with t.Flagged, that it
// is flagged for reconciliation); then, as t asks, the wallet adjustment,
// the reservation entry's change conditioned on its status, the new ledger
// entries and the event. When the transition records balances, the wallet
// is read first for them (see Wallets.post). The payment's status condition
// and the adjustment's own (no balance below 0: payout_reserved covers
// what a settlement releases) keep the money right, so the write waits for
// no other write of the wallet. A payment that moved on is
// payments.ErrStatusChanged.
func (s *Payments) ApplyTransition(ctx context.Context, t payments.Transition) error {
	p := t.Payment
	item, err := attributevalue.MarshalMap(newPaymentItem(p))
	if err != nil {
		return fmt.Errorf("store: marshal payment: %w", err)
	}
	cond := "#status = :from" + notSubmittedCondition(p)
	values := map[string]types.AttributeValue{":from": &types.AttributeValueMemberS{Value: string(t.From)}}
	if t.Flagged {
		cond += " AND reconciliation_required = :flagged"
		values[":flagged"] = &types.AttributeValueMemberBOOL{Value: true}
	}
	addNotSubmitted(p, values)
	payment := types.TransactWriteItem{Put: &types.Put{
		TableName:                 aws.String(s.db.Table),
		Item:                      item,
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeNames:  map[string]string{"#status": "status"},
		ExpressionAttributeValues: values,
	}}
	leg := wallets.Leg{WalletID: p.WalletID, Adjust: t.Adjust, Entries: t.NewEntries}
	if t.Draw != nil {
		leg.Draws = []wallets.EntryDraw{*t.Draw}
	}
	if e := t.Entry; e != nil { // a payout's reservation, on the payout balance
		leg.Updates = []wallets.EntryUpdate{{
			ID: e.ID, Balance: wallets.Payout, From: e.From, To: e.To, Delta: e.Delta, Held: e.Held, Reserved: e.Reserved,
			OrderID: e.OrderID, CompletedAt: e.CompletedAt,
		}}
	}
	posting, err := wallets.NewPosting(p.CompanyID, t.Now, leg)
	if err != nil {
		return fmt.Errorf("store: payment %s: %w", p.ID, err)
	}
	what := fmt.Sprintf("move payment %s from %s to %s", p.ID, t.From, p.Status)
	return s.db.Commit(ctx, what, func(ctx context.Context) (*store.Txn, error) {
		tx := &store.Txn{}
		tx.Add("payment", payment)
		if p.BatchID != "" {
			tx.Add(schema.BatchItem, s.batchCount(p, t.From))
		}
		if t.Event.ID != "" {
			tx.AddEvent(schema.EventItem, t.Event)
		}
		if _, err := s.wallets.post(ctx, tx, posting); err != nil {
			return nil, err
		}
		return tx, nil
	}, func(ctx context.Context, c dynamo.Cancellation) error {
		switch {
		case c.Failed("payment"):
			return payments.ErrStatusChanged
		case c.Failed(schema.WalletItem):
			return s.wallets.whyRefused(ctx, p.CompanyID, p.WalletID)
		}
		return nil
	})
}

// Reschedule writes p's NextPollAt and reconciliation flag (with their
// index keys), on the condition that the payment is still in p.Status and
// expects prevDue. A zero prevDue adopts a payment written before payments
// recorded their next poll: its id lookup (PAYREF), which it lacks, is
// written in the same transaction.
func (s *Payments) Reschedule(ctx context.Context, p payments.Payment, prevDue time.Time) error {
	item, err := attributevalue.MarshalMap(newPaymentItem(p))
	if err != nil {
		return fmt.Errorf("store: marshal payment: %w", err)
	}
	if prevDue.IsZero() {
		return s.adopt(ctx, p, item)
	}
	values := map[string]types.AttributeValue{
		":status": &types.AttributeValueMemberS{Value: string(p.Status)},
		":due":    &types.AttributeValueMemberS{Value: timestamp.Format(prevDue)},
	}
	addNotSubmitted(p, values)
	err = s.db.Put(ctx, "reschedule payment "+p.ID, &dynamodb.PutItemInput{
		TableName:                 aws.String(s.db.Table),
		Item:                      item,
		ConditionExpression:       aws.String("#status = :status AND next_poll_at = :due" + notSubmittedCondition(p)),
		ExpressionAttributeNames:  map[string]string{"#status": "status"},
		ExpressionAttributeValues: values,
	})
	if dynamo.ConditionFailed(err) {
		return payments.ErrStatusChanged
	}
	return err
}

// notSubmittedCondition is the part of the condition of a write of the
// whole payment p that keeps the worker's record of a submission: a p read
// as NotSubmitted is written only over a payment still NotSubmitted, so a
// copy read before MarkSubmitting never takes the record back (nor fails,
// as unsent, a payment being submitted). Its value is addNotSubmitted's.
func notSubmittedCondition(p payments.Payment) string {
	if p.Submission != payments.NotSubmitted {
		return ""
	}
	return " AND submission = :not_submitted"
}

// addNotSubmitted adds the value of notSubmittedCondition to values.
func addNotSubmitted(p payments.Payment, values map[string]types.AttributeValue) {
	if p.Submission == payments.NotSubmitted {
		values[":not_submitted"] = &types.AttributeValueMemberS{Value: string(payments.NotSubmitted)}
	}
}

// MarkSubmitting records that the worker is about to send the payment to
// the operator, on the condition that it is still PENDING.
func (s *Payments) MarkSubmitting(ctx context.Context, companyID, id string) error {
	_, err := s.db.Update(ctx, "mark payment "+id+" submitting", &dynamodb.UpdateItemInput{
		TableName:                aws.String(s.db.Table),
		Key:                      dynamo.Key(schema.CompanyPK(companyID), schema.PaymentSK(id)),
		UpdateExpression:         aws.String("SET submission = :submitting"),
		ConditionExpression:      aws.String("#status = :pending"),
		ExpressionAttributeNames: map[string]string{"#status": "status"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":submitting": &types.AttributeValueMemberS{Value: string(payments.Submitting)},
			":pending":    &types.AttributeValueMemberS{Value: string(payments.StatusPending)},
		},
	})
	if dynamo.ConditionFailed(err) {
		return payments.ErrStatusChanged
	}
	return err
}

// adopt writes item, the payment p with its first NextPollAt, and its id
// lookup in one transaction, on the condition that the payment is still in
// p.Status with no NextPollAt.
func (s *Payments) adopt(ctx context.Context, p payments.Payment, item map[string]types.AttributeValue) error {
	ref, err := s.paymentRefPut(p)
	if err != nil {
		return err
	}
	t := &store.Txn{}
	t.Add("payment", types.TransactWriteItem{Put: &types.Put{
		TableName:                aws.String(s.db.Table),
		Item:                     item,
		ConditionExpression:      aws.String("#status = :status AND attribute_not_exists(next_poll_at)"),
		ExpressionAttributeNames: map[string]string{"#status": "status"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":status": &types.AttributeValueMemberS{Value: string(p.Status)},
		},
	}})
	t.Add("payment_ref", ref)
	return s.db.CommitOnce(ctx, "adopt payment "+p.ID, t, func(_ context.Context, c dynamo.Cancellation) error {
		if c.Failed("payment") || c.Failed("payment_ref") {
			return payments.ErrStatusChanged
		}
		return nil
	})
}

// GetPayment reads a payment of the company, strongly consistent.
func (s *Payments) GetPayment(ctx context.Context, companyID, id string) (payments.Payment, error) {
	var it paymentItem
	if err := s.db.Get(ctx, "payment "+id, schema.CompanyPK(companyID), schema.PaymentSK(id), &it, payments.ErrNotFound); err != nil {
		return payments.Payment{}, err
	}
	return it.payment()
}

// ListPayments reads page p of the company's payments that match q, newest
// first, strongly consistent (ReadPage). The dates become a range of sort
// keys (payment ids are UUID v7 of their created_at); status, type,
// external_id and reconciliation_required are a FilterExpression.
func (s *Payments) ListPayments(ctx context.Context, companyID string, q payments.Query, p page.Request) (page.Result[payments.Payment], error) {
	lo, hi := dynamo.TimeRange(schema.PaymentSKPrefix, q.From, q.To)
	l := dynamo.Listing{
		PKAttr: schema.AttrPK, SKAttr: schema.AttrSK, PK: schema.CompanyPK(companyID),
		Prefix: schema.PaymentSKPrefix, Lo: lo, Hi: hi, Consistent: true,
		Filter: paymentFilter(q),
	}
	rows, total, next, err := s.db.ReadPage(ctx, l, p)
	if err != nil {
		return page.Result[payments.Payment]{}, fmt.Errorf("store: list payments: %w", err)
	}
	return dynamo.PageOf(rows, total, next, paymentItem.payment)
}

// paymentFilter is the FilterExpression of the fields of q that are not
// keys.
func paymentFilter(q payments.Query) dynamo.Filter {
	var f dynamo.Filter
	if q.Status != "" {
		f.Equal("status", string(q.Status))
	}
	if q.Type != "" {
		f.Equal("pay_type", string(q.Type))
	}
	if q.ExternalID != "" {
		f.Contains("external_id", q.ExternalID)
	}
	switch r := q.ReconciliationRequired; {
	case r != nil && *r:
		f.Equal("reconciliation_required", true)
	case r != nil:
		f.NotEqual("reconciliation_required", true) // an item from before the flag has none
	}
	return f
}
