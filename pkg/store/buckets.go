package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/limits"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
)

var _ limits.Bucket = (*TokenBuckets)(nil)

// bucketIdle is how long past the time a bucket is full again its item is
// kept: DynamoDB's TTL may then delete it, a missing bucket being a full
// one.
const bucketIdle = time.Minute

// TokenBuckets keeps the token buckets of companies (limits.Bucket): one
// item per company and route class, in the company's partition
// (COMPANY#<id>, LIMIT#<class>).
//
// A bucket is kept as one integer, the time at which it will be full again
// (full_at, nanoseconds since the epoch; the generic cell rate algorithm):
// each token admitted pushes it one interval (a second / rate) later, and
// the bucket holds burst tokens when full_at is now or past, none when it
// is burst intervals or more ahead. So a request is one conditional
// UpdateItem, never a read and a write: "full_at = now + interval if the
// bucket is full (full_at ≤ now, or no item)", else "full_at += interval if
// a token is there (now < full_at ≤ now + (burst-1) intervals)". DynamoDB
// applies each atomically, so takers racing on one bucket never admit more
// than it holds and never lose a race to retry; only a refused request
// reads the item, for its wait. A request reads full_at with its own clock:
// one lagging the last writer's by more than the burst's span (burst
// intervals) finds the bucket emptier than it is, never fuller.
type TokenBuckets struct{ db *DB }

// NewTokenBuckets returns the token buckets kept in db.
func NewTokenBuckets(db *DB) *TokenBuckets { return &TokenBuckets{db: db} }

// Take takes one token from companyID's bucket of class c (limits.Bucket).
func (b *TokenBuckets) Take(ctx context.Context, companyID string, c limits.Class, l limits.Limit, now time.Time) (limits.Decision, error) {
	if l.Rate < 1 || l.Burst < 1 {
		return limits.Decision{}, fmt.Errorf("store: token bucket %s: limit %v", c, l)
	}
	interval := max(1, int64(time.Second)/int64(l.Rate))
	tolerance := int64(l.Burst-1) * interval // how far ahead full_at may be for a token to be there
	nowNs := now.UnixNano()
	// remaining is the tokens left once full_at is fullAt.
	remaining := func(fullAt int64) int { return int(max(0, nowNs+tolerance+interval-fullAt) / interval) }
	key := dynamo.Key(schema.CompanyPK(companyID), schema.TokenBucketSK(string(c)))
	names := map[string]string{"#full": "full_at", "#type": schema.AttrType, "#exp": schema.AttrExpiresAt}
	// The item outlives the latest time the bucket can be full again.
	expires := dynamo.Num(now.Add(time.Duration(tolerance+interval) + bucketIdle).Unix())

	// A full bucket (the usual case, unless the company sends faster than
	// the class's rate): it starts again from now.
	fullAt := nowNs + interval
	_, err := b.db.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(b.db.Table),
		Key:                      key,
		UpdateExpression:         aws.String("SET #full = :full, #type = :type, #exp = :exp"),
		ConditionExpression:      aws.String("attribute_not_exists(#full) OR #full <= :now"),
		ExpressionAttributeNames: names,
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":full": dynamo.Num(fullAt), ":now": dynamo.Num(nowNs), ":type": dynamo.Str(schema.KindTokenBucket), ":exp": expires,
		},
	})
	if err == nil {
		return limits.Decision{Allowed: true, Remaining: remaining(fullAt)}, nil
	}
	if !dynamo.ConditionFailed(err) {
		return limits.Decision{}, fmt.Errorf("store: token bucket %s: %w", c, err)
	}
	// Not full: take a token if one is there. full_at only grows, so the
	// bucket cannot have become full since.
	out, err := b.db.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(b.db.Table),
		Key:                      key,
		UpdateExpression:         aws.String("SET #full = #full + :interval, #exp = :exp"),
		ConditionExpression:      aws.String("#full > :now AND #full <= :latest"),
		ExpressionAttributeNames: map[string]string{"#full": "full_at", "#exp": schema.AttrExpiresAt},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":interval": dynamo.Num(interval), ":now": dynamo.Num(nowNs), ":latest": dynamo.Num(nowNs + tolerance), ":exp": expires,
		},
		ReturnValues: types.ReturnValueUpdatedNew,
	})
	if err == nil {
		fullAt, perr := fullAtOf(out.Attributes)
		if perr != nil {
			return limits.Decision{}, perr
		}
		return limits.Decision{Allowed: true, Remaining: remaining(fullAt)}, nil
	}
	if !dynamo.ConditionFailed(err) {
		return limits.Decision{}, fmt.Errorf("store: token bucket %s: %w", c, err)
	}
	// Empty: the wait is until full_at is within the tolerance again.
	res, err := b.db.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(b.db.Table), Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return limits.Decision{}, fmt.Errorf("store: token bucket %s: %w", c, err)
	}
	fullAt, err = fullAtOf(res.Item)
	if err != nil {
		return limits.Decision{}, err
	}
	return limits.Decision{RetryAfter: time.Duration(max(1, fullAt-tolerance-nowNs))}, nil
}

// errBucketItem is a bucket item without a readable full_at.
var errBucketItem = errors.New("store: token bucket item without full_at")

// fullAtOf returns the full_at of a bucket item's attributes.
func fullAtOf(item map[string]types.AttributeValue) (int64, error) {
	n, ok := item["full_at"].(*types.AttributeValueMemberN)
	if !ok {
		return 0, errBucketItem
	}
	v, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %v", errBucketItem, err)
	}
	return v, nil
}
