package moneystore

import (
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/cards"
	"payments/pkg/store"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
	"payments/pkg/timestamp"
)

// The items of the cards' transactions (see Cards): each function returns
// one TransactWriteItem with its condition.

// cardMove returns the card item of an acceptance: a check that the card's
// status is one of from when delta is 0, else its balance moved by delta
// on that condition and, for a debit, that the balance covers it.
func (s *Cards) cardMove(c cards.Card, from []cards.Status, delta int64, now time.Time) types.TransactWriteItem {
	names := map[string]string{"#cst": "status"}
	values := map[string]types.AttributeValue{}
	in := make([]string, len(from))
	for i, st := range from {
		in[i] = ":from" + strconv.Itoa(i)
		values[in[i]] = dynamo.Str(string(st))
	}
	cond := "attribute_exists(PK) AND #cst IN (" + strings.Join(in, ", ") + ")"
	key := dynamo.Key(schema.CompanyPK(c.CompanyID), schema.CardSK(c.ID))
	if delta == 0 {
		return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
			TableName: aws.String(s.db.Table), Key: key, ConditionExpression: aws.String(cond),
			ExpressionAttributeNames: names, ExpressionAttributeValues: values,
		}}
	}
	names["#cbal"], names["#cavail"], names["#cupd"] = "balance", "available", "updated_at"
	values[":delta"], values[":now"] = dynamo.Num(delta), dynamo.Str(timestamp.Format(now))
	if delta < 0 {
		// Held money is not the card's to move.
		cond += " AND #cavail >= :need"
		values[":need"] = dynamo.Num(-delta)
	}
	return types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(s.db.Table), Key: key,
		UpdateExpression:    aws.String("SET #cbal = #cbal + :delta, #cavail = #cavail + :delta, #cupd = :now"),
		ConditionExpression: aws.String(cond), ExpressionAttributeNames: names, ExpressionAttributeValues: values,
	}}
}

// settledTx returns the transaction item that records tx's settlement on
// the condition that it is still PROCESSING, and takes it out of the open
// index.
func (s *Cards) settledTx(tx cards.Transaction, now time.Time) (types.TransactWriteItem, error) {
	done := now
	if tx.CompletedAt != nil {
		done = *tx.CompletedAt
	}
	u := store.NewAttrUpdate()
	u.Set("status", string(tx.Status))
	u.Set("card_delta", tx.CardDelta)
	u.Set("wallet_delta", tx.WalletDelta)
	if tx.Error != "" {
		u.Set("error", tx.Error)
	} else {
		u.Remove("error")
	}
	u.Set("completed_at", timestamp.Format(done))
	u.Remove(schema.AttrGSI2PK)
	u.Remove(schema.AttrGSI2SK)
	return s.conditional(tx.CompanyID, schema.CardTxSK(tx.ID), u, "#tst = :processing",
		map[string]string{"#tst": "status"},
		map[string]types.AttributeValue{":processing": dynamo.Str(string(cards.TxProcessing))})
}

// settledCard returns the card item of a settlement, nil when it changes
// nothing on the card.
func (s *Cards) settledCard(st cards.Settle) (*types.TransactWriteItem, error) {
	if st.CardChange == 0 && st.NewStatus == "" && st.Issued == nil {
		return nil, nil
	}
	u := store.NewAttrUpdate()
	u.Add("balance", int(st.CardChange))
	u.Add("available", int(st.CardChange))
	u.Set("updated_at", timestamp.Format(st.Now))
	cond := []string{"attribute_exists(PK)"}
	names := map[string]string{}
	values := map[string]types.AttributeValue{}
	switch {
	case st.NewStatus != "":
		u.Set("status", string(st.NewStatus))
		cond = append(cond, "#cst = :from")
		names["#cst"], values[":from"] = "status", dynamo.Str(string(st.FromStatus))
	case st.CardChange > 0:
		cond = append(cond, liveOnly(names, values))
	}
	if st.CardChange < 0 {
		cond = append(cond, "#cavail >= :need")
		names["#cavail"], values[":need"] = "available", dynamo.Num(-st.CardChange)
	}
	if is := st.Issued; is != nil {
		if is.IssuerCardID != "" {
			u.Set("issuer_card_id", is.IssuerCardID)
		}
		if is.Last4 != "" {
			u.Set("last4", is.Last4)
		}
		u.Set("expiry_month", is.ExpiryMonth)
		u.Set("expiry_year", is.ExpiryYear)
		// The sealed values go to their own item (secretsPut), the card
		// keeps their refs.
		if refs := cards.RefsOf(is.Number, is.CVV); !refs.IsZero() {
			u.Set("sealed_key_id", refs.KeyID)
			u.Set("number_token", refs.NumberToken)
			u.Set("cvv_token", refs.CVVToken)
		}
	}
	item, err := s.conditional(st.Tx.CompanyID, schema.CardSK(st.Tx.CardID), u, strings.Join(cond, " AND "), names, values)
	return &item, err
}

// secretsPut returns the item that writes the sealed number and CVV of an
// issuance into the card's secrets item, nil when nothing is sealed (an
// issuer that keeps them: Stripe).
func (s *Cards) secretsPut(st cards.Settle) (*types.TransactWriteItem, error) {
	is := st.Issued
	if is == nil || is.Number.IsZero() {
		return nil, nil
	}
	item, err := attributevalue.MarshalMap(newCardSecretsItem(st.Tx.CompanyID, st.Tx.CardID, cards.Secrets{Number: is.Number, CVV: is.CVV}))
	if err != nil {
		return nil, fmt.Errorf("store: marshal card secrets: %w", err)
	}
	return &types.TransactWriteItem{Put: &types.Put{TableName: aws.String(s.db.Table), Item: item}}, nil
}

// liveOnly returns the condition that a card is live, adding its
// placeholders to names and values: money reaches only a live card, a
// terminated card's balance was refunded and stays 0.
func liveOnly(names map[string]string, values map[string]types.AttributeValue) string {
	names["#cst"] = "status"
	values[":terminated"], values[":failed"] = dynamo.Str(string(cards.Terminated)), dynamo.Str(string(cards.Failed))
	return "NOT #cst IN (:terminated, :failed)"
}

// slotsChange returns the item that moves the company's count of live
// cards by delta: +1 on the condition that it stays within slots, −1 on
// the condition that it does not go below 0.
func (s *Cards) slotsChange(companyID string, delta, slots int) types.TransactWriteItem {
	u := &types.Update{
		TableName:                aws.String(s.db.Table),
		Key:                      dynamo.Key(schema.CompanyPK(companyID), schema.CardSlotsSK),
		ExpressionAttributeNames: map[string]string{"#used": "used"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":one": dynamo.Num(1),
		},
	}
	if delta > 0 {
		u.UpdateExpression = aws.String("SET #used = if_not_exists(#used, :zero) + :one, #type = :kind")
		u.ConditionExpression = aws.String("attribute_not_exists(#used) OR #used < :slots")
		u.ExpressionAttributeNames["#type"] = schema.AttrType
		u.ExpressionAttributeValues[":zero"] = dynamo.Num(0)
		u.ExpressionAttributeValues[":kind"] = dynamo.Str(schema.KindCardSlots)
		u.ExpressionAttributeValues[":slots"] = dynamo.Num(int64(slots))
	} else {
		u.UpdateExpression = aws.String("SET #used = #used - :one")
		u.ConditionExpression = aws.String("#used >= :one")
	}
	return types.TransactWriteItem{Update: u}
}

// txPut returns the transaction item that writes tx as new.
func (s *Cards) txPut(tx cards.Transaction) (types.TransactWriteItem, error) {
	item, err := attributevalue.MarshalMap(newCardTxItem(tx))
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("store: marshal card transaction: %w", err)
	}
	return s.wallets.putNew(item), nil
}

// conditional returns the transaction item that applies u to item sk of
// the company on condition cond, whose placeholders are names and values.
func (s *Cards) conditional(companyID, sk string, u *store.AttrUpdate, cond string, names map[string]string, values map[string]types.AttributeValue) (types.TransactWriteItem, error) {
	expr, n, v, err := u.Build()
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("store: update %s: %w", sk, err)
	}
	maps.Copy(n, names)
	maps.Copy(v, values)
	return types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(s.db.Table), Key: dynamo.Key(schema.CompanyPK(companyID), sk),
		UpdateExpression: aws.String(expr), ConditionExpression: aws.String(cond),
		ExpressionAttributeNames: n, ExpressionAttributeValues: v,
	}}, nil
}
