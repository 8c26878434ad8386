package store

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/events"
	"payments/pkg/outbox"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
	"payments/pkg/timestamp"
)

// Outbox stores events under their company ("EVT#<event id>"), each with
// the TTL attribute expires_at at its creation + events.Retention. Until
// the webhook worker takes an event it carries GSI2 keys in one of two
// sharded sparse indexes, which is how the sweeper finds what a crash or a
// lost message left behind: while it is unpublished, in OUTBOX#<nn> (the
// shard of its id), ordered by creation time; once published, in
// DISPATCH#<nn>, ordered by when it was (last) published. The worker's
// MarkDispatched (Webhooks) removes them.
type Outbox struct{ db *DB }

var _ outbox.Store = (*Outbox)(nil)

// NewOutbox returns the outbox store on db.
func NewOutbox(db *DB) *Outbox { return &Outbox{db: db} }

type eventItem struct {
	PK        string `dynamodbav:"PK"`
	SK        string `dynamodbav:"SK"`
	GSI2PK    string `dynamodbav:"GSI2PK,omitempty"`
	GSI2SK    string `dynamodbav:"GSI2SK,omitempty"`
	Type      string `dynamodbav:"type"`
	ID        string `dynamodbav:"id"`
	CompanyID string `dynamodbav:"company_id"`
	Kind      string `dynamodbav:"event"`
	Object    string `dynamodbav:"object,omitempty"`
	Sequence  int64  `dynamodbav:"sequence,omitempty"`
	Body      []byte `dynamodbav:"body"`
	NotifyURL string `dynamodbav:"notify_url,omitempty"`
	CreatedAt string `dynamodbav:"created_at"`
	Published bool   `dynamodbav:"published"`
	// DispatchedAt is set by the webhook worker once it has handled the
	// event, before its first attempt (Webhooks.MarkDispatched).
	DispatchedAt string `dynamodbav:"dispatched_at,omitempty"`
	// ExpiresAt is the TTL (AttrExpiresAt): Unix seconds of CreatedAt +
	// events.Retention. Events written before it was set have none.
	ExpiresAt int64 `dynamodbav:"expires_at,omitempty"`
}

// eventPut returns the transaction item that writes e, numbered, as
// unpublished; every change that emits an event includes it in its own
// transaction (Txn.AddEvent, sequenced).
func eventPut(table string, e events.Event) (types.TransactWriteItem, error) {
	created := timestamp.Format(e.CreatedAt)
	item, err := attributevalue.MarshalMap(eventItem{
		PK: schema.CompanyPK(e.CompanyID), SK: schema.EventSK(e.ID),
		GSI2PK: schema.ShardKey(schema.OutboxIndex, e.ID), GSI2SK: schema.EventGSI2SK(created, e.ID),
		Type: schema.KindEvent, ID: e.ID, CompanyID: e.CompanyID, Kind: string(e.Kind),
		Object: e.Object, Sequence: e.Sequence, Body: e.Body, NotifyURL: e.NotifyURL, CreatedAt: created,
		ExpiresAt: e.CreatedAt.Add(events.Retention).Unix(),
	})
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("store: encode event: %w", err)
	}
	return types.TransactWriteItem{Put: &types.Put{
		TableName:           aws.String(table),
		Item:                item,
		ConditionExpression: aws.String("attribute_not_exists(PK)"),
	}}, nil
}

func (it eventItem) event() (events.Event, error) {
	at, err := timestamp.Parse(it.CreatedAt)
	if err != nil {
		return events.Event{}, fmt.Errorf("store: event %s: %w", it.ID, err)
	}
	return events.Event{
		ID: it.ID, CompanyID: it.CompanyID, Kind: events.Kind(it.Kind), Object: it.Object, Sequence: it.Sequence,
		Body: it.Body, NotifyURL: it.NotifyURL, CreatedAt: at,
	}, nil
}

// Event returns one of the company's events.
func (o *Outbox) Event(ctx context.Context, companyID, eventID string) (events.Event, error) {
	var it eventItem
	if err := o.db.Get(ctx, "event", schema.CompanyPK(companyID), schema.EventSK(eventID), &it, events.ErrNotFound); err != nil {
		return events.Event{}, err
	}
	return it.event()
}

// MarkPublished moves the event from the unpublished index to the
// undispatched one, keyed by at, unless the webhook worker has taken it
// already (a worker quicker than the publisher): then it leaves both.
func (o *Outbox) MarkPublished(ctx context.Context, companyID, eventID string, at time.Time) error {
	key := dynamo.Key(schema.CompanyPK(companyID), schema.EventSK(eventID))
	_, err := o.db.Update(ctx, "mark event "+eventID+" published", &dynamodb.UpdateItemInput{
		TableName:           aws.String(o.db.Table),
		Key:                 key,
		UpdateExpression:    aws.String("SET published = :t, GSI2PK = :pk, GSI2SK = :sk"),
		ConditionExpression: aws.String("attribute_exists(PK) AND attribute_not_exists(dispatched_at)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":t":  &types.AttributeValueMemberBOOL{Value: true},
			":pk": dynamo.Str(schema.ShardKey(schema.DispatchIndex, eventID)),
			":sk": dynamo.Str(schema.EventGSI2SK(timestamp.Format(at), eventID)),
		},
	})
	if !dynamo.ConditionFailed(err) {
		return err
	}
	_, err = o.db.Update(ctx, "mark dispatched event "+eventID+" published", &dynamodb.UpdateItemInput{
		TableName:           aws.String(o.db.Table),
		Key:                 key,
		UpdateExpression:    aws.String("SET published = :t REMOVE GSI2PK, GSI2SK"),
		ConditionExpression: aws.String("attribute_exists(PK)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":t": &types.AttributeValueMemberBOOL{Value: true},
		},
	})
	if dynamo.ConditionFailed(err) {
		return events.ErrNotFound
	}
	return err
}

// Unpublished returns up to limit events created before cutoff that are not
// marked published, from every shard of the outbox index, oldest first
// within a shard.
func (o *Outbox) Unpublished(ctx context.Context, cutoff time.Time, limit int) ([]events.Event, error) {
	return DueItems(ctx, o.db, schema.ShardKeys(schema.OutboxIndex), cutoff, limit, eventItem.event)
}

// Undispatched returns up to limit events last marked published before
// cutoff that the webhook worker has not taken, from every shard of the
// dispatch index, oldest first within a shard.
func (o *Outbox) Undispatched(ctx context.Context, cutoff time.Time, limit int) ([]events.Event, error) {
	return DueItems(ctx, o.db, schema.ShardKeys(schema.DispatchIndex)[:schema.IndexShards], cutoff, limit, eventItem.event)
}
