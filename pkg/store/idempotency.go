package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/contention"
	"payments/pkg/idempotency"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
)

var _ idempotency.Store = (*Idempotency)(nil)

// Idempotency keeps the records of Idempotency-Keys: one item per company
// and key (COMPANY#<company id>, IDEMPOTENCY#<key>), with expires_at set so
// that DynamoDB's TTL removes it. TTL deletes late (DynamoDB Local never),
// so every condition treats an item whose expires_at has passed as absent.
type Idempotency struct{ db *DB }

// NewIdempotency returns the idempotency key store over db.
func NewIdempotency(db *DB) *Idempotency { return &Idempotency{db: db} }

// idempotencyItem is the record of one key. The response attributes are
// absent while the request runs.
type idempotencyItem struct {
	PK          string `dynamodbav:"PK"`
	SK          string `dynamodbav:"SK"`
	Type        string `dynamodbav:"type"`
	RequestHash string `dynamodbav:"request_hash"`
	LeaseID     string `dynamodbav:"lease_id"`
	LeaseUntil  int64  `dynamodbav:"lease_until"` // Unix milliseconds
	CreatedAt   string `dynamodbav:"created_at"`
	ExpiresAt   int64  `dynamodbav:"expires_at"` // Unix seconds, the TTL
	EffectID    string `dynamodbav:"effect_id,omitempty"`
	Receipt     []byte `dynamodbav:"receipt,omitempty"`
	Status      int    `dynamodbav:"response_status,omitempty"`
	ContentType string `dynamodbav:"content_type,omitempty"`
	Body        []byte `dynamodbav:"body,omitempty"`
	Omitted     bool   `dynamodbav:"body_omitted,omitempty"`
}

// record returns the item as the middleware reads it.
func (it idempotencyItem) record() idempotency.Record {
	rec := idempotency.Record{
		RequestHash: it.RequestHash,
		LeaseUntil:  time.UnixMilli(it.LeaseUntil),
		ExpiresAt:   time.Unix(it.ExpiresAt, 0),
		Effect:      idempotency.Effect{ID: it.EffectID, Receipt: it.Receipt},
	}
	if it.Status != 0 {
		rec.Response = &idempotency.Response{Status: it.Status, ContentType: it.ContentType, Body: it.Body, Omitted: it.Omitted}
	}
	return rec
}

// live reports whether the item holds its key at now for a claim of
// request hash (the condition of Claim, read back).
func (it idempotencyItem) live(now time.Time, hash string) bool {
	if it.ExpiresAt <= now.Unix() {
		return false
	}
	return it.Status != 0 || it.RequestHash != hash || it.LeaseUntil > now.UnixMilli()
}

// claimCondition lets a claim write over no item or an expired one.
const claimCondition = "attribute_not_exists(PK) OR expires_at <= :now"

// takeOverCondition lets a claim take over an in-progress claim of the
// same request whose lease has ended, keeping the effect it recorded; the
// key is then kept for Retention from the takeover.
const takeOverCondition = "request_hash = :hash AND attribute_not_exists(response_status)" +
	" AND lease_until <= :now_ms AND expires_at > :now"

// Claim writes the in-progress record of c for key, unless a live record
// holds it: then it returns that record. A new record is one conditional
// PutItem; a record whose lease ended is taken over by a conditional
// UpdateItem of its lease, which returns the effect it holds. A record
// that changes between the refused writes and its read (released, expired,
// taken over) is tried again under the retry policy.
func (s *Idempotency) Claim(ctx context.Context, companyID, key string, c idempotency.Claim) (idempotency.Record, bool, error) {
	pk, sk := schema.CompanyPK(companyID), schema.IdempotencySK(key)
	item, err := attributevalue.MarshalMap(idempotencyItem{
		PK: pk, SK: sk, Type: schema.KindIdempotencyKey,
		RequestHash: c.RequestHash, LeaseID: c.LeaseID, LeaseUntil: c.LeaseUntil.UnixMilli(),
		CreatedAt: c.Now.UTC().Format(time.RFC3339Nano), ExpiresAt: c.ExpiresAt.Unix(),
	})
	if err != nil {
		return idempotency.Record{}, false, fmt.Errorf("store: marshal idempotency key: %w", err)
	}
	values := map[string]types.AttributeValue{
		":now":    dynamo.Num(c.Now.Unix()),
		":now_ms": dynamo.Num(c.Now.UnixMilli()),
		":hash":   &types.AttributeValueMemberS{Value: c.RequestHash},
	}
	put := &dynamodb.PutItemInput{
		TableName:                 aws.String(s.db.Table),
		Item:                      item,
		ConditionExpression:       aws.String(claimCondition),
		ExpressionAttributeValues: map[string]types.AttributeValue{":now": values[":now"]},
	}
	takeOver := &dynamodb.UpdateItemInput{
		TableName:           aws.String(s.db.Table),
		Key:                 dynamo.Key(pk, sk),
		UpdateExpression:    aws.String("SET lease_id = :lease, lease_until = :until, expires_at = :expires"),
		ConditionExpression: aws.String(takeOverCondition),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":now": values[":now"], ":now_ms": values[":now_ms"], ":hash": values[":hash"],
			":lease": &types.AttributeValueMemberS{Value: c.LeaseID}, ":until": dynamo.Num(c.LeaseUntil.UnixMilli()),
			":expires": dynamo.Num(c.ExpiresAt.Unix()),
		},
		ReturnValues: types.ReturnValueAllNew,
	}
	var held idempotencyItem
	claimed := false
	err = dynamo.Retry(ctx, s.db.Retry, "claim idempotency key", func(ctx context.Context) error {
		held = idempotencyItem{}
		_, err := s.db.Client.PutItem(ctx, put)
		if err == nil {
			claimed = true
			return nil
		}
		if !dynamo.ConditionFailed(err) {
			return err
		}
		out, err := s.db.Client.UpdateItem(ctx, takeOver)
		if err == nil {
			claimed = true
			return attributevalue.UnmarshalMap(out.Attributes, &held)
		}
		if !dynamo.ConditionFailed(err) {
			return err
		}
		found, err := s.db.Find(ctx, pk, sk, &held)
		if err != nil {
			return fmt.Errorf("store: read idempotency key: %w", err)
		}
		if !found || !held.live(c.Now, c.RequestHash) {
			return dynamo.ErrRetry // released, expired or lapsed since the writes
		}
		return nil
	})
	if err != nil {
		if !errors.Is(err, contention.ErrConflict) {
			err = fmt.Errorf("store: claim idempotency key: %w", err)
		}
		return idempotency.Record{}, false, err
	}
	return held.record(), claimed, nil
}

// RecordEffect records id as the effect of the Idempotency-Key that ctx's
// request holds (idempotency.HeldBy), on the condition that it still holds
// the key and that no effect is recorded (else idempotency.ErrLeaseLost),
// for a request whose movement of money another function commits (the
// card-network sandbox's): a retry then answers from id. Nothing when the
// request holds no key, or recorded its effect already.
func (s *Idempotency) RecordEffect(ctx context.Context, id string) error {
	h, ok := idempotency.HeldBy(ctx)
	if !ok {
		return nil
	}
	u := effectUpdate(s.db.Table, h, id)
	_, err := s.db.Update(ctx, "record the effect of idempotency key", &dynamodb.UpdateItemInput{
		TableName: u.TableName, Key: u.Key, UpdateExpression: u.UpdateExpression,
		ConditionExpression: u.ConditionExpression, ExpressionAttributeValues: u.ExpressionAttributeValues,
	})
	if dynamo.ConditionFailed(err) {
		return idempotency.ErrLeaseLost
	}
	if err != nil {
		return err
	}
	h.Recorded()
	return nil
}

// Complete stores resp in the record of the claim leaseID.
func (s *Idempotency) Complete(ctx context.Context, companyID, key, leaseID string, resp idempotency.Response) error {
	set := "SET response_status = :status, body_omitted = :omitted"
	values := map[string]types.AttributeValue{
		":lease":   &types.AttributeValueMemberS{Value: leaseID},
		":status":  dynamo.Num(int64(resp.Status)),
		":omitted": &types.AttributeValueMemberBOOL{Value: resp.Omitted},
	}
	// DynamoDB Local refuses empty strings and binaries: an empty one is
	// left out, and reads back empty.
	if resp.ContentType != "" {
		set += ", content_type = :ct"
		values[":ct"] = &types.AttributeValueMemberS{Value: resp.ContentType}
	}
	if len(resp.Body) > 0 {
		set += ", body = :body"
		values[":body"] = &types.AttributeValueMemberB{Value: resp.Body}
	}
	_, err := s.db.Update(ctx, "complete idempotency key", &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.db.Table),
		Key:                       dynamo.Key(schema.CompanyPK(companyID), schema.IdempotencySK(key)),
		UpdateExpression:          aws.String(set),
		ConditionExpression:       aws.String("lease_id = :lease"),
		ExpressionAttributeValues: values,
	})
	if dynamo.ConditionFailed(err) {
		return idempotency.ErrLeaseLost
	}
	return err
}

// Release deletes the record of the claim leaseID, unless it holds an
// effect: then it only ends the lease, so that the next retry takes the key
// over at once and answers from the effect (a request that answered
// "retry" after committing its movement, a time-out after the commit).
func (s *Idempotency) Release(ctx context.Context, companyID, key, leaseID string) error {
	k := dynamo.Key(schema.CompanyPK(companyID), schema.IdempotencySK(key))
	lease := map[string]types.AttributeValue{":lease": &types.AttributeValueMemberS{Value: leaseID}}
	del := &dynamodb.DeleteItemInput{
		TableName:                 aws.String(s.db.Table),
		Key:                       k,
		ConditionExpression:       aws.String("lease_id = :lease AND attribute_not_exists(effect_id)"),
		ExpressionAttributeValues: lease,
	}
	end := &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.db.Table),
		Key:                       k,
		UpdateExpression:          aws.String("SET lease_until = :ended"),
		ConditionExpression:       aws.String("lease_id = :lease AND attribute_exists(effect_id)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":lease": lease[":lease"], ":ended": dynamo.Num(0)},
	}
	err := dynamo.Retry(ctx, s.db.Retry, "release idempotency key", func(ctx context.Context) error {
		_, err := s.db.Client.DeleteItem(ctx, del)
		if !dynamo.ConditionFailed(err) {
			return err
		}
		_, err = s.db.Client.UpdateItem(ctx, end)
		return err
	})
	switch {
	case dynamo.ConditionFailed(err):
		return idempotency.ErrLeaseLost
	case err != nil && !errors.Is(err, contention.ErrConflict):
		return fmt.Errorf("store: release idempotency key: %w", err)
	}
	return err
}
