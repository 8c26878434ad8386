package stack_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"payments/infra/local/localtest"
	"payments/infra/local/stack"
	"payments/pkg/store/storetest"
	"payments/pkg/waittest"
)

// TestCreateQueuesRedrive creates a queue with a DLQ and checks the redrive
// policy works: a message received maxReceiveCount times moves to the DLQ.
func TestCreateQueuesRedrive(t *testing.T) {
	ctx := context.Background()
	c := localtest.SQSClient(t)
	prefix := "test-" + storetest.RandomSuffix() + "-"
	urls, err := stack.CreateQueues(ctx, c, prefix, []stack.Queue{
		{Name: "work", DLQ: "work-dlq", MaxReceiveCount: 1, VisibilityTimeout: 1},
		{Name: "work-dlq", MessageRetentionPeriod: 1209600},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, u := range urls {
			c.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(u)})
		}
	}()
	attrs, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(urls["work"]), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll},
	})
	if err != nil {
		t.Fatal(err)
	}
	var policy struct {
		Target string `json:"deadLetterTargetArn"`
		Max    any    `json:"maxReceiveCount"`
	}
	if err := json.Unmarshal([]byte(attrs.Attributes["RedrivePolicy"]), &policy); err != nil || policy.Target != stack.QueueARN(prefix+"work-dlq") {
		t.Errorf("RedrivePolicy %q (%v)", attrs.Attributes["RedrivePolicy"], err)
	}
	if attrs.Attributes["VisibilityTimeout"] != "1" {
		t.Errorf("VisibilityTimeout %q, want 1", attrs.Attributes["VisibilityTimeout"])
	}

	if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(urls["work"]), MessageBody: aws.String("poison")}); err != nil {
		t.Fatal(err)
	}
	out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(urls["work"]), MaxNumberOfMessages: 1, WaitTimeSeconds: 2})
	if err != nil || len(out.Messages) != 1 {
		t.Fatalf("receive: %v, %d messages", err, len(out.Messages))
	}
	waittest.Until(t, 10*time.Second, "the message moves to the DLQ after maxReceiveCount receives", func() bool {
		out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(urls["work-dlq"]), MaxNumberOfMessages: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) == 1 && aws.ToString(out.Messages[0].Body) != "poison" {
			t.Errorf("DLQ message %q", aws.ToString(out.Messages[0].Body))
		}
		return len(out.Messages) == 1
	})
}

func TestCreateQueuesIdempotent(t *testing.T) {
	ctx := context.Background()
	c := localtest.SQSClient(t)
	prefix := "test-" + storetest.RandomSuffix() + "-"
	qs := []stack.Queue{{Name: "a", DLQ: "a-dlq", MaxReceiveCount: 3, VisibilityTimeout: 30}, {Name: "a-dlq"}}
	first, err := stack.CreateQueues(ctx, c, prefix, qs)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, u := range first {
			c.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(u)})
		}
	}()
	second, err := stack.CreateQueues(ctx, c, prefix, qs)
	if err != nil {
		t.Fatal(err)
	}
	for name, u := range first {
		if second[name] != u {
			t.Errorf("%s: %s then %s", name, u, second[name])
		}
	}
	if _, err := stack.CreateQueues(ctx, c, prefix, []stack.Queue{{Name: "b", DLQ: "b-dlq"}}); err == nil {
		t.Error("a DLQ without maxReceiveCount was accepted")
	}
}
