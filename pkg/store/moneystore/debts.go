package moneystore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/debts"
	"payments/pkg/events"
	"payments/pkg/ids"
	"payments/pkg/page"
	"payments/pkg/store"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
	"payments/pkg/timestamp"
	"payments/pkg/wallets"
)

var _ debts.Store = (*Debts)(nil)

// Debts stores the fees a company owes (package debts). In the company
// partition (COMPANY#<id>):
//
//   - DEBT#<uuid v7>: the debt;
//   - PENDINGDEBT#<uuid v7>: a copy of it while it is pending, deleted
//     when it is paid in full, so that the pending debts are one strongly
//     consistent Query of these markers, oldest first, whose cost follows
//     what is pending, not the company's history.
//
// The card fee code adds a debt inside its own transaction (addDebt); a
// credit to a USD wallet's payout balance pays the pending debts inside
// its own (Wallets.post, by recoverDebts).
type Debts struct{ db *store.DB }

// NewDebts returns the debts store on db.
func NewDebts(db *store.DB) *Debts { return &Debts{db: db} }

// itemsPerPayment is the number of items a debt payment adds to the
// credit's transaction: the debt, its marker, a FEE ledger entry and a
// debt.recovered event. The debt and its marker keep the counter of the
// debt's events (seq, store.Txn.Counts) under the condition a payment puts on
// them, so a payment adds no counter item.
const itemsPerPayment = 4

// debtItem is a debt, or its pending marker, as stored. DynamoDB Local
// refuses empty strings: an empty optional string is absent.
type debtItem struct {
	PK            string `dynamodbav:"PK"`
	SK            string `dynamodbav:"SK"`
	Type          string `dynamodbav:"type"`
	ID            string `dynamodbav:"id"`
	CompanyID     string `dynamodbav:"company_id"`
	FeeType       string `dynamodbav:"fee_type"`
	TransactionID string `dynamodbav:"transaction_id,omitempty"`
	CardID        string `dynamodbav:"card_id,omitempty"`
	CustomerID    string `dynamodbav:"customer_id,omitempty"`
	Amount        int64  `dynamodbav:"amount"`
	Remaining     int64  `dynamodbav:"remaining"`
	Status        string `dynamodbav:"status"`
	CreatedAt     string `dynamodbav:"created_at"`
	RecoveredAt   string `dynamodbav:"recovered_at,omitempty"`
	// Seq is the number of the last event about the debt (store.Txn.Counts).
	Seq int64 `dynamodbav:"seq,omitempty"`
}

func newDebtItem(d debts.Debt, sk, kind string) debtItem {
	it := debtItem{
		PK: schema.CompanyPK(d.CompanyID), SK: sk, Type: kind,
		ID: d.ID, CompanyID: d.CompanyID, FeeType: d.FeeType,
		TransactionID: d.TransactionID, CardID: d.CardID, CustomerID: d.CustomerID,
		Amount: d.Amount, Remaining: d.Remaining, Status: string(d.Status),
		CreatedAt: timestamp.Format(d.CreatedAt),
	}
	if d.RecoveredAt != nil {
		it.RecoveredAt = timestamp.Format(*d.RecoveredAt)
	}
	return it
}

func (it debtItem) debt() (debts.Debt, error) {
	created, err := timestamp.Parse(it.CreatedAt)
	if err != nil {
		return debts.Debt{}, fmt.Errorf("store: debt %s created_at: %w", it.ID, err)
	}
	d := debts.Debt{
		ID: it.ID, CompanyID: it.CompanyID, FeeType: it.FeeType,
		TransactionID: it.TransactionID, CardID: it.CardID, CustomerID: it.CustomerID,
		Amount: it.Amount, Remaining: it.Remaining, Status: debts.Status(it.Status), CreatedAt: created,
	}
	if it.RecoveredAt != "" {
		at, err := timestamp.Parse(it.RecoveredAt)
		if err != nil {
			return debts.Debt{}, fmt.Errorf("store: debt %s recovered_at: %w", it.ID, err)
		}
		d.RecoveredAt = &at
	}
	return d, nil
}

// addDebt adds the new pending debt d to t: its record, named "debt", and
// its marker, named "debt_pending", each on the condition that it is new,
// counting the events about d that t emits (store.Txn.Counts).
func addDebt(t *store.Txn, table string, d debts.Debt) error {
	if !ids.IsUUID(d.ID) || d.CompanyID == "" || d.Status != debts.Pending || d.Remaining <= 0 || d.Remaining > d.Amount {
		return fmt.Errorf("store: debt %q of company %q: not a new pending debt (%s, %d of %d)", d.ID, d.CompanyID, d.Status, d.Remaining, d.Amount)
	}
	for _, it := range []struct {
		name string
		item debtItem
	}{
		{schema.DebtItem, newDebtItem(d, schema.DebtSK(d.ID), schema.KindDebt)},
		{schema.PendingDebtItem, newDebtItem(d, schema.PendingDebtSK(d.ID), schema.KindPendingDebt)},
	} {
		it.item.Seq = t.EventsAbout(d.ID)
		item, err := attributevalue.MarshalMap(it.item)
		if err != nil {
			return fmt.Errorf("store: marshal debt: %w", err)
		}
		t.Add(it.name, types.TransactWriteItem{Put: &types.Put{
			TableName: aws.String(table), Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)"),
		}})
	}
	t.Counts(d.ID, 0)
	return nil
}

// recoverDebts adds to t the payment of the company's pending debts, oldest
// first, out of a credit of credit cents to the payout balance of its USD
// wallet walletID: for each debt paid, its record ("debt<n>") and its
// marker ("debtmark<n>", deleted when the debt is paid in full), each on
// the condition that the remaining amount is still the one read. It pays
// as many debts as the transaction has room for, reserve being the items
// the transaction will hold that t does not count yet (Wallets.post's own,
// which it adds last) besides the payments' entries and events (t.Len
// counts the events t emits and their counters); the debts
// left over wait for the next credit. It returns the
// amount recovered, the FEE ledger entries of the payments (without their
// balances before and after, which the caller sets in sequence with its
// own entries) and the debt.recovered events.
//
// The caller (Wallets.post) adds the entries and the events to t, takes
// recovered off its wallet adjustment, and answers dynamo.ErrRetry when a "debt…" item of t failed
// (debtRaced), so that the transaction is built again from fresh reads.
func (s *Wallets) recoverDebts(ctx context.Context, t *store.Txn, companyID, walletID string, credit int64, reserve int, now time.Time) (recovered int64, entries []wallets.Transaction, evs []events.Event, err error) {
	room := (s.db.MaxTransactItems - t.Len() - reserve) / itemsPerPayment
	if credit <= 0 || room <= 0 {
		return 0, nil, nil, nil
	}
	pending, seqs, err := s.pendingDebts(ctx, companyID, room)
	if err != nil {
		return 0, nil, nil, err
	}
	for i, p := range debts.Plan(pending, credit) {
		seq := seqs[p.Debt.ID]
		record, marker := s.debtPayment(p, seq+1, now)
		t.Counts(p.Debt.ID, seq)
		t.Add(schema.Nth(schema.DebtItem, i), record)
		t.Add(schema.Nth(schema.DebtMarkItems, i), marker)
		e := p.Entry(ids.NewV7(now), walletID, now)
		ev, err := p.Event(walletID, e.ID, now)
		if err != nil {
			return 0, nil, nil, err
		}
		recovered += p.Amount
		entries = append(entries, e)
		evs = append(evs, ev)
	}
	return recovered, entries, evs, nil
}

// pendingDebts reads up to limit of the company's pending debts, oldest
// first, strongly consistent, from their markers, with the number of the
// last event about each, by id.
func (s *Wallets) pendingDebts(ctx context.Context, companyID string, limit int) ([]debts.Debt, map[string]int64, error) {
	out, err := s.db.Client.Query(ctx, &dynamodb.QueryInput{
		TableName:              aws.String(s.db.Table),
		KeyConditionExpression: aws.String("PK = :pk AND begins_with(SK, :prefix)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk":     dynamo.Str(schema.CompanyPK(companyID)),
			":prefix": dynamo.Str(schema.PendingDebtSKPrefix),
		},
		ScanIndexForward: aws.Bool(true),
		ConsistentRead:   aws.Bool(true),
		Limit:            aws.Int32(int32(limit)),
	})
	if err != nil {
		return nil, nil, fmt.Errorf("store: read pending debts: %w", err)
	}
	var items []debtItem
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &items); err != nil {
		return nil, nil, fmt.Errorf("store: decode pending debts: %w", err)
	}
	pending, seqs := make([]debts.Debt, len(items)), make(map[string]int64, len(items))
	for i, it := range items {
		if pending[i], err = it.debt(); err != nil {
			return nil, nil, err
		}
		seqs[it.ID] = it.Seq
	}
	return pending, seqs, nil
}

// debtPayment returns the items that record payment p at now, whose
// debt.recovered event is the debt's event number seq: the debt's record
// and its marker, updated with seq, or the marker deleted when p pays the
// debt in full, each on the condition that remaining is still what p read
// (which no other payment, nor event about the debt, can leave unchanged).
func (s *Wallets) debtPayment(p debts.Payment, seq int64, now time.Time) (record, marker types.TransactWriteItem) {
	d := p.After(now)
	key := func(sk string) map[string]types.AttributeValue { return dynamo.Key(schema.CompanyPK(d.CompanyID), sk) }
	cond := aws.String("#rem = :read")
	names := map[string]string{"#rem": "remaining"}
	read := dynamo.Num(p.Debt.Remaining)

	set := "SET #rem = :rem, #st = :st, #seq = :seq"
	recNames := map[string]string{"#rem": "remaining", "#st": "status", "#seq": "seq"}
	recValues := map[string]types.AttributeValue{":read": read, ":rem": dynamo.Num(d.Remaining), ":st": dynamo.Str(string(d.Status)), ":seq": dynamo.Num(seq)}
	if d.RecoveredAt != nil {
		set += ", #rat = :rat"
		recNames["#rat"] = "recovered_at"
		recValues[":rat"] = dynamo.Str(timestamp.Format(*d.RecoveredAt))
	}
	record = types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(s.db.Table), Key: key(schema.DebtSK(d.ID)),
		UpdateExpression: aws.String(set), ConditionExpression: cond,
		ExpressionAttributeNames: recNames, ExpressionAttributeValues: recValues,
	}}
	if d.Remaining == 0 {
		marker = types.TransactWriteItem{Delete: &types.Delete{
			TableName: aws.String(s.db.Table), Key: key(schema.PendingDebtSK(d.ID)), ConditionExpression: cond,
			ExpressionAttributeNames: names, ExpressionAttributeValues: map[string]types.AttributeValue{":read": read},
		}}
		return record, marker
	}
	marker = types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(s.db.Table), Key: key(schema.PendingDebtSK(d.ID)),
		UpdateExpression: aws.String("SET #rem = :rem, #seq = :seq"), ConditionExpression: cond,
		ExpressionAttributeNames:  map[string]string{"#rem": "remaining", "#seq": "seq"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":read": read, ":rem": dynamo.Num(d.Remaining), ":seq": dynamo.Num(seq)},
	}}
	return record, marker
}

// debtRaced reports whether a debt payment of a cancelled transaction
// (an item "debt<n>" or "debtmark<n>" of recoverDebts) failed its
// condition: another write paid the debt since it was read.
func debtRaced(k dynamo.Cancellation) bool {
	for name := range k {
		n, ok := strings.CutPrefix(name, schema.DebtMarkItems)
		if !ok {
			n, ok = strings.CutPrefix(name, schema.DebtItem)
		}
		if _, err := strconv.Atoi(n); ok && err == nil && k.Failed(name) {
			return true
		}
	}
	return false
}

// List reads page p of the company's debts with status (any when ""),
// newest first (ReadPage), strongly consistent; the status is a
// FilterExpression.
func (s *Debts) List(ctx context.Context, companyID string, status debts.Status, p page.Request) (page.Result[debts.Debt], error) {
	lo, hi := dynamo.TimeRange(schema.DebtSKPrefix, time.Time{}, time.Time{})
	l := dynamo.Listing{
		PKAttr: schema.AttrPK, SKAttr: schema.AttrSK, PK: schema.CompanyPK(companyID),
		Prefix: schema.DebtSKPrefix, Lo: lo, Hi: hi, Consistent: true,
	}
	if status != "" {
		l.Filter.Equal("status", string(status))
	}
	rows, total, next, err := s.db.ReadPage(ctx, l, p)
	if err != nil {
		return page.Result[debts.Debt]{}, fmt.Errorf("store: list debts: %w", err)
	}
	return dynamo.PageOf(rows, total, next, debtItem.debt)
}

var _ debts.LedgerReader = (*Debts)(nil)

// All reads every debt of the company, strongly consistent: only the debt
// invariant (debts.VerifyLedger) reads them all.
func (s *Debts) All(ctx context.Context, companyID string) ([]debts.Debt, error) {
	return s.read(ctx, companyID, schema.DebtSKPrefix)
}

// Pending reads every pending marker of the company, strongly consistent.
func (s *Debts) Pending(ctx context.Context, companyID string) ([]debts.Debt, error) {
	return s.read(ctx, companyID, schema.PendingDebtSKPrefix)
}

// read reads every debt item of the company whose sort key starts with
// prefix.
func (s *Debts) read(ctx context.Context, companyID, prefix string) ([]debts.Debt, error) {
	items, err := NewWallets(s.db).query(ctx, &dynamodb.QueryInput{
		TableName:              aws.String(s.db.Table),
		KeyConditionExpression: aws.String("PK = :pk AND begins_with(SK, :prefix)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": dynamo.Str(schema.CompanyPK(companyID)), ":prefix": dynamo.Str(prefix),
		},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("store: read debts: %w", err)
	}
	return dynamo.DecodeAll(items, debtItem.debt)
}
