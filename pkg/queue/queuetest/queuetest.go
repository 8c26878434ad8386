// Package queuetest gives tests a fresh queue in the local SQS emulator,
// whose address comes from AWS_ENDPOINT_URL_SQS (set by `make test`), or,
// in a `go test -short` run (make test-unit), in an in-memory SQS in the
// test process (MemorySQS).
package queuetest

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"payments/pkg/queue"
	"payments/pkg/store/storetest"
)

// Client returns an SQS client for the emulator, failing t when
// AWS_ENDPOINT_URL_SQS is unset; in -short runs, for the in-memory SQS.
func Client(t testing.TB) *sqs.Client {
	t.Helper()
	if testing.Short() {
		MemorySQS()
	}
	ep := os.Getenv("AWS_ENDPOINT_URL_SQS")
	if ep == "" {
		t.Fatal("AWS_ENDPOINT_URL_SQS is not set: run the tests with `make test`, which starts the SQS emulator")
	}
	return queue.NewClient(storetest.AWSConfig(), ep)
}

// NewQueue creates a uniquely named queue with the given attributes and
// deletes it when the test ends. It returns the queue URL.
func NewQueue(t testing.TB, client *sqs.Client, attrs map[string]string) string {
	t.Helper()
	out, err := client.CreateQueue(context.Background(), &sqs.CreateQueueInput{
		QueueName:  aws.String("test-" + storetest.RandomSuffix()),
		Attributes: attrs,
	})
	if err != nil {
		t.Fatalf("create test queue: %v", err)
	}
	t.Cleanup(func() {
		client.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: out.QueueUrl})
	})
	return aws.ToString(out.QueueUrl)
}

// Depth returns how many messages queue url holds: visible, in flight or
// delayed.
func Depth(t testing.TB, client *sqs.Client, url string) int {
	t.Helper()
	out, err := client.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(url),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages,
			types.QueueAttributeNameApproximateNumberOfMessagesNotVisible, types.QueueAttributeNameApproximateNumberOfMessagesDelayed},
	})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, v := range out.Attributes {
		i, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("queue attributes %v", out.Attributes)
		}
		n += i
	}
	return n
}
