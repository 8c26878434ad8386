package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/auth"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
)

var _ auth.RateLimiter = (*RateLimiter)(nil)

// rateLimitIdle is how long after its last write a window item may be
// deleted by DynamoDB's TTL.
const rateLimitIdle = 2 * time.Minute

// RateLimiter is an exact sliding-window limit shared by every Lambda
// instance: one item per key (RATE#<scope>#<key>) holding the times, in
// milliseconds, of the requests admitted within the window. Allow reads it
// strongly consistent, drops times older than the window, refuses when
// limit times remain, and otherwise appends now and writes the item back on the
// condition that its version is the one read, trying again under the
// store's retry policy when another instance wrote first.
type RateLimiter struct {
	db     *DB
	scope  string
	limit  int
	window time.Duration
}

// NewRateLimiter returns a limiter admitting limit requests per window for
// each key of scope.
func NewRateLimiter(db *DB, scope string, limit int, window time.Duration) *RateLimiter {
	return &RateLimiter{db: db, scope: scope, limit: limit, window: window}
}

// rateLimitItem is one key's window.
type rateLimitItem struct {
	PK        string  `dynamodbav:"PK"`
	SK        string  `dynamodbav:"SK"`
	Type      string  `dynamodbav:"type"`
	Hits      []int64 `dynamodbav:"hits"`
	Version   int64   `dynamodbav:"version"`
	ExpiresAt int64   `dynamodbav:"expires_at"`
}

// Allow admits one request for key at now, or refuses it with the time
// until the oldest admitted request leaves the window. A refused request is
// not recorded.
func (l *RateLimiter) Allow(ctx context.Context, key string, now time.Time) (bool, time.Duration, error) {
	pk := schema.RateLimitPK(l.scope, key)
	nowMs := now.UnixMilli()
	windowMs := l.window.Milliseconds()
	var wait time.Duration
	// Each lost race means another request was admitted, so within limit+1
	// tries a caller is admitted or finds the window full: the policy gets
	// at least that many.
	policy := l.db.Retry
	policy.Attempts = max(policy.Attempts, l.limit+1)
	err := dynamo.Retry(ctx, policy, "rate limit "+l.scope, func(ctx context.Context) error {
		wait = 0
		var it rateLimitItem
		found, err := l.db.Find(ctx, pk, schema.RateLimitSK, &it)
		if err != nil {
			return fmt.Errorf("store: read rate limit: %w", err)
		}
		hits := slices.DeleteFunc(it.Hits, func(t int64) bool { return t <= nowMs-windowMs })
		if len(hits) >= l.limit {
			// Clocks of instances differ a little: never ask for more than
			// one window (nor less, when a limit below 1 admits nothing).
			wait = l.window
			if len(hits) > 0 {
				wait = time.Duration(min(slices.Min(hits)+windowMs-nowMs, windowMs)) * time.Millisecond
			}
			return nil
		}
		item, err := attributevalue.MarshalMap(rateLimitItem{
			PK:        pk,
			SK:        schema.RateLimitSK,
			Type:      schema.KindRateLimit,
			Hits:      append(hits, nowMs),
			Version:   it.Version + 1,
			ExpiresAt: now.Add(rateLimitIdle).Unix(),
		})
		if err != nil {
			return fmt.Errorf("store: marshal rate limit: %w", err)
		}
		in := &dynamodb.PutItemInput{TableName: aws.String(l.db.Table), Item: item}
		if !found {
			in.ConditionExpression = aws.String("attribute_not_exists(PK)")
		} else {
			in.ConditionExpression = aws.String("#v = :v")
			in.ExpressionAttributeNames = map[string]string{"#v": "version"}
			in.ExpressionAttributeValues = map[string]types.AttributeValue{
				":v": &types.AttributeValueMemberN{Value: fmt.Sprint(it.Version)},
			}
		}
		_, err = l.db.Client.PutItem(ctx, in)
		if dynamo.ConditionFailed(err) {
			return dynamo.ErrRetry // another request was admitted first
		}
		if err != nil {
			return fmt.Errorf("store: write rate limit: %w", err)
		}
		return nil
	})
	if err != nil {
		return false, 0, err
	}
	return wait == 0, wait, nil
}
