package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"payments/pkg/events"
	"payments/pkg/outbox"
	"payments/pkg/queue"
	"payments/pkg/queue/queuetest"
	"payments/pkg/store"
	"payments/pkg/store/schema"
	"payments/pkg/store/storetest"
	"payments/pkg/waittest"
)

// failingQueue refuses every message: the process "dies" between commit and
// publish.
type failingQueue struct{}

func (failingQueue) Send(context.Context, []byte, time.Duration) error {
	return errors.New("injected: process killed before publish")
}

func commitEvent(t *testing.T, db *store.DB, e events.Event) {
	t.Helper()
	put, err := store.EventPutForTest(db.Table, e)
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Client.TransactWriteItems(context.Background(), &dynamodb.TransactWriteItemsInput{
		TransactItems: []types.TransactWriteItem{put},
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestOutboxPublishesAfterCommitAndSweepsWhatACrashLeft: of three events,
// one is published and taken by the webhook worker, one is never published
// (the process died before), one is published but its message is lost
// (the worker never takes it). After the grace the sweep publishes the two
// left behind, once per sweep, until the worker takes them.
func TestOutboxPublishesAfterCommitAndSweepsWhatACrashLeft(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	ob := store.NewOutbox(db)
	hooks := store.NewWebhooks(db)
	sqsClient := queuetest.Client(t)
	url := queuetest.NewQueue(t, sqsClient, nil)
	live := outbox.NewPublisher(ob, queue.NewPublisher(sqsClient, url))
	crashing := outbox.NewPublisher(ob, failingQueue{})

	now := time.Now()
	taken, _ := events.New("co-1", events.PaymentCollect, map[string]string{"transaction_id": "t1"}, now)
	lost, _ := events.New("co-1", events.PaymentCollect, map[string]string{"transaction_id": "t2"}, now)
	dropped, _ := events.New("co-1", events.PaymentCollect, map[string]string{"transaction_id": "t3"}, now)
	for _, e := range []events.Event{taken, lost, dropped} {
		commitEvent(t, db, e)
	}

	if err := live.Publish(ctx, taken, dropped); err != nil {
		t.Fatal(err)
	}
	if err := crashing.Publish(ctx, lost); err == nil {
		t.Fatal("the injected fault did not fail Publish")
	}
	got := map[string]int{}
	receive := func(want int) {
		t.Helper()
		n := 0
		waittest.Until(t, 5*time.Second, fmt.Sprintf("%d messages", want), func() bool {
			out, err := sqsClient.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range out.Messages {
				var msg outbox.Message
				if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &msg); err != nil {
					t.Fatal(err)
				}
				got[msg.EventID]++
				n++
				if _, err := sqsClient.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle}); err != nil {
					t.Fatal(err)
				}
			}
			return n >= want
		})
	}
	receive(2) // the message of dropped is lost: the worker never marks it
	if err := hooks.MarkDispatched(ctx, "co-1", taken.ID, now); err != nil {
		t.Fatal(err)
	}

	// Within the grace period the sweeper leaves them alone.
	if n, err := live.Sweep(ctx, now); err != nil || n != 0 {
		t.Fatalf("early sweep published %d, %v", n, err)
	}
	// After it, the two left behind are published, once.
	later := now.Add(outbox.Grace + time.Second)
	if n, err := live.Sweep(ctx, later); err != nil || n != 2 {
		t.Fatalf("sweep published %d, %v; want 2", n, err)
	}
	if n, _ := live.Sweep(ctx, later); n != 0 {
		t.Fatalf("second sweep published %d again", n)
	}
	receive(2)
	if want := map[string]int{taken.ID: 1, lost.ID: 1, dropped.ID: 2}; !maps.Equal(got, want) {
		t.Fatalf("queued %v, want %v", got, want)
	}
	// Not taken a grace after the sweep published them, they are
	// published again; once taken, never.
	if n, err := live.Sweep(ctx, later.Add(outbox.Grace+time.Second)); err != nil || n != 2 {
		t.Fatalf("sweep after another grace published %d, %v; want 2", n, err)
	}
	for _, e := range []events.Event{lost, dropped} {
		if err := hooks.MarkDispatched(ctx, "co-1", e.ID, now); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := live.Sweep(ctx, later.Add(time.Hour)); err != nil || n != 0 {
		t.Fatalf("sweep after the worker took them published %d, %v", n, err)
	}

	e, err := ob.Event(ctx, "co-1", lost.ID)
	if err != nil || string(e.Body) != string(lost.Body) || e.Kind != events.PaymentCollect {
		t.Fatalf("Event = %+v, %v", e, err)
	}
	if _, err := ob.Event(ctx, "co-2", lost.ID); !errors.Is(err, events.ErrNotFound) {
		t.Fatalf("another company read the event: %v", err)
	}
}

// TestOutboxMarkPublishedAfterTheWorker: a worker that takes the event
// before its publisher marks it published (it reads the queue faster)
// leaves it in no index: the mark that comes after does not put it back.
func TestOutboxMarkPublishedAfterTheWorker(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	ob := store.NewOutbox(db)
	now := time.Now()
	e, _ := events.New("co-1", events.PaymentCollect, map[string]string{"transaction_id": "t1"}, now)
	commitEvent(t, db, e)
	if err := store.NewWebhooks(db).MarkDispatched(ctx, "co-1", e.ID, now); err != nil {
		t.Fatal(err)
	}
	if err := ob.MarkPublished(ctx, "co-1", e.ID, now); err != nil {
		t.Fatal(err)
	}
	far := now.Add(time.Hour)
	for name, read := range map[string]func(context.Context, time.Time, int) ([]events.Event, error){
		"unpublished": ob.Unpublished, "undispatched": ob.Undispatched,
	} {
		if evs, err := read(ctx, far, 10); err != nil || len(evs) != 0 {
			t.Fatalf("%s: %d events, %v", name, len(evs), err)
		}
	}
	if err := ob.MarkPublished(ctx, "co-2", e.ID, now); !errors.Is(err, events.ErrNotFound) {
		t.Fatalf("another company's event marked: %v", err)
	}
}

// TestOutboxSweepsEveryShard: unpublished events spread over the shards of
// the outbox index, and one left in the unsharded partition by a release
// before the sharding, are all found.
func TestOutboxSweepsEveryShard(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	ob := store.NewOutbox(db)
	now := time.Now()
	want := map[string]bool{}
	for i := range 40 {
		e, _ := events.New("co-1", events.PaymentCollect, map[string]int{"n": i}, now)
		commitEvent(t, db, e)
		want[e.ID] = true
	}
	legacy, _ := events.New("co-1", events.PaymentCollect, map[string]string{"n": "legacy"}, now)
	commitEvent(t, db, legacy)
	if _, err := db.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(db.Table),
		Key: map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: schema.CompanyPK("co-1")}, "SK": &types.AttributeValueMemberS{Value: schema.EventSK(legacy.ID)},
		},
		UpdateExpression:          aws.String("SET GSI2PK = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: schema.OutboxIndex}},
	}); err != nil {
		t.Fatal(err)
	}
	want[legacy.ID] = true
	if n := storetest.DistinctGSI2Partitions(t, db, schema.OutboxIndex+"#"); n < 8 {
		t.Fatalf("40 events use %d shards", n)
	}
	got, err := ob.Unpublished(ctx, now.Add(time.Minute), 1000)
	if err != nil || len(got) != len(want) {
		t.Fatalf("Unpublished = %d events, %v; want %d", len(got), err, len(want))
	}
	for _, e := range got {
		if !want[e.ID] {
			t.Fatalf("unexpected event %s", e.ID)
		}
	}
}

// TestEventsExpireAfterRetention: every event item carries the table's TTL
// attribute, its creation + events.Retention (30 days) in Unix seconds,
// whether or not it is ever published or delivered.
func TestEventsExpireAfterRetention(t *testing.T) {
	created := time.Date(2026, 5, 1, 10, 0, 0, 123e6, time.UTC)
	tests := []struct {
		name string
		at   time.Time
		want string
	}{
		{"UTC", created, "1780221600"},
		{"another zone", created.In(time.FixedZone("WAT", 3600)), "1780221600"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := events.New("co-1", events.PaymentCollect, map[string]string{"transaction_id": "t1"}, tt.at)
			if err != nil {
				t.Fatal(err)
			}
			put, err := store.EventPutForTest("table", e)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := put.Put.Item[schema.AttrExpiresAt].(*types.AttributeValueMemberN)
			if !ok || got.Value != tt.want {
				t.Fatalf("%s = %v, want %s", schema.AttrExpiresAt, put.Put.Item[schema.AttrExpiresAt], tt.want)
			}
			if events.Retention != 30*24*time.Hour {
				t.Fatalf("retention %v, want 30 days", events.Retention)
			}
		})
	}
}
