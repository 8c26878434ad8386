package moneystore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/cards"
	"payments/pkg/events"
	"payments/pkg/store"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
	"payments/pkg/timestamp"
)

// The card network's transactions add to Cards, in the company partition:
//
//   - ISSUEREVENT#<issuer event id>: the claim of an issuer notification
//     (or of an authorization's decision, by the authorization's id),
//     naming the card transaction it made (of), what it moved on the card
//     (card_delta, held_delta) and the events it wrote (events), or the
//     code of its refusal (refused), written in the same transaction as
//     what it made;
//   - ISSUERTX#<network transaction id>: the card transaction recorded for
//     an authorization of the network (approved or declined), so that its
//     settlement, reversal or refund, which name it, find it, and so that
//     the same authorization under another event id is refused.
//
// A card carries held (the sum of its open holds) and available (balance −
// held) beside its balance: DynamoDB conditions cannot subtract, so every
// write that moves the balance or the holds moves available too, and an
// authorization is approved by one conditional write on available.

// eventClaimItem is the claim of an issuer event.
type eventClaimItem struct {
	PK        string   `dynamodbav:"PK"`
	SK        string   `dynamodbav:"SK"`
	Type      string   `dynamodbav:"type"`
	CompanyID string   `dynamodbav:"company_id"`
	Of        string   `dynamodbav:"of,omitempty"`
	Refused   string   `dynamodbav:"refused,omitempty"`
	CardDelta int64    `dynamodbav:"card_delta,omitempty"`
	HeldDelta int64    `dynamodbav:"held_delta,omitempty"`
	Events    []string `dynamodbav:"events,omitempty"`
	CreatedAt string   `dynamodbav:"created_at,omitempty"`
}

// Record writes r in one transaction (see cards.Record): the event claim,
// the card's change, the new transactions (an authorization with its
// lookup), the authorization followed, the wallet's change with its ledger
// entries, the debt and the events.
func (s *Cards) Record(ctx context.Context, r cards.Record) error {
	if len(r.Txs) == 0 && (r.Original == nil || r.Made == "") {
		return errors.New("store: a card network record without a transaction")
	}
	c := r.Card
	puts := make([]types.TransactWriteItem, len(r.Txs))
	for i, tx := range r.Txs {
		if tx.CompanyID != c.CompanyID || tx.CardID != c.ID {
			return fmt.Errorf("store: card transaction %s is not of card %s", tx.ID, c.ID)
		}
		var err error
		if puts[i], err = s.txPut(tx); err != nil {
			return err
		}
	}
	card := s.networkCard(r)
	made := r.Made
	if made == "" {
		made = r.Txs[0].ID
	}
	var original *types.TransactWriteItem
	if r.Original != nil {
		o, err := s.followedTx(*r.Original, *r.OriginalAfter, r.Untold)
		if err != nil {
			return err
		}
		original = &o
	}
	return s.db.Commit(ctx, "record card transaction "+made, func(ctx context.Context) (*store.Txn, error) {
		t := &store.Txn{}
		if r.EventID != "" {
			it := eventClaimItem{
				PK: schema.CompanyPK(c.CompanyID), SK: schema.IssuerEventSK(r.EventID), Type: schema.KindIssuerEvent,
				CompanyID: c.CompanyID, Of: made, CardDelta: r.BalanceDelta, HeldDelta: r.HeldDelta,
				CreatedAt: timestamp.Format(r.Now),
			}
			for _, e := range r.Events {
				it.Events = append(it.Events, e.ID)
			}
			claim, err := attributevalue.MarshalMap(it)
			if err != nil {
				return nil, fmt.Errorf("store: marshal issuer event claim: %w", err)
			}
			t.Add(schema.EventClaimItem, s.wallets.putNew(claim))
		}
		if card != nil {
			t.Add(schema.CardItem, *card)
		}
		for i, put := range puts {
			t.Add(schema.CardTxItem+strconv.Itoa(i), put)
			// The network's card transactions are reported once, when they
			// are made: a purchase's later steps are transactions of their
			// own (a settlement, a reversal, a refund), each with its
			// events. So no counter is kept for them, which spares an item
			// (DynamoDB Local's transactions hold 10: a refund to a
			// terminated card still pays a debt in its own transaction).
			t.Finishes(r.Txs[i].ID)
			if tx := r.Txs[i]; (tx.Type == cards.TxAuthorization || tx.Type == cards.TxDecline) && tx.IssuerTxID != "" {
				ref, err := attributevalue.MarshalMap(claimItem{
					PK: schema.CompanyPK(c.CompanyID), SK: schema.IssuerTxSK(tx.IssuerTxID), Type: schema.KindIssuerTx, CompanyID: c.CompanyID, Of: tx.ID,
				})
				if err != nil {
					return nil, fmt.Errorf("store: marshal network transaction ref: %w", err)
				}
				t.Add("issuer_tx", s.wallets.putNew(ref))
			}
		}
		if original != nil {
			t.Add("original", *original)
			// Events about it follow those its decision wrote, which
			// keep no counter (the network's transactions: below).
			t.Counts(r.Original.ID, r.OriginalEvents)
		}
		if w := r.Withdraw; w != nil {
			items, err := s.withdrawal(ctx, c.CompanyID, *w, r.Events)
			if err != nil {
				return nil, err
			}
			for i, it := range items {
				t.Add(withdrawName(i), it)
			}
		}
		addEvents(t, r.Events)
		if r.Debt != nil { // after the events: it counts those about it
			if err := addDebt(t, s.db.Table, *r.Debt); err != nil {
				return nil, err
			}
		}
		return t, s.addMoney(ctx, t, c.CompanyID, r.WalletID, r.Wallet, r.Entries, r.Now, r.Wallet.Payout < 0)
	}, func(ctx context.Context, k dynamo.Cancellation) error {
		switch {
		case debtRaced(k):
			return dynamo.ErrRetry
		case k.Failed(schema.EventClaimItem):
			return cards.ErrEventApplied
		case withdrawFailed(k):
			return cards.ErrEventsKept
		case k.Failed(schema.CardItem) && givesToCard(r):
			return cards.ErrChanged
		case k.Failed(schema.CardItem):
			return cards.ErrCardRefused
		case k.Failed("issuer_tx"):
			return cards.ErrDuplicateNetworkTx
		case k.Failed("original"), k.Failed(schema.WalletItem):
			return cards.ErrChanged
		}
		return nil
	})
}

// networkCard returns the card item of r: its balance, holds and available
// moved, on the conditions r names; a condition check for an approval that
// moves nothing (a verification); nil when r neither moves nor checks the
// card (a DynamoDB transaction holds few items: DynamoDB Local's, 10).
func (s *Cards) networkCard(r cards.Record) *types.TransactWriteItem {
	key := dynamo.Key(schema.CompanyPK(r.Card.CompanyID), schema.CardSK(r.Card.ID))
	names := map[string]string{}
	values := map[string]types.AttributeValue{}
	cond := "attribute_exists(PK)"
	if avail := r.BalanceDelta - r.HeldDelta; avail < 0 && !r.Forced {
		cond += " AND #cavail >= :need"
		names["#cavail"], values[":need"] = "available", dynamo.Num(-avail)
	}
	if r.Approve {
		cond += " AND #cst = :active AND #clock = :false"
		names["#cst"], names["#clock"] = "status", "is_locked"
		values[":active"], values[":false"] = dynamo.Str(string(cards.Active)), &types.AttributeValueMemberBOOL{Value: false}
	}
	if givesToCard(r) && r.Card.Status.Live() {
		cond += " AND " + liveOnly(names, values)
	}
	if r.BalanceDelta == 0 && r.HeldDelta == 0 && !r.Approve {
		return nil
	}
	if r.BalanceDelta == 0 && r.HeldDelta == 0 {
		check := &types.ConditionCheck{TableName: aws.String(s.db.Table), Key: key, ConditionExpression: aws.String(cond)}
		if len(names) > 0 { // DynamoDB refuses empty maps
			check.ExpressionAttributeNames, check.ExpressionAttributeValues = names, values
		}
		return &types.TransactWriteItem{ConditionCheck: check}
	}
	names["#cbal"], names["#cheld"], names["#cavail"], names["#cupd"] = "balance", "held", "available", "updated_at"
	values[":dbal"], values[":dheld"] = dynamo.Num(r.BalanceDelta), dynamo.Num(r.HeldDelta)
	values[":davail"], values[":now"] = dynamo.Num(r.BalanceDelta-r.HeldDelta), dynamo.Str(timestamp.Format(r.Now))
	return &types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(s.db.Table), Key: key,
		UpdateExpression: aws.String("SET #cbal = #cbal + :dbal, #cheld = #cheld + :dheld, " +
			"#cavail = #cavail + :davail, #cupd = :now"),
		ConditionExpression: aws.String(cond), ExpressionAttributeNames: names, ExpressionAttributeValues: values,
	}}
}

// givesToCard reports whether r adds to what the card has or can spend (a
// refund, a hold released without being paid out in full): money that
// never reaches a terminated card, so that such a write built from a live
// card must find it live (else cards.ErrChanged: it is built again from
// the card as it is).
func givesToCard(r cards.Record) bool {
	return r.BalanceDelta > 0 || r.BalanceDelta-r.HeldDelta > 0
}

// followedTx returns the item that makes authorization was into now (its
// status, amount, hold, settled and refunded amounts, completion; its type and
// decline reason when the network declined it) on the condition that its
// type, hold, settled and refunded amounts are still was's. A hold
// released leaves the open hold index, unless untold (HoldTold takes it
// out then).
func (s *Cards) followedTx(was, now cards.Transaction, untold bool) (types.TransactWriteItem, error) {
	u := store.NewAttrUpdate()
	if now.Type != was.Type {
		u.Set("tx_type", string(now.Type))
		u.Set("decline_reason", string(now.DeclineReason))
		u.Set("error", now.Error)
	}
	u.Set("status", string(now.Status))
	u.Set("hold", now.Hold)
	u.Set("settled", now.Settled)
	u.Set("refunded", now.Refunded)
	if now.Amount != was.Amount { // an increment the issuer approved
		u.Set("amount", now.Amount)
	}
	switch {
	case now.Expired && !was.Expired:
		u.Set("expired", true)
	case was.Expired && !now.Expired: // closed by a final settlement
		u.Remove("expired")
	}
	if now.CompletedAt != nil {
		u.Set("completed_at", timestamp.Format(*now.CompletedAt))
	}
	if now.Hold == 0 && was.Hold > 0 && !untold {
		u.Remove(schema.AttrGSI2PK)
		u.Remove(schema.AttrGSI2SK)
	}
	return s.conditional(was.CompanyID, schema.CardTxSK(was.ID), u,
		"#otype = :type AND #ohold = :hold AND #oset = :settled AND #oref = :refunded",
		map[string]string{"#otype": "tx_type", "#ohold": "hold", "#oset": "settled", "#oref": "refunded"},
		map[string]types.AttributeValue{":type": dynamo.Str(string(was.Type)), ":hold": dynamo.Num(was.Hold),
			":settled": dynamo.Num(was.Settled), ":refunded": dynamo.Num(was.Refunded)})
}

// HoldTold takes authorization id out of the open hold index, on the
// condition that its hold is 0 (else nothing changes).
func (s *Cards) HoldTold(ctx context.Context, companyID, id string) error {
	_, err := s.db.Update(ctx, "take hold "+id+" out of the open hold index", &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.db.Table),
		Key:                       dynamo.Key(schema.CompanyPK(companyID), schema.CardTxSK(id)),
		UpdateExpression:          aws.String("REMOVE #gpk, #gsk"),
		ConditionExpression:       aws.String("#hold = :zero"),
		ExpressionAttributeNames:  map[string]string{"#gpk": schema.AttrGSI2PK, "#gsk": schema.AttrGSI2SK, "#hold": "hold"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":zero": dynamo.Num(0)},
	})
	if dynamo.ConditionFailed(err) {
		return nil
	}
	return err
}

// Refuse records that issuer event eventID was refused with code, unless
// the event was claimed already (cards.ErrEventApplied).
func (s *Cards) Refuse(ctx context.Context, companyID, eventID, code string, now time.Time) error {
	item, err := attributevalue.MarshalMap(eventClaimItem{
		PK: schema.CompanyPK(companyID), SK: schema.IssuerEventSK(eventID), Type: schema.KindIssuerEvent, CompanyID: companyID,
		Refused: code, CreatedAt: timestamp.Format(now),
	})
	if err != nil {
		return fmt.Errorf("store: marshal issuer event refusal: %w", err)
	}
	err = s.db.Put(ctx, "refuse issuer event "+eventID, &dynamodb.PutItemInput{
		TableName: aws.String(s.db.Table), Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)"),
	})
	if dynamo.ConditionFailed(err) {
		return cards.ErrEventApplied
	}
	return err
}

// Outcome reads the claim of issuer event eventID, strongly consistent.
func (s *Cards) Outcome(ctx context.Context, companyID, eventID string) (cards.Outcome, bool, error) {
	var it eventClaimItem
	found, err := s.db.Find(ctx, schema.CompanyPK(companyID), schema.IssuerEventSK(eventID), &it)
	if err != nil || !found {
		return cards.Outcome{}, false, err
	}
	return cards.Outcome{TxID: it.Of, Refused: it.Refused, BalanceDelta: it.CardDelta, HeldDelta: it.HeldDelta, EventIDs: it.Events}, true, nil
}

// NetworkTransaction reads the card transaction recorded for network
// transaction issuerTxID, strongly consistent.
func (s *Cards) NetworkTransaction(ctx context.Context, companyID, issuerTxID string) (cards.Transaction, error) {
	var ref claimItem
	if err := s.db.Get(ctx, "network transaction "+issuerTxID, schema.CompanyPK(companyID), schema.IssuerTxSK(issuerTxID), &ref, cards.ErrTransactionNotFound); err != nil {
		return cards.Transaction{}, err
	}
	return s.Transaction(ctx, companyID, ref.Of)
}

// withdrawal returns the items that take back the events w names and
// point w's claim at evs instead: each event is deleted on the condition
// that it is still unpublished and undispatched, and its number given back
// (DB.EventWithdrawal). ErrEventsKept when an event is published already,
// or is not its object's last.
func (s *Cards) withdrawal(ctx context.Context, companyID string, w cards.Withdrawal, evs []events.Event) ([]types.TransactWriteItem, error) {
	var items []types.TransactWriteItem
	for _, id := range w.EventIDs {
		back, err := s.db.EventWithdrawal(ctx, companyID, id)
		if errors.Is(err, store.ErrEventKept) {
			return nil, cards.ErrEventsKept
		}
		if err != nil {
			return nil, err
		}
		items = append(items, back...)
	}
	u := store.NewAttrUpdate()
	ids := make([]string, len(evs))
	for i, e := range evs {
		ids[i] = e.ID
	}
	u.Set("events", ids)
	claim, err := s.conditional(companyID, schema.IssuerEventSK(w.Claim), u, "attribute_exists(#pk)",
		map[string]string{"#pk": schema.AttrPK}, nil)
	if err != nil {
		return nil, err
	}
	return append(items, claim), nil
}

// withdrawName names the i-th item of a withdrawal.
func withdrawName(i int) string { return "withdraw" + strconv.Itoa(i) }

// withdrawFailed reports whether an item of a withdrawal failed its
// condition: an event published, or followed by another about its object,
// since it was read.
func withdrawFailed(k dynamo.Cancellation) bool {
	for name := range k {
		if strings.HasPrefix(name, "withdraw") && k.Failed(name) {
			return true
		}
	}
	return false
}
