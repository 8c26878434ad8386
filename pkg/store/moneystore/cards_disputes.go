package moneystore

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/cards"
	"payments/pkg/events"
	"payments/pkg/page"
	"payments/pkg/store"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
	"payments/pkg/timestamp"
)

// The card disputes (cards.DisputeStore) add to Cards, in the company
// partition:
//
//   - DISPUTE#<uuid v7>: the dispute, with seq, the number of events about
//     it so far (it keeps its own counter: store.Txn.Counts), on
//     which every write of it is conditioned, and its movements (the
//     DISPUTE card transactions with what each moved on the card);
//   - DISPUTETX#<transaction id>: the claim of the settlement disputed,
//     naming its dispute (of): one dispute per settlement; a dispute the
//     issuer refused releases it;
//   - ISSUERDISPUTE#<issuer's dispute id>: the lookup of the dispute by
//     the issuer's id, which its reports name.
//
// A dispute's movement (MoveDispute) is one transaction: the dispute, on
// the condition that its seq, status and credited amount are still as
// read, the DISPUTE card transaction, the card's balance, the wallet's
// posting (last, Wallets.post), the debt and the events.

// disputeItem is a dispute as stored. DynamoDB Local refuses empty
// strings: an empty optional string is absent.
type disputeItem struct {
	PK              string                `dynamodbav:"PK"`
	SK              string                `dynamodbav:"SK"`
	Type            string                `dynamodbav:"type"`
	ID              string                `dynamodbav:"id"`
	CompanyID       string                `dynamodbav:"company_id"`
	CardID          string                `dynamodbav:"card_id"`
	CustomerID      string                `dynamodbav:"customer_id"`
	TransactionID   string                `dynamodbav:"transaction_id"`
	IssuerTxID      string                `dynamodbav:"issuer_tx_id,omitempty"`
	IssuerDisputeID string                `dynamodbav:"issuer_dispute_id,omitempty"`
	Status          string                `dynamodbav:"status"`
	Amount          int64                 `dynamodbav:"amount"`
	Credited        int64                 `dynamodbav:"credited"`
	Reason          string                `dynamodbav:"reason,omitempty"`
	Explanation     string                `dynamodbav:"explanation,omitempty"`
	Error           string                `dynamodbav:"error,omitempty"`
	Seq             int64                 `dynamodbav:"seq"`
	Movements       []disputeMovementItem `dynamodbav:"movements,omitempty"`
	CreatedAt       string                `dynamodbav:"created_at"`
	UpdatedAt       string                `dynamodbav:"updated_at"`
}

// disputeMovementItem is a movement of a dispute as stored.
type disputeMovementItem struct {
	TxID      string `dynamodbav:"tx"`
	CardDelta int64  `dynamodbav:"card_delta"`
}

func newDisputeItem(d cards.Dispute) disputeItem {
	return disputeItem{
		PK: schema.CompanyPK(d.CompanyID), SK: schema.DisputeSK(d.ID), Type: schema.KindCardDispute,
		ID: d.ID, CompanyID: d.CompanyID, CardID: d.CardID, CustomerID: d.CustomerID,
		TransactionID: d.TransactionID, IssuerTxID: d.IssuerTxID, IssuerDisputeID: d.IssuerDisputeID,
		Status: string(d.Status), Amount: d.Amount, Credited: d.Credited, Reason: d.Reason,
		Explanation: d.Explanation, Error: d.Error, Seq: d.Seq, Movements: movementItems(d.Movements),
		CreatedAt: timestamp.Format(d.CreatedAt), UpdatedAt: timestamp.Format(d.UpdatedAt),
	}
}

// movementItems returns ms as stored.
func movementItems(ms []cards.DisputeMovement) []disputeMovementItem {
	out := make([]disputeMovementItem, len(ms))
	for i, m := range ms {
		out[i] = disputeMovementItem{TxID: m.TxID, CardDelta: m.CardDelta}
	}
	return out
}

func (it disputeItem) dispute() (cards.Dispute, error) {
	created, err := timestamp.Parse(it.CreatedAt)
	if err != nil {
		return cards.Dispute{}, fmt.Errorf("store: dispute %s created_at: %w", it.ID, err)
	}
	updated, err := timestamp.Parse(it.UpdatedAt)
	if err != nil {
		return cards.Dispute{}, fmt.Errorf("store: dispute %s updated_at: %w", it.ID, err)
	}
	d := cards.Dispute{
		ID: it.ID, CompanyID: it.CompanyID, CardID: it.CardID, CustomerID: it.CustomerID,
		TransactionID: it.TransactionID, IssuerTxID: it.IssuerTxID, IssuerDisputeID: it.IssuerDisputeID,
		Status: cards.DisputeStatus(it.Status), Amount: it.Amount, Credited: it.Credited, Reason: it.Reason,
		Explanation: it.Explanation, Error: it.Error, Seq: it.Seq, CreatedAt: created, UpdatedAt: updated,
	}
	for _, m := range it.Movements {
		d.Movements = append(d.Movements, cards.DisputeMovement{TxID: m.TxID, CardDelta: m.CardDelta})
	}
	return d, nil
}

// disputeClaim returns the put of a new claim or lookup sk of dispute d.
func (s *Cards) disputeClaim(d cards.Dispute, sk, kind string) (types.TransactWriteItem, error) {
	item, err := attributevalue.MarshalMap(claimItem{PK: schema.CompanyPK(d.CompanyID), SK: sk, Type: kind, CompanyID: d.CompanyID, Of: d.ID})
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("store: marshal %s of dispute %s: %w", kind, d.ID, err)
	}
	return s.wallets.putNew(item), nil
}

// OpenDispute writes d, new, with the claim of its settlement (else
// cards.ErrDisputeExists) and the effect of the request's Idempotency-Key,
// in one transaction.
func (s *Cards) OpenDispute(ctx context.Context, d cards.Dispute) error {
	item, err := attributevalue.MarshalMap(newDisputeItem(d))
	if err != nil {
		return fmt.Errorf("store: marshal dispute %s: %w", d.ID, err)
	}
	claim, err := s.disputeClaim(d, schema.DisputeTxSK(d.TransactionID), schema.KindCardDisputeTx)
	if err != nil {
		return err
	}
	return s.db.Commit(ctx, "open dispute "+d.ID, func(ctx context.Context) (*store.Txn, error) {
		t := &store.Txn{}
		s.db.RecordEffect(ctx, t, d.ID, nil)
		t.Add("dispute", s.wallets.putNew(item))
		t.Add("dispute_tx", claim)
		return t, nil
	}, func(_ context.Context, k dynamo.Cancellation) error {
		if k.Failed("dispute_tx") {
			return cards.ErrDisputeExists
		}
		return nil
	})
}

// CreateDispute writes d, new, its events (numbered from 1, the dispute
// keeping their count), its lookup by the issuer's id (else
// cards.ErrDisputeExists) and, when claim, the claim of its settlement
// (else cards.ErrChanged), in one transaction.
func (s *Cards) CreateDispute(ctx context.Context, d cards.Dispute, claim bool, evs []events.Event) error {
	ref, err := s.disputeClaim(d, schema.IssuerDisputeSK(d.IssuerDisputeID), schema.KindCardDisputeRef)
	if err != nil {
		return err
	}
	var txClaim types.TransactWriteItem
	if claim {
		if txClaim, err = s.disputeClaim(d, schema.DisputeTxSK(d.TransactionID), schema.KindCardDisputeTx); err != nil {
			return err
		}
	}
	return s.db.Commit(ctx, "create dispute "+d.ID, func(ctx context.Context) (*store.Txn, error) {
		t := &store.Txn{}
		addEvents(t, evs)
		it := newDisputeItem(d)
		it.Seq = t.EventsAbout(d.ID)
		t.Counts(d.ID, 0)
		item, err := attributevalue.MarshalMap(it)
		if err != nil {
			return nil, fmt.Errorf("store: marshal dispute %s: %w", d.ID, err)
		}
		t.Add("dispute", s.wallets.putNew(item))
		t.Add("dispute_ref", ref)
		if claim {
			t.Add("dispute_tx", txClaim)
		}
		return t, nil
	}, func(_ context.Context, k dynamo.Cancellation) error {
		switch {
		case k.Failed("dispute_ref"):
			return cards.ErrDisputeExists
		case k.Failed("dispute_tx"), k.Failed("dispute"):
			return cards.ErrChanged
		}
		return nil
	})
}

// AttachDispute makes d SUBMITTED under the issuer's id issuerID, on the
// condition that it is still OPENING with the events read (else
// cards.ErrChanged), with its lookup by that id and evs, in one
// transaction.
func (s *Cards) AttachDispute(ctx context.Context, d cards.Dispute, issuerID string, evs []events.Event, now time.Time) error {
	withID := d
	withID.IssuerDisputeID = issuerID
	ref, err := s.disputeClaim(withID, schema.IssuerDisputeSK(issuerID), schema.KindCardDisputeRef)
	if err != nil {
		return err
	}
	return s.db.Commit(ctx, "attach dispute "+d.ID, func(ctx context.Context) (*store.Txn, error) {
		t := &store.Txn{}
		addEvents(t, evs)
		u := store.NewAttrUpdate()
		u.Set("status", string(cards.DisputeSubmitted))
		u.Set("issuer_dispute_id", issuerID)
		u.Set("seq", d.Seq+t.EventsAbout(d.ID))
		u.Set("updated_at", timestamp.Format(now))
		t.Counts(d.ID, d.Seq)
		item, err := s.conditional(d.CompanyID, schema.DisputeSK(d.ID), u, "#dst = :opening AND #dseq = :dseq",
			map[string]string{"#dst": "status", "#dseq": "seq"},
			map[string]types.AttributeValue{":opening": dynamo.Str(string(cards.DisputeOpening)), ":dseq": dynamo.Num(d.Seq)})
		if err != nil {
			return nil, err
		}
		t.Add("dispute", item)
		t.Add("dispute_ref", ref)
		return t, nil
	}, func(_ context.Context, k dynamo.Cancellation) error {
		if k.Failed("dispute") || k.Failed("dispute_ref") {
			return cards.ErrChanged
		}
		return nil
	})
}

// FailDispute makes d FAILED with why, on the condition that it is still
// OPENING (else cards.ErrChanged), and deletes the claim of its
// settlement, in one transaction.
func (s *Cards) FailDispute(ctx context.Context, d cards.Dispute, why string, now time.Time) error {
	u := store.NewAttrUpdate()
	u.Set("status", string(cards.DisputeFailed))
	u.Set("error", why)
	u.Set("updated_at", timestamp.Format(now))
	item, err := s.conditional(d.CompanyID, schema.DisputeSK(d.ID), u, "#dst = :opening",
		map[string]string{"#dst": "status"}, map[string]types.AttributeValue{":opening": dynamo.Str(string(cards.DisputeOpening))})
	if err != nil {
		return err
	}
	t := &store.Txn{}
	t.Add("dispute", item)
	t.Add("dispute_tx", types.TransactWriteItem{Delete: &types.Delete{
		TableName: aws.String(s.db.Table), Key: dynamo.Key(schema.CompanyPK(d.CompanyID), schema.DisputeTxSK(d.TransactionID)),
		ConditionExpression:       aws.String("#of = :of"),
		ExpressionAttributeNames:  map[string]string{"#of": "of"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":of": dynamo.Str(d.ID)},
	}})
	return s.db.CommitOnce(ctx, "fail dispute "+d.ID, t, func(_ context.Context, k dynamo.Cancellation) error {
		if k.Failed("dispute") || k.Failed("dispute_tx") {
			return cards.ErrChanged
		}
		return nil
	})
}

// MoveDispute writes m in one transaction (see cards.DisputeMove): the
// dispute as m.After on the condition that its seq, status and credited
// amount are still m.Dispute's, the DISPUTE card transaction, the card's
// balance moved by m.CardDelta (a credit on the condition that the card
// is live, a debit that it has it available), the events (the dispute's
// numbered after its seq), the debt, and last the wallet's posting. A
// failed condition is cards.ErrChanged.
func (s *Cards) MoveDispute(ctx context.Context, m cards.DisputeMove) error {
	d, after, c := m.Dispute, m.After, m.Card
	var txPut *types.TransactWriteItem
	if m.Tx != nil {
		if m.Tx.CompanyID != c.CompanyID || m.Tx.CardID != c.ID {
			return fmt.Errorf("store: card transaction %s is not of card %s", m.Tx.ID, c.ID)
		}
		put, err := s.txPut(*m.Tx)
		if err != nil {
			return err
		}
		txPut = &put
	}
	return s.db.Commit(ctx, "move dispute "+d.ID, func(ctx context.Context) (*store.Txn, error) {
		t := &store.Txn{}
		addEvents(t, m.Events)
		u := store.NewAttrUpdate()
		u.Set("status", string(after.Status))
		u.Set("amount", after.Amount)
		u.Set("credited", after.Credited)
		u.Set("movements", movementItems(after.Movements))
		u.Set("seq", d.Seq+t.EventsAbout(d.ID))
		u.Set("updated_at", timestamp.Format(m.Now))
		t.Counts(d.ID, d.Seq)
		item, err := s.conditional(d.CompanyID, schema.DisputeSK(d.ID), u, "#dst = :dst AND #dseq = :dseq AND #dcred = :dcred",
			map[string]string{"#dst": "status", "#dseq": "seq", "#dcred": "credited"},
			map[string]types.AttributeValue{":dst": dynamo.Str(string(d.Status)), ":dseq": dynamo.Num(d.Seq), ":dcred": dynamo.Num(d.Credited)})
		if err != nil {
			return nil, err
		}
		t.Add("dispute", item)
		if txPut != nil {
			t.Add(schema.CardTxItem, *txPut)
			t.Finishes(m.Tx.ID)
		}
		if m.CardDelta != 0 {
			t.Add(schema.CardItem, s.cardMove(c, []cards.Status{cards.Pending, cards.Active, cards.Frozen, cards.Suspended}, m.CardDelta, m.Now))
		}
		if m.Debt != nil { // after the events: it counts those about it
			if err := addDebt(t, s.db.Table, *m.Debt); err != nil {
				return nil, err
			}
		}
		return t, s.addMoney(ctx, t, c.CompanyID, m.WalletID, m.Wallet, m.Entries, m.Now, m.Wallet.Payout < 0)
	}, func(_ context.Context, k dynamo.Cancellation) error {
		switch {
		case debtRaced(k):
			return dynamo.ErrRetry
		case k.Failed("dispute"), k.Failed(schema.CardItem), k.Failed(schema.WalletItem):
			return cards.ErrChanged
		}
		return nil
	})
}

// Dispute reads dispute id of the company, strongly consistent.
func (s *Cards) Dispute(ctx context.Context, companyID, id string) (cards.Dispute, error) {
	var it disputeItem
	if err := s.db.Get(ctx, "dispute "+id, schema.CompanyPK(companyID), schema.DisputeSK(id), &it, cards.ErrDisputeNotFound); err != nil {
		return cards.Dispute{}, err
	}
	return it.dispute()
}

// TransactionDispute reads the dispute that claims settlement txID,
// strongly consistent.
func (s *Cards) TransactionDispute(ctx context.Context, companyID, txID string) (cards.Dispute, bool, error) {
	return s.claimedDispute(ctx, companyID, schema.DisputeTxSK(txID))
}

// IssuerDispute reads the dispute recorded under the issuer's id
// issuerID, strongly consistent.
func (s *Cards) IssuerDispute(ctx context.Context, companyID, issuerID string) (cards.Dispute, bool, error) {
	return s.claimedDispute(ctx, companyID, schema.IssuerDisputeSK(issuerID))
}

// claimedDispute reads the dispute the claim or lookup sk names.
func (s *Cards) claimedDispute(ctx context.Context, companyID, sk string) (cards.Dispute, bool, error) {
	var it claimItem
	found, err := s.db.Find(ctx, schema.CompanyPK(companyID), sk, &it)
	if err != nil || !found {
		return cards.Dispute{}, false, err
	}
	d, err := s.Dispute(ctx, companyID, it.Of)
	return d, err == nil, err
}

// Disputes reads page p of the company's disputes that f selects, newest
// first (ReadPage), strongly consistent; status and card_id are a
// FilterExpression.
func (s *Cards) Disputes(ctx context.Context, companyID string, f cards.DisputeFilter, p page.Request) (page.Result[cards.Dispute], error) {
	lo, hi := dynamo.TimeRange(schema.DisputeSKPrefix, time.Time{}, time.Time{})
	l := dynamo.Listing{
		PKAttr: schema.AttrPK, SKAttr: schema.AttrSK, PK: schema.CompanyPK(companyID),
		Prefix: schema.DisputeSKPrefix, Lo: lo, Hi: hi, Consistent: true,
	}
	if f.Status != "" {
		l.Filter.Equal("status", string(f.Status))
	}
	if f.CardID != "" {
		l.Filter.Equal("card_id", f.CardID)
	}
	rows, total, next, err := s.db.ReadPage(ctx, l, p)
	if err != nil {
		return page.Result[cards.Dispute]{}, fmt.Errorf("store: list disputes: %w", err)
	}
	return dynamo.PageOf(rows, total, next, disputeItem.dispute)
}

// CardSettlement reads, from the card's transactions (GSI1, eventually
// consistent), the SETTLEMENT recorded for the network's transaction
// issuerTxID; cards.ErrTransactionNotFound if none. It reads the card's
// history a page at a time: only a dispute the issuer opened without us
// asks it, once.
func (s *Cards) CardSettlement(ctx context.Context, companyID, cardID, issuerTxID string) (cards.Transaction, error) {
	p := dynamodb.NewQueryPaginator(s.db.Client, &dynamodb.QueryInput{
		TableName:              aws.String(s.db.Table),
		IndexName:              aws.String(schema.GSI1),
		KeyConditionExpression: aws.String("#pk = :pk AND begins_with(#sk, :prefix)"),
		FilterExpression:       aws.String("#itx = :itx AND #ttype = :settlement"),
		ExpressionAttributeNames: map[string]string{
			"#pk": schema.AttrGSI1PK, "#sk": schema.AttrGSI1SK, "#itx": "issuer_tx_id", "#ttype": "tx_type",
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": dynamo.Str(schema.CardTxsPK(companyID, cardID)), ":prefix": dynamo.Str(schema.CardTxSKPrefix),
			":itx": dynamo.Str(issuerTxID), ":settlement": dynamo.Str(string(cards.TxSettlement)),
		},
	})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return cards.Transaction{}, fmt.Errorf("store: find the settlement %s of card %s: %w", issuerTxID, cardID, err)
		}
		if len(out.Items) > 0 {
			var it cardTxItem
			if err := attributevalue.UnmarshalMap(out.Items[0], &it); err != nil {
				return cards.Transaction{}, fmt.Errorf("store: decode the settlement %s: %w", issuerTxID, err)
			}
			return it.transaction()
		}
	}
	return cards.Transaction{}, cards.ErrTransactionNotFound
}
