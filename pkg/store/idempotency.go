package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/contention"
	"payments/pkg/idempotency"
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

// claimCondition lets a claim write over no item, an expired one, or an
// in-progress one of the same request whose lease has ended.
const claimCondition = "attribute_not_exists(PK) OR expires_at <= :now" +
	" OR (request_hash = :hash AND attribute_not_exists(response_status) AND lease_until <= :now_ms)"

// Claim writes the in-progress record of c for key, unless a live record
// holds it: then it returns that record. A record that changes between the
// refused write and its read (released, expired, taken over) is tried
// again under the retry policy.
func (s *Idempotency) Claim(ctx context.Context, companyID, key string, c idempotency.Claim) (idempotency.Record, bool, error) {
	pk, sk := companyPK(companyID), idempotencySK(key)
	item, err := attributevalue.MarshalMap(idempotencyItem{
		PK: pk, SK: sk, Type: "idempotency_key",
		RequestHash: c.RequestHash, LeaseID: c.LeaseID, LeaseUntil: c.LeaseUntil.UnixMilli(),
		CreatedAt: c.Now.UTC().Format(time.RFC3339Nano), ExpiresAt: c.ExpiresAt.Unix(),
	})
	if err != nil {
		return idempotency.Record{}, false, fmt.Errorf("store: marshal idempotency key: %w", err)
	}
	in := &dynamodb.PutItemInput{
		TableName:           aws.String(s.db.Table),
		Item:                item,
		ConditionExpression: aws.String(claimCondition),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":now":    number(c.Now.Unix()),
			":now_ms": number(c.Now.UnixMilli()),
			":hash":   &types.AttributeValueMemberS{Value: c.RequestHash},
		},
	}
	var held idempotencyItem
	claimed := false
	err = s.db.Retry.do(ctx, "claim idempotency key", func(ctx context.Context) error {
		_, err := s.db.Client.PutItem(ctx, in)
		if err == nil {
			claimed = true
			return nil
		}
		if !conditionFailed(err) {
			return err
		}
		held = idempotencyItem{}
		found, err := s.db.getItem(ctx, pk, sk, &held)
		if err != nil {
			return fmt.Errorf("store: read idempotency key: %w", err)
		}
		if !found || !held.live(c.Now, c.RequestHash) {
			return errRetry // released, expired or lapsed since the write
		}
		return nil
	})
	if err != nil {
		if !errors.Is(err, contention.ErrConflict) {
			err = fmt.Errorf("store: claim idempotency key: %w", err)
		}
		return idempotency.Record{}, false, err
	}
	if claimed {
		return idempotency.Record{}, true, nil
	}
	return held.record(), false, nil
}

// Complete stores resp in the record of the claim leaseID.
func (s *Idempotency) Complete(ctx context.Context, companyID, key, leaseID string, resp idempotency.Response) error {
	set := "SET response_status = :status, body_omitted = :omitted"
	values := map[string]types.AttributeValue{
		":lease":   &types.AttributeValueMemberS{Value: leaseID},
		":status":  number(int64(resp.Status)),
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
	_, err := s.db.update(ctx, "complete idempotency key", &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.db.Table),
		Key:                       primaryKeyOf(companyPK(companyID), idempotencySK(key)),
		UpdateExpression:          aws.String(set),
		ConditionExpression:       aws.String("lease_id = :lease"),
		ExpressionAttributeValues: values,
	})
	if conditionFailed(err) {
		return idempotency.ErrLeaseLost
	}
	return err
}

// Release deletes the record of the claim leaseID.
func (s *Idempotency) Release(ctx context.Context, companyID, key, leaseID string) error {
	in := &dynamodb.DeleteItemInput{
		TableName:           aws.String(s.db.Table),
		Key:                 primaryKeyOf(companyPK(companyID), idempotencySK(key)),
		ConditionExpression: aws.String("lease_id = :lease"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":lease": &types.AttributeValueMemberS{Value: leaseID},
		},
	}
	err := s.db.Retry.do(ctx, "release idempotency key", func(ctx context.Context) error {
		_, err := s.db.Client.DeleteItem(ctx, in)
		return err
	})
	switch {
	case conditionFailed(err):
		return idempotency.ErrLeaseLost
	case err != nil && !errors.Is(err, contention.ErrConflict):
		return fmt.Errorf("store: release idempotency key: %w", err)
	}
	return err
}

// number returns n as a DynamoDB number.
func number(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}
