package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/idempotency"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
)

// effectItem names, in a transaction, the write of a request's effect onto
// the record of the Idempotency-Key it holds.
const effectItem = "idempotency_key"

// RecordEffect adds to t, when ctx's request holds an Idempotency-Key
// whose effect is not recorded yet (idempotency.HeldBy), the write of the
// effect id (and its receipt, when not empty) onto the key's record: on the condition that the request still
// holds the key and that no effect is recorded, so that the movement t
// commits happens once under one key whatever a crash or a lease taken
// over does. A cancellation on it is idempotency.ErrLeaseLost (DB.Commit);
// a commit marks the effect recorded. It is added before the rest of t, so
// that the item budget of a credit that pays debts counts it.
func (db *DB) RecordEffect(ctx context.Context, t *Txn, id string, receipt []byte) {
	h, ok := idempotency.HeldBy(ctx)
	if !ok {
		return
	}
	t.held = h
	t.Add(effectItem, types.TransactWriteItem{Update: effectUpdate(db.Table, h, id)})
	t.SetReceipt(receipt)
}

// effectUpdate returns the write of effect id onto the record of the key
// h, on the condition that h still holds it and that no effect is
// recorded.
func effectUpdate(table string, h *idempotency.Held, id string) *types.Update {
	return &types.Update{
		TableName:           aws.String(table),
		Key:                 dynamo.Key(schema.CompanyPK(h.CompanyID), schema.IdempotencySK(h.Key)),
		UpdateExpression:    aws.String("SET effect_id = :effect"),
		ConditionExpression: aws.String("lease_id = :lease AND attribute_not_exists(effect_id)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":effect": dynamo.Str(id),
			":lease":  dynamo.Str(h.LeaseID),
		},
	}
}

// SetReceipt records receipt with the effect t records, if it records one:
// the answer of a movement whose figures the store computes in the
// transaction (the balances after it), for a retry to answer from.
func (t *Txn) SetReceipt(receipt []byte) {
	it := t.Item(effectItem)
	if it == nil || len(receipt) == 0 {
		return
	}
	u := it.Update
	u.UpdateExpression = aws.String("SET effect_id = :effect, receipt = :receipt")
	u.ExpressionAttributeValues[":receipt"] = &types.AttributeValueMemberB{Value: receipt}
}

// RecordsEffect reports whether t records the effect of the
// Idempotency-Key its request holds (RecordEffect added it).
func (t *Txn) RecordsEffect() bool { return t.held != nil }
