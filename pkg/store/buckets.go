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
	"payments/pkg/limits"
	"payments/pkg/store/dynamo"
)

var _ limits.Bucket = (*TokenBuckets)(nil)

// milli is how many milli-tokens make a token: a bucket counts in
// milli-tokens, so that a refill of rate tokens a second is rate
// milli-tokens a millisecond, all in integers.
const milli = 1000

// bucketIdle is how long past the time a bucket is full again its item is
// kept: DynamoDB's TTL may then delete it, a missing bucket being a full
// one.
const bucketIdle = time.Minute

// maxBucketTries bounds the tries of one Take against other instances
// taking from the same bucket.
const maxBucketTries = 20

// TokenBuckets keeps the token buckets of companies (limits.Bucket): one
// item per company and route class, in the company's partition
// (COMPANY#<id>, LIMIT#<class>), holding its milli-tokens and the
// millisecond of its last refill. Take reads the item strongly consistent,
// refills it for the time elapsed (at most to the burst), takes a token
// if a whole one is there and writes it back on the condition that its
// version is the one read: a refused request writes nothing. A race lost
// to another instance is tried again from a fresh read, each loss meaning
// another request was admitted; a Take that loses every try is refused for
// a second rather than admitted, so that contention never over-admits.
type TokenBuckets struct{ db *DB }

// NewTokenBuckets returns the token buckets kept in db.
func NewTokenBuckets(db *DB) *TokenBuckets { return &TokenBuckets{db: db} }

// tokenBucketItem is one company's bucket of one class.
type tokenBucketItem struct {
	PK        string `dynamodbav:"PK"`
	SK        string `dynamodbav:"SK"`
	Type      string `dynamodbav:"type"`
	Tokens    int64  `dynamodbav:"milli_tokens"`
	At        int64  `dynamodbav:"refilled_at_ms"`
	Version   int64  `dynamodbav:"version"`
	ExpiresAt int64  `dynamodbav:"expires_at"`
}

// Take takes one token from companyID's bucket of class c (limits.Bucket).
func (b *TokenBuckets) Take(ctx context.Context, companyID string, c limits.Class, l limits.Limit, now time.Time) (limits.Decision, error) {
	if l.Rate < 1 || l.Burst < 1 {
		return limits.Decision{}, fmt.Errorf("store: token bucket %s: limit %v", c, l)
	}
	pk, sk := companyPK(companyID), tokenBucketSK(string(c))
	capacity, rate := int64(l.Burst)*milli, int64(l.Rate) // rate: milli-tokens a millisecond
	nowMs := now.UnixMilli()
	var d limits.Decision
	policy := b.db.Retry
	// Each lost race is another request admitted: burst+1 tries find a
	// token or an empty bucket, unless the bucket refills meanwhile.
	policy.Attempts = max(policy.Attempts, min(l.Burst+1, maxBucketTries))
	err := dynamo.Retry(ctx, policy, "token bucket "+string(c), func(ctx context.Context) error {
		var it tokenBucketItem
		found, err := b.db.Find(ctx, pk, sk, &it)
		if err != nil {
			return fmt.Errorf("store: read token bucket: %w", err)
		}
		tokens, at := capacity, nowMs
		if found {
			// An instance whose clock is behind the last writer's refills
			// nothing and keeps the later time.
			at = max(it.At, nowMs)
			tokens = min(capacity, it.Tokens+(at-it.At)*rate)
		}
		if tokens < milli {
			wait := (milli - tokens + rate - 1) / rate // milliseconds, rounded up
			d = limits.Decision{Remaining: 0, RetryAfter: time.Duration(wait) * time.Millisecond}
			return nil
		}
		tokens -= milli
		d = limits.Decision{Allowed: true, Remaining: int(tokens / milli)}
		full := time.Duration((capacity-tokens+rate-1)/rate) * time.Millisecond
		item, err := attributevalue.MarshalMap(tokenBucketItem{
			PK: pk, SK: sk, Type: kindTokenBucket,
			Tokens: tokens, At: at, Version: it.Version + 1,
			ExpiresAt: time.UnixMilli(at).Add(full + bucketIdle).Unix(),
		})
		if err != nil {
			return fmt.Errorf("store: marshal token bucket: %w", err)
		}
		in := &dynamodb.PutItemInput{TableName: aws.String(b.db.Table), Item: item}
		if !found {
			in.ConditionExpression = aws.String("attribute_not_exists(PK)")
		} else {
			in.ConditionExpression = aws.String("#v = :v")
			in.ExpressionAttributeNames = map[string]string{"#v": "version"}
			in.ExpressionAttributeValues = map[string]types.AttributeValue{
				":v": &types.AttributeValueMemberN{Value: fmt.Sprint(it.Version)},
			}
		}
		_, err = b.db.Client.PutItem(ctx, in)
		if dynamo.ConditionFailed(err) {
			return dynamo.ErrRetry // another request took a token first
		}
		if err != nil {
			return fmt.Errorf("store: write token bucket: %w", err)
		}
		return nil
	})
	if errors.Is(err, contention.ErrConflict) && ctx.Err() == nil {
		return limits.Decision{RetryAfter: time.Second}, nil
	}
	if err != nil {
		return limits.Decision{}, err
	}
	return d, nil
}
