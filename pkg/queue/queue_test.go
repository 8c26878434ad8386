package queue_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"payments/pkg/correlation"
	"payments/pkg/queue"
	"payments/pkg/queue/queuetest"
)

func TestBatchReportsOnlyFailures(t *testing.T) {
	h := queue.Batch(func(ctx context.Context, m queue.Message) error {
		switch string(m.Body) {
		case "fail":
			return errors.New("boom")
		case "panic":
			panic("bad message")
		}
		return nil
	})
	ev := events.SQSEvent{Records: []events.SQSMessage{
		{MessageId: "1", Body: "ok"},
		{MessageId: "2", Body: "fail"},
		{MessageId: "3", Body: "panic"},
		{MessageId: "4", Body: "ok", Attributes: map[string]string{"ApproximateReceiveCount": "3"}},
	}}
	resp, err := h(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range resp.BatchItemFailures {
		got = append(got, f.ItemIdentifier)
	}
	if len(got) != 2 || got[0] != "2" || got[1] != "3" {
		t.Fatalf("failures = %v, want [2 3]", got)
	}
}

func TestDelaySecondsRounding(t *testing.T) {
	tests := []struct {
		in   time.Duration
		want int32
	}{
		{0, 0}, {-time.Second, 0}, {1500 * time.Millisecond, 2}, {5 * time.Second, 5}, {time.Hour, 900},
	}
	for _, tt := range tests {
		if got := queue.DelaySecondsForTest(tt.in); got != tt.want {
			t.Errorf("delay %v = %d, want %d", tt.in, got, tt.want)
		}
	}
}

// TestPublisherDelay sends through the SQS emulator and checks that a delayed
// message is not visible before its delay.
func TestPublisherDelay(t *testing.T) {
	client := queuetest.Client(t)
	url := queuetest.NewQueue(t, client, nil)
	p := queue.NewPublisher(client, url)
	ctx := context.Background()

	start := time.Now()
	if err := p.Send(ctx, []byte("later"), 2*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := p.Send(ctx, []byte("now"), 0); err != nil {
		t.Fatal(err)
	}
	var seen []string
	for time.Since(start) < 10*time.Second && len(seen) < 2 {
		out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(url), MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Messages {
			body := aws.ToString(m.Body)
			if body == "later" && time.Since(start) < 2*time.Second {
				t.Errorf("delayed message arrived after %v", time.Since(start))
			}
			seen = append(seen, body)
			client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle})
		}
	}
	if len(seen) != 2 || seen[0] != "now" || seen[1] != "later" {
		t.Fatalf("received %v, want [now later]", seen)
	}
}

// TestMessagesCarryTheirCorrelation sends through the SQS emulator from a
// context with a correlation id and a trace header, receives the message
// as Lambda's event source would give it, and checks that the handler's
// context has both; a message sent without them is correlated by its id.
func TestMessagesCarryTheirCorrelation(t *testing.T) {
	client := queuetest.Client(t)
	url := queuetest.NewQueue(t, client, nil)
	p := queue.NewPublisher(client, url)
	const trace = "Root=1-6745a1b2-0123456789abcdef01234567;Parent=53995c3f42cd8ad8;Sampled=1"
	ctx := correlation.WithTrace(correlation.NewContext(context.Background(), "req-42"), trace)
	if err := p.Send(ctx, []byte("with"), 0); err != nil {
		t.Fatal(err)
	}
	if err := p.Send(context.Background(), []byte("without"), 0); err != nil {
		t.Fatal(err)
	}
	var recs []events.SQSMessage
	for len(recs) < 2 {
		out, err := client.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(url), MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
			// The emulator answers system attributes for the legacy list only.
			//lint:ignore SA1019 the emulator reads only the legacy field
			AttributeNames:        []types.QueueAttributeName{types.QueueAttributeNameAll},
			MessageAttributeNames: []string{"All"},
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Messages {
			rec := events.SQSMessage{MessageId: aws.ToString(m.MessageId), Body: aws.ToString(m.Body), Attributes: m.Attributes,
				MessageAttributes: map[string]events.SQSMessageAttribute{}}
			for k, v := range m.MessageAttributes {
				rec.MessageAttributes[k] = events.SQSMessageAttribute{StringValue: v.StringValue, DataType: aws.ToString(v.DataType)}
			}
			recs = append(recs, rec)
		}
	}
	got := map[string][2]string{}
	h := queue.Batch(func(ctx context.Context, m queue.Message) error {
		got[string(m.Body)] = [2]string{correlation.ID(ctx), correlation.Trace(ctx)}
		return nil
	})
	if _, err := h(context.Background(), events.SQSEvent{Records: recs}); err != nil {
		t.Fatal(err)
	}
	if g := got["with"]; g != [2]string{"req-42", trace} {
		t.Errorf("a message sent with a correlation: handled with %q", g)
	}
	for _, r := range recs {
		if r.Body == "without" && got["without"] != [2]string{r.MessageId, ""} {
			t.Errorf("a message sent without: handled with %q, want its message id %s", got["without"], r.MessageId)
		}
	}
}

// TestSendAll: 23 bodies go in three calls and arrive once each, with the
// correlation id.
func TestSendAll(t *testing.T) {
	client := queuetest.Client(t)
	url := queuetest.NewQueue(t, client, nil)
	p := queue.NewPublisher(client, url)
	want := map[string]bool{}
	var bodies [][]byte
	for i := range 23 {
		b := fmt.Sprintf("job-%02d", i)
		bodies, want[b] = append(bodies, []byte(b)), true
	}
	if err := p.SendAll(correlation.NewContext(context.Background(), "req-7"), bodies); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for len(got) < len(want) {
		out, err := client.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(url), MaxNumberOfMessages: 10, WaitTimeSeconds: 1, MessageAttributeNames: []string{"All"},
		})
		if err != nil || len(out.Messages) == 0 {
			t.Fatalf("received %d of %d: %v", len(got), len(want), err)
		}
		for _, m := range out.Messages {
			b := aws.ToString(m.Body)
			if got[b] || !want[b] || aws.ToString(m.MessageAttributes[queue.CorrelationAttribute].StringValue) != "req-7" {
				t.Fatalf("message %q (seen %v) %v", b, got[b], m.MessageAttributes)
			}
			got[b] = true
		}
	}
	if err := queue.NewPublisher(client, "").SendAll(context.Background(), bodies); !errors.Is(err, queue.ErrNoQueue) {
		t.Fatalf("no queue: %v", err)
	}
}
