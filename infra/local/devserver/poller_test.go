package devserver_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"payments/infra/local/devserver"
	"payments/infra/local/localtest"
	"payments/pkg/waittest"
)

// delivery is one message as a test consumer saw it.
type delivery struct {
	at           time.Time
	record       events.SQSMessage
	receiveCount int
}

// consumer is a test SQS handler that records deliveries and fails the
// messages whose body fail returns true for.
type consumer struct {
	mu         sync.Mutex
	deliveries []delivery
	fail       func(body string, receiveCount int) bool
	failBatch  bool // return an error instead of batch item failures
	ch         chan delivery
}

func newConsumer() *consumer { return &consumer{ch: make(chan delivery, 100)} }

func (c *consumer) handle(ctx context.Context, e events.SQSEvent) (events.SQSEventResponse, error) {
	var resp events.SQSEventResponse
	if _, ok := lambdacontext.FromContext(ctx); !ok {
		panic("no Lambda context")
	}
	for _, r := range e.Records {
		n, _ := strconv.Atoi(r.Attributes["ApproximateReceiveCount"])
		d := delivery{at: time.Now(), record: r, receiveCount: n}
		c.mu.Lock()
		c.deliveries = append(c.deliveries, d)
		fail := c.fail != nil && c.fail(r.Body, n)
		c.mu.Unlock()
		c.ch <- d
		if fail {
			if c.failBatch {
				return resp, context.Canceled // any error
			}
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
		}
	}
	return resp, nil
}

// next waits for the next delivery.
func (c *consumer) next(t *testing.T, within time.Duration) delivery {
	t.Helper()
	select {
	case d := <-c.ch:
		return d
	case <-time.After(within):
		t.Fatalf("no delivery within %v", within)
		return delivery{}
	}
}

// startPoller polls queueURL for c until the test ends.
func startPoller(t *testing.T, queueURL string, report bool, c *consumer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p := &devserver.Poller{Client: localtest.SQSClient(t), PollInterval: 50 * time.Millisecond}
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Run(ctx, devserver.Consumer{Function: "worker", QueueURL: queueURL, BatchSize: 10, ReportBatchItemFailures: report, Handler: c.handle})
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

func send(t *testing.T, queueURL, body string, delay int32, attrs map[string]sqstypes.MessageAttributeValue) {
	t.Helper()
	_, err := localtest.SQSClient(t).SendMessage(context.Background(), &sqs.SendMessageInput{
		QueueUrl: aws.String(queueURL), MessageBody: aws.String(body), DelaySeconds: delay, MessageAttributes: attrs,
	})
	if err != nil {
		t.Fatal(err)
	}
}

// visible returns how many messages the queue holds, visible or in flight.
func visible(t *testing.T, queueURL string) int {
	t.Helper()
	out, err := localtest.SQSClient(t).GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(queueURL),
		AttributeNames: []sqstypes.QueueAttributeName{
			sqstypes.QueueAttributeNameApproximateNumberOfMessages, sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := strconv.Atoi(out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessages)])
	b, _ := strconv.Atoi(out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible)])
	return a + b
}

func TestPollerDelivers(t *testing.T) {
	t.Parallel()
	url := localtest.NewQueue(t, map[string]string{"VisibilityTimeout": "1"})
	c := newConsumer()
	startPoller(t, url, true, c)
	send(t, url, `{"hello":"world"}`, 0, map[string]sqstypes.MessageAttributeValue{
		"kind": {DataType: aws.String("String"), StringValue: aws.String("greeting")},
	})
	d := c.next(t, 10*time.Second)
	r := d.record
	checks := []struct {
		what      string
		got, want any
	}{
		{"body", r.Body, `{"hello":"world"}`},
		{"eventSource", r.EventSource, "aws:sqs"},
		{"awsRegion", r.AWSRegion, "us-east-1"},
		{"receive count", d.receiveCount, 1},
		{"message attribute", aws.ToString(r.MessageAttributes["kind"].StringValue), "greeting"},
		{"message attribute type", r.MessageAttributes["kind"].DataType, "String"},
	}
	for _, ck := range checks {
		if ck.got != ck.want {
			t.Errorf("%s = %v, want %v", ck.what, ck.got, ck.want)
		}
	}
	if r.MessageId == "" || r.ReceiptHandle == "" || r.EventSourceARN == "" || r.Attributes["SentTimestamp"] == "" {
		t.Errorf("incomplete record: %+v", r)
	}
	waittest.Until(t, 5*time.Second, "the handled message is deleted", func() bool { return visible(t, url) == 0 })
}

func TestPollerRedeliversBatchItemFailures(t *testing.T) {
	t.Parallel()
	url := localtest.NewQueue(t, map[string]string{"VisibilityTimeout": "1"})
	c := newConsumer()
	c.fail = func(body string, n int) bool { return body == "bad" && n < 3 }
	startPoller(t, url, true, c)
	send(t, url, "good", 0, nil)
	send(t, url, "bad", 0, nil)

	var bad []delivery
	good := 0
	deadline := time.Now().Add(20 * time.Second)
	for len(bad) < 3 && time.Now().Before(deadline) {
		d := c.next(t, 10*time.Second)
		switch d.record.Body {
		case "good":
			good++
		case "bad":
			bad = append(bad, d)
		}
	}
	if good != 1 {
		t.Errorf("the good message was delivered %d times, want once", good)
	}
	if len(bad) != 3 {
		t.Fatalf("the failing message was delivered %d times, want 3", len(bad))
	}
	for i, d := range bad {
		if d.receiveCount != i+1 {
			t.Errorf("delivery %d: ApproximateReceiveCount %d, want %d", i+1, d.receiveCount, i+1)
		}
		if i > 0 {
			if gap := d.at.Sub(bad[i-1].at); gap < 900*time.Millisecond {
				t.Errorf("delivery %d came %v after the previous one, before the 1 s visibility timeout", i+1, gap)
			}
		}
	}
	waittest.Until(t, 5*time.Second, "the message is deleted once it succeeds", func() bool { return visible(t, url) == 0 })
}

func TestPollerErrorKeepsWholeBatch(t *testing.T) {
	t.Parallel()
	url := localtest.NewQueue(t, map[string]string{"VisibilityTimeout": "1"})
	c := newConsumer()
	c.failBatch = true
	c.fail = func(_ string, n int) bool { return n < 2 }
	startPoller(t, url, false, c)
	send(t, url, "m", 0, nil)
	first := c.next(t, 10*time.Second)
	second := c.next(t, 10*time.Second)
	if first.receiveCount != 1 || second.receiveCount != 2 {
		t.Errorf("receive counts %d, %d; want 1, 2", first.receiveCount, second.receiveCount)
	}
	waittest.Until(t, 5*time.Second, "the message is deleted once the handler succeeds", func() bool { return visible(t, url) == 0 })
}

func TestPollerHonoursDelaySeconds(t *testing.T) {
	t.Parallel()
	url := localtest.NewQueue(t, nil)
	c := newConsumer()
	startPoller(t, url, true, c)
	sent := time.Now()
	send(t, url, "later", 2, nil)
	d := c.next(t, 10*time.Second)
	if waited := d.at.Sub(sent); waited < 2*time.Second {
		t.Errorf("delivered after %v, before the 2 s delay", waited)
	}
}

// TestPollerHandlesBatchesConcurrently: a queue is read by as many pollers
// as its consumer's Concurrency (DefaultConcurrency when unset), each
// handling its own batch, as Lambda does, and every message is handled
// once.
func TestPollerHandlesBatchesConcurrently(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ concurrency, want int }{{0, devserver.DefaultConcurrency}, {2, 2}} {
		t.Run(strconv.Itoa(tt.concurrency), func(t *testing.T) {
			t.Parallel()
			url := localtest.NewQueue(t, nil)
			const messages = 40
			for i := range messages {
				send(t, url, strconv.Itoa(i), 0, nil)
			}
			var mu sync.Mutex
			inFlight, most := 0, 0
			seen := map[string]int{}
			release := make(chan struct{})
			handle := func(ctx context.Context, e events.SQSEvent) (events.SQSEventResponse, error) {
				mu.Lock()
				inFlight++
				most = max(most, inFlight)
				for _, r := range e.Records {
					seen[r.Body]++
				}
				mu.Unlock()
				<-release
				mu.Lock()
				inFlight--
				mu.Unlock()
				return events.SQSEventResponse{}, nil
			}
			ctx, cancel := context.WithCancel(context.Background())
			p := &devserver.Poller{Client: localtest.SQSClient(t), PollInterval: 50 * time.Millisecond}
			done := make(chan struct{})
			go func() {
				defer close(done)
				p.Run(ctx, devserver.Consumer{Function: "worker", QueueURL: url, BatchSize: 1, Concurrency: tt.concurrency, Handler: handle})
			}()
			t.Cleanup(func() {
				cancel()
				<-done
			})
			waittest.Until(t, 10*time.Second, "batches in flight at once", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return inFlight == tt.want
			})
			close(release)
			waittest.Until(t, 30*time.Second, "every message handled", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(seen) == messages
			})
			waittest.Until(t, 10*time.Second, "every message deleted", func() bool { return visible(t, url) == 0 })
			mu.Lock()
			defer mu.Unlock()
			if most != tt.want {
				t.Errorf("%d batches in flight at most, want %d", most, tt.want)
			}
			for body, n := range seen {
				if n != 1 {
					t.Errorf("message %s handled %d times", body, n)
				}
			}
		})
	}
}
