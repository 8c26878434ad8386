package store_test

import (
	"context"
	"encoding/json"
	"errors"
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
	"payments/pkg/store/storetest"
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

func TestOutboxPublishesAfterCommitAndSweepsWhatACrashLeft(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	ob := store.NewOutbox(db)
	sqsClient := queuetest.Client(t)
	url := queuetest.NewQueue(t, sqsClient, nil)
	live := outbox.NewPublisher(ob, queue.NewPublisher(sqsClient, url))
	crashing := outbox.NewPublisher(ob, failingQueue{})

	now := time.Now()
	delivered, _ := events.New("co-1", events.PaymentCollect, map[string]string{"transaction_id": "t1"}, now)
	lost, _ := events.New("co-1", events.PaymentCollect, map[string]string{"transaction_id": "t2"}, now)
	commitEvent(t, db, delivered)
	commitEvent(t, db, lost)

	if err := live.Publish(ctx, delivered); err != nil {
		t.Fatal(err)
	}
	if err := crashing.Publish(ctx, lost); err == nil {
		t.Fatal("the injected fault did not fail Publish")
	}

	// Within the grace period the sweeper leaves both alone.
	if n, err := live.Sweep(ctx, now); err != nil || n != 0 {
		t.Fatalf("early sweep published %d, %v", n, err)
	}
	// After it, only the lost event is published.
	if n, err := live.Sweep(ctx, now.Add(outbox.Grace+time.Second)); err != nil || n != 1 {
		t.Fatalf("sweep published %d, %v; want 1", n, err)
	}
	if n, _ := live.Sweep(ctx, now.Add(outbox.Grace+time.Second)); n != 0 {
		t.Fatalf("second sweep published %d again", n)
	}

	got := map[string]bool{}
	deadline := time.Now().Add(5 * time.Second)
	for len(got) < 2 && time.Now().Before(deadline) {
		out, err := sqsClient.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Messages {
			var msg outbox.Message
			if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &msg); err != nil {
				t.Fatal(err)
			}
			if got[msg.EventID] {
				t.Errorf("event %s queued twice", msg.EventID)
			}
			got[msg.EventID] = true
		}
	}
	if !got[delivered.ID] || !got[lost.ID] || len(got) != 2 {
		t.Fatalf("queued %v, want both events once", got)
	}

	e, err := ob.Event(ctx, "co-1", lost.ID)
	if err != nil || string(e.Body) != string(lost.Body) || e.Kind != events.PaymentCollect {
		t.Fatalf("Event = %+v, %v", e, err)
	}
	if _, err := ob.Event(ctx, "co-2", lost.ID); !errors.Is(err, events.ErrNotFound) {
		t.Fatalf("another company read the event: %v", err)
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
			"PK": &types.AttributeValueMemberS{Value: "COMPANY#co-1"}, "SK": &types.AttributeValueMemberS{Value: "EVT#" + legacy.ID},
		},
		UpdateExpression:          aws.String("SET GSI2PK = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "OUTBOX"}},
	}); err != nil {
		t.Fatal(err)
	}
	want[legacy.ID] = true
	if n := storetest.DistinctGSI2Partitions(t, db, "OUTBOX#"); n < 8 {
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
			got, ok := put.Put.Item[store.AttrExpiresAt].(*types.AttributeValueMemberN)
			if !ok || got.Value != tt.want {
				t.Fatalf("%s = %v, want %s", store.AttrExpiresAt, put.Put.Item[store.AttrExpiresAt], tt.want)
			}
			if events.Retention != 30*24*time.Hour {
				t.Fatalf("retention %v, want 30 days", events.Retention)
			}
		})
	}
}
