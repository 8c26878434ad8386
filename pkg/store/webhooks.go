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
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
	"payments/pkg/timestamp"
	"payments/pkg/webhooks"
)

// Webhooks stores what webhook delivery needs, in the company's partition:
//
//   - the endpoints and their secrets (webhook_endpoints.go), in items of
//     their own, so that no read of the company record can reveal one;
//   - one item per delivery, next to its event (EVT#<event id>#DLV#<webhook
//     #<endpoint id> or notify>[#r<n>]), holding the attempts; a query of the sort keys
//     EVT#… returns events and their deliveries together, time-ordered
//     because event ids are UUID v7;
//   - on the event item of the outbox, the attribute dispatched_at, set
//     when the worker handled the event, which takes it out of the
//     outbox's indexes (Outbox).
//
// A PENDING delivery carries GSI2 keys in one of the IndexShards sparse
// partitions PENDING_DELIVERY#<nn> (the shard of its id), ordered by when
// it last moved (updated_at: created, an attempt recorded, queued again by
// the sweeper), which is how the sweeper finds a delivery whose message was
// lost; a delivery that is DELIVERED, FAILED or CANCELED leaves it.
type Webhooks struct {
	db     *DB
	outbox *Outbox
}

var (
	_ webhooks.WorkerStore = (*Webhooks)(nil)
	_ webhooks.LogStore    = (*Webhooks)(nil)
	_ webhooks.SecretStore = (*Webhooks)(nil)
	_ webhooks.ResumeStore = (*Webhooks)(nil)
)

// NewWebhooks returns the webhooks store on db.
func NewWebhooks(db *DB) *Webhooks { return &Webhooks{db: db, outbox: NewOutbox(db)} }

type attemptItem struct {
	Number     int    `dynamodbav:"attempt"`
	At         string `dynamodbav:"at"`
	StatusCode int    `dynamodbav:"status_code,omitempty"`
	Error      string `dynamodbav:"error,omitempty"`
	DurationMS int64  `dynamodbav:"duration_ms"`
}

type deliveryItem struct {
	PK           string        `dynamodbav:"PK"`
	SK           string        `dynamodbav:"SK"`
	GSI2PK       string        `dynamodbav:"GSI2PK,omitempty"`
	GSI2SK       string        `dynamodbav:"GSI2SK,omitempty"`
	Type         string        `dynamodbav:"type"`
	ID           string        `dynamodbav:"id"`
	CompanyID    string        `dynamodbav:"company_id"`
	EventID      string        `dynamodbav:"event_id"`
	Destination  string        `dynamodbav:"destination"`
	EndpointID   string        `dynamodbav:"endpoint_id,omitempty"`
	Round        int           `dynamodbav:"round"`
	URL          string        `dynamodbav:"url"`
	Signature    string        `dynamodbav:"signature,omitempty"`
	Status       string        `dynamodbav:"status"`
	Attempts     []attemptItem `dynamodbav:"attempts"`
	AttemptCount int           `dynamodbav:"attempt_count"`
	Queued       int           `dynamodbav:"queued"`
	CreatedAt    string        `dynamodbav:"created_at"`
	UpdatedAt    string        `dynamodbav:"updated_at"`
	// ExpiresAt is the TTL (AttrExpiresAt): Unix seconds of the event's
	// end. Deliveries written before it was set have none.
	ExpiresAt int64 `dynamodbav:"expires_at,omitempty"`
}

func attemptItemOf(a webhooks.Attempt) attemptItem {
	return attemptItem{Number: a.Number, At: timestamp.Format(a.At), StatusCode: a.StatusCode, Error: a.Error, DurationMS: a.Duration.Milliseconds()}
}

func (it deliveryItem) delivery() (webhooks.Delivery, error) {
	created, err := timestamp.Parse(it.CreatedAt)
	if err != nil {
		return webhooks.Delivery{}, fmt.Errorf("store: delivery %s: %w", it.ID, err)
	}
	updated, err := timestamp.Parse(it.UpdatedAt)
	if err != nil {
		return webhooks.Delivery{}, fmt.Errorf("store: delivery %s: %w", it.ID, err)
	}
	d := webhooks.Delivery{
		ID: it.ID, CompanyID: it.CompanyID, EventID: it.EventID, Destination: webhooks.Destination(it.Destination),
		EndpointID: it.EndpointID, Round: it.Round, URL: it.URL, Signature: it.Signature, Status: webhooks.Status(it.Status), Queued: it.Queued,
		CreatedAt: created, UpdatedAt: updated,
	}
	for _, a := range it.Attempts {
		at, err := timestamp.Parse(a.At)
		if err != nil {
			return webhooks.Delivery{}, fmt.Errorf("store: delivery %s: %w", it.ID, err)
		}
		d.Attempts = append(d.Attempts, webhooks.Attempt{
			Number: a.Number, At: at, StatusCode: a.StatusCode, Error: a.Error,
			Duration: time.Duration(a.DurationMS) * time.Millisecond,
		})
	}
	return d, nil
}

// Commit writes events that report no change of ours (a simulated or
// upstream notification) through the outbox, one transaction each, exactly
// as a change would write them; the caller then publishes them.
func (s *Webhooks) Commit(ctx context.Context, evs ...events.Event) error {
	for _, e := range evs {
		t := &Txn{}
		t.AddEvent(schema.EventItem, e)
		if err := s.db.CommitOnce(ctx, "commit event "+e.ID, t, func(context.Context, dynamo.Cancellation) error { return nil }); err != nil {
			return err
		}
	}
	return nil
}

// Event returns one of the company's events, or events.ErrNotFound.
func (s *Webhooks) Event(ctx context.Context, companyID, eventID string) (events.Event, error) {
	return s.outbox.Event(ctx, companyID, eventID)
}

// CreateDelivery writes a new delivery; webhooks.ErrDeliveryExists when its
// id is taken.
func (s *Webhooks) CreateDelivery(ctx context.Context, d webhooks.Delivery) error {
	it := deliveryItem{
		PK: schema.CompanyPK(d.CompanyID), SK: schema.DeliverySK(d.ID), Type: schema.KindWebhookDelivery,
		ID: d.ID, CompanyID: d.CompanyID, EventID: d.EventID, Destination: string(d.Destination), EndpointID: d.EndpointID, Round: d.Round,
		URL: d.URL, Signature: d.Signature, Status: string(d.Status), Attempts: []attemptItem{},
		AttemptCount: len(d.Attempts), Queued: d.Queued, CreatedAt: timestamp.Format(d.CreatedAt), UpdatedAt: timestamp.Format(d.UpdatedAt),
	}
	if !d.ExpiresAt.IsZero() {
		it.ExpiresAt = d.ExpiresAt.Unix()
	}
	if d.Status == webhooks.StatusPending {
		it.GSI2PK, it.GSI2SK = pendingDeliveryKeys(d.CompanyID, d.ID, it.UpdatedAt)
	}
	for _, a := range d.Attempts {
		it.Attempts = append(it.Attempts, attemptItemOf(a))
	}
	item, err := attributevalue.MarshalMap(it)
	if err != nil {
		return fmt.Errorf("store: encode delivery: %w", err)
	}
	err = s.db.Put(ctx, "put delivery "+d.ID, &dynamodb.PutItemInput{
		TableName:           aws.String(s.db.Table),
		Item:                item,
		ConditionExpression: aws.String("attribute_not_exists(PK)"),
	})
	if dynamo.ConditionFailed(err) {
		return webhooks.ErrDeliveryExists
	}
	return err
}

// Delivery reads one delivery; webhooks.ErrDeliveryNotFound when absent.
func (s *Webhooks) Delivery(ctx context.Context, companyID, deliveryID string) (webhooks.Delivery, error) {
	var it deliveryItem
	if err := s.db.Get(ctx, "delivery", schema.CompanyPK(companyID), schema.DeliverySK(deliveryID), &it, webhooks.ErrDeliveryNotFound); err != nil {
		return webhooks.Delivery{}, err
	}
	if it.Type != schema.KindWebhookDelivery {
		return webhooks.Delivery{}, webhooks.ErrDeliveryNotFound
	}
	return it.delivery()
}

// RecordAttempt appends a to the delivery and sets its status, on the
// condition that it is still PENDING with a.Number-1 attempts:
// webhooks.ErrAttemptTaken otherwise.
func (s *Webhooks) RecordAttempt(ctx context.Context, d webhooks.Delivery, a webhooks.Attempt, status webhooks.Status, now time.Time) error {
	av, err := attributevalue.Marshal([]attemptItem{attemptItemOf(a)})
	if err != nil {
		return fmt.Errorf("store: encode attempt: %w", err)
	}
	at := timestamp.Format(now)
	values := map[string]types.AttributeValue{
		":a":       av,
		":none":    &types.AttributeValueMemberL{Value: []types.AttributeValue{}},
		":n":       &types.AttributeValueMemberN{Value: fmt.Sprint(a.Number)},
		":prev":    &types.AttributeValueMemberN{Value: fmt.Sprint(a.Number - 1)},
		":s":       &types.AttributeValueMemberS{Value: string(status)},
		":pending": &types.AttributeValueMemberS{Value: string(webhooks.StatusPending)},
		":now":     &types.AttributeValueMemberS{Value: at},
	}
	update := "SET attempts = list_append(if_not_exists(attempts, :none), :a), attempt_count = :n, #status = :s, updated_at = :now"
	if status == webhooks.StatusPending {
		update += ", GSI2PK = :gpk, GSI2SK = :gsk"
		gpk, gsk := pendingDeliveryKeys(d.CompanyID, d.ID, at)
		values[":gpk"], values[":gsk"] = dynamo.Str(gpk), dynamo.Str(gsk)
	} else {
		update += " REMOVE GSI2PK, GSI2SK"
	}
	_, err = s.db.Update(ctx, fmt.Sprintf("record attempt %d of %s", a.Number, d.ID), &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.db.Table),
		Key:                       dynamo.Key(schema.CompanyPK(d.CompanyID), schema.DeliverySK(d.ID)),
		UpdateExpression:          aws.String(update),
		ConditionExpression:       aws.String("attribute_exists(PK) AND #status = :pending AND attempt_count = :prev"),
		ExpressionAttributeNames:  map[string]string{"#status": "status"},
		ExpressionAttributeValues: values,
	})
	if dynamo.ConditionFailed(err) {
		return webhooks.ErrAttemptTaken
	}
	return err
}

// CancelDelivery sets the delivery CANCELED on the condition that it is
// still PENDING with the attempts d has: webhooks.ErrAttemptTaken
// otherwise.
func (s *Webhooks) CancelDelivery(ctx context.Context, d webhooks.Delivery, now time.Time) error {
	_, err := s.db.Update(ctx, "cancel delivery "+d.ID, &dynamodb.UpdateItemInput{
		TableName:                aws.String(s.db.Table),
		Key:                      dynamo.Key(schema.CompanyPK(d.CompanyID), schema.DeliverySK(d.ID)),
		UpdateExpression:         aws.String("SET #status = :s, updated_at = :now REMOVE GSI2PK, GSI2SK"),
		ConditionExpression:      aws.String("attribute_exists(PK) AND #status = :pending AND attempt_count = :n"),
		ExpressionAttributeNames: map[string]string{"#status": "status"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":s":       dynamo.Str(string(webhooks.StatusCanceled)),
			":pending": dynamo.Str(string(webhooks.StatusPending)),
			":n":       dynamo.Num(int64(len(d.Attempts))),
			":now":     dynamo.Str(timestamp.Format(now)),
		},
	})
	if dynamo.ConditionFailed(err) {
		return webhooks.ErrAttemptTaken
	}
	return err
}

// MarkQueued raises the delivery's queued mark to n; a mark already at n or
// above is left as it is.
func (s *Webhooks) MarkQueued(ctx context.Context, companyID, deliveryID string, n int) error {
	_, err := s.db.Update(ctx, fmt.Sprintf("mark attempt %d of %s queued", n, deliveryID), &dynamodb.UpdateItemInput{
		TableName:           aws.String(s.db.Table),
		Key:                 dynamo.Key(schema.CompanyPK(companyID), schema.DeliverySK(deliveryID)),
		UpdateExpression:    aws.String("SET queued = :n"),
		ConditionExpression: aws.String("attribute_exists(PK) AND queued < :n"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":n": &types.AttributeValueMemberN{Value: fmt.Sprint(n)},
		},
	})
	if dynamo.ConditionFailed(err) {
		return nil
	}
	return err
}

// MarkDispatched sets dispatched_at on the event item, once, and takes it
// out of the outbox's indexes: its deliveries are written, and the
// sweeper finds those from now on.
func (s *Webhooks) MarkDispatched(ctx context.Context, companyID, eventID string, now time.Time) error {
	_, err := s.db.Update(ctx, "mark event "+eventID+" dispatched", &dynamodb.UpdateItemInput{
		TableName:           aws.String(s.db.Table),
		Key:                 dynamo.Key(schema.CompanyPK(companyID), schema.EventSK(eventID)),
		UpdateExpression:    aws.String("SET dispatched_at = if_not_exists(dispatched_at, :now) REMOVE GSI2PK, GSI2SK"),
		ConditionExpression: aws.String("attribute_exists(PK)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":now": &types.AttributeValueMemberS{Value: timestamp.Format(now)},
		},
	})
	if dynamo.ConditionFailed(err) {
		return events.ErrNotFound
	}
	return err
}

// pendingDeliveryKeys returns the GSI2 keys of a PENDING delivery that
// last moved at moved (formatted).
func pendingDeliveryKeys(companyID, deliveryID, moved string) (pk, sk string) {
	return schema.ShardKey(schema.PendingDeliveryIndex, deliveryID), schema.PendingDeliveryGSI2SK(moved, companyID, deliveryID)
}

// ClaimAttempt takes attempt n of the delivery until until: on the
// condition that it is PENDING with n-1 attempts and that no claim on
// attempt n runs past now; webhooks.ErrAttemptTaken otherwise.
func (s *Webhooks) ClaimAttempt(ctx context.Context, d webhooks.Delivery, n int, now, until time.Time) error {
	_, err := s.db.Update(ctx, fmt.Sprintf("claim attempt %d of %s", n, d.ID), &dynamodb.UpdateItemInput{
		TableName:        aws.String(s.db.Table),
		Key:              dynamo.Key(schema.CompanyPK(d.CompanyID), schema.DeliverySK(d.ID)),
		UpdateExpression: aws.String("SET claimed = :n, claimed_until = :until"),
		ConditionExpression: aws.String("attribute_exists(PK) AND #status = :pending AND attempt_count = :prev AND " +
			"(attribute_not_exists(claimed) OR claimed < :n OR claimed_until < :now)"),
		ExpressionAttributeNames: map[string]string{"#status": "status"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":n":       dynamo.Num(int64(n)),
			":prev":    dynamo.Num(int64(n - 1)),
			":pending": dynamo.Str(string(webhooks.StatusPending)),
			":now":     dynamo.Str(timestamp.Format(now)),
			":until":   dynamo.Str(timestamp.Format(until)),
		},
	})
	if dynamo.ConditionFailed(err) {
		return webhooks.ErrAttemptTaken
	}
	return err
}

// StalledDeliveries returns up to limit PENDING deliveries, of every
// company, that last moved before cutoff, from every shard of the
// pending-delivery index, oldest first within a shard.
func (s *Webhooks) StalledDeliveries(ctx context.Context, cutoff time.Time, limit int) ([]webhooks.Delivery, error) {
	return DueItems(ctx, s.db, schema.ShardKeys(schema.PendingDeliveryIndex)[:schema.IndexShards], cutoff, limit, deliveryItem.delivery)
}

// Requeue records that the delivery moved at now: on the condition that it
// is still PENDING with the attempts d has and last moved when d says;
// webhooks.ErrAttemptTaken otherwise.
func (s *Webhooks) Requeue(ctx context.Context, d webhooks.Delivery, now time.Time) error {
	at := timestamp.Format(now)
	gpk, gsk := pendingDeliveryKeys(d.CompanyID, d.ID, at)
	_, err := s.db.Update(ctx, "requeue delivery "+d.ID, &dynamodb.UpdateItemInput{
		TableName:                aws.String(s.db.Table),
		Key:                      dynamo.Key(schema.CompanyPK(d.CompanyID), schema.DeliverySK(d.ID)),
		UpdateExpression:         aws.String("SET updated_at = :now, GSI2PK = :gpk, GSI2SK = :gsk"),
		ConditionExpression:      aws.String("attribute_exists(PK) AND #status = :pending AND attempt_count = :n AND updated_at = :was"),
		ExpressionAttributeNames: map[string]string{"#status": "status"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":now":     dynamo.Str(at),
			":gpk":     dynamo.Str(gpk),
			":gsk":     dynamo.Str(gsk),
			":pending": dynamo.Str(string(webhooks.StatusPending)),
			":n":       dynamo.Num(int64(len(d.Attempts))),
			":was":     dynamo.Str(timestamp.Format(d.UpdatedAt)),
		},
	})
	if dynamo.ConditionFailed(err) {
		return webhooks.ErrAttemptTaken
	}
	return err
}
