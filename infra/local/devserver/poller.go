package devserver

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"payments/infra/local/stack"
	"payments/pkg/function"
)

// Consumer is a function triggered by an SQS queue (an SQS event source
// mapping).
type Consumer struct {
	// Function is the function's folder name under functions/.
	Function string
	// QueueURL is the queue's URL in the emulator.
	QueueURL string
	// BatchSize is the most messages per invocation: 1 to 10 (default 10).
	BatchSize int
	// ReportBatchItemFailures makes the handler's BatchItemFailures count:
	// only those messages stay on the queue. Without it, a handler error
	// leaves the whole batch on the queue and success deletes it all.
	ReportBatchItemFailures bool
	// Handler is the function's Lambda handler.
	Handler function.SQSHandler
	// Timeout is the function's timeout (default one minute).
	Timeout time.Duration
	// Concurrency is how many batches are handled at once, each by a
	// poller of its own (default DefaultConcurrency): the template's
	// ScalingConfig MaximumConcurrency when it has one.
	Concurrency int
}

// DefaultConcurrency is the number of pollers of a queue whose trigger sets
// no MaximumConcurrency: the five concurrent batches with which Lambda
// starts to read a standard queue (it adds more as messages wait, which
// the local stack does not).
const DefaultConcurrency = 5

// Poller does what Lambda's SQS event source mapping does for consumers:
// poll the queue, invoke the handler with a batch, and delete the messages
// it handled, with several batches in flight at once (Consumer.Concurrency),
// as Lambda's pollers do. Failed messages stay invisible until the queue's visibility
// timeout ends, then come back with a higher ApproximateReceiveCount (and
// move to the DLQ after maxReceiveCount, which the emulator does).
// DelaySeconds is applied by the emulator.
//
// The emulator (local-aws-sqs 2.0.2) answers a long poll only when the wait
// ends or the batch is full, and within one long poll it can return a
// message twice if the message becomes visible again during the wait. So
// the poller short-polls: it receives with WaitTimeSeconds 0 and sleeps
// PollInterval while the queue is empty.
type Poller struct {
	// Client is the SQS client of the emulator.
	Client *sqs.Client
	// PollInterval is the pause between receives that found the queue
	// empty (default 200 ms).
	PollInterval time.Duration
	// Logger receives errors (default slog.Default()).
	Logger *slog.Logger
}

// Run polls c's queue with c.Concurrency pollers until ctx is done, then
// returns once the invocations in progress have finished and their
// messages have been deleted.
func (p *Poller) Run(ctx context.Context, c Consumer) {
	n := c.Concurrency
	if n <= 0 {
		n = DefaultConcurrency
	}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { p.poll(ctx, c) })
	}
	wg.Wait()
}

// poll is one poller of Run: it receives a batch, handles it, and again.
func (p *Poller) poll(ctx context.Context, c Consumer) {
	log := p.logger().With("function", c.Function, "queue", queueName(c.QueueURL))
	batch := c.BatchSize
	if batch <= 0 || batch > 10 {
		batch = 10
	}
	idle := p.PollInterval
	if idle <= 0 {
		idle = 200 * time.Millisecond
	}
	backoff := time.Duration(0)
	for ctx.Err() == nil {
		out, err := p.Client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl:            aws.String(c.QueueURL),
			MaxNumberOfMessages: int32(batch),
			// WaitTimeSeconds stays 0, a short poll. (The SDK omits a zero,
			// so a queue with ReceiveMessageWaitTimeSeconds would long-poll.)
			// The emulator returns ApproximateReceiveCount only for the
			// legacy attribute list.
			//lint:ignore SA1019 the emulator reads only the legacy field
			AttributeNames:              []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll},
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
			MessageAttributeNames:       []string{"All"},
		})
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			backoff = min(max(2*backoff, 200*time.Millisecond), 5*time.Second)
			log.Warn("receive failed", "err", err, "retry_in", backoff)
			sleep(ctx, backoff)
			continue
		}
		backoff = 0
		if len(out.Messages) == 0 {
			sleep(ctx, idle)
			continue
		}
		p.handle(context.WithoutCancel(ctx), log, c, uniqueMessages(out.Messages))
	}
}

// handle invokes the handler with one batch and deletes what succeeded.
func (p *Poller) handle(ctx context.Context, log *slog.Logger, c Consumer, msgs []sqstypes.Message) {
	event := NewSQSEvent(c.QueueURL, msgs)
	ictx, cancel := context.WithTimeout(LambdaContext(ctx, c.Function), orDefault(c.Timeout))
	resp, err := callSQS(ictx, c.Handler, event)
	cancel()
	if err != nil {
		log.Error("invocation failed: the batch stays on the queue", "messages", len(msgs), "err", err)
		return
	}
	failed := map[string]bool{}
	if c.ReportBatchItemFailures {
		ids := map[string]bool{}
		for _, m := range msgs {
			ids[aws.ToString(m.MessageId)] = true
		}
		for _, f := range resp.BatchItemFailures {
			if !ids[f.ItemIdentifier] {
				// Lambda treats an unknown or empty identifier as a failure
				// of the whole batch.
				log.Error("batch item failure names no message of the batch: the batch stays on the queue", "item", f.ItemIdentifier)
				return
			}
			failed[f.ItemIdentifier] = true
		}
	}
	var entries []sqstypes.DeleteMessageBatchRequestEntry
	for i, m := range msgs {
		if failed[aws.ToString(m.MessageId)] {
			continue
		}
		entries = append(entries, sqstypes.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle})
	}
	if len(failed) > 0 {
		log.Info("batch item failures stay on the queue", "failed", len(failed), "deleted", len(entries))
	}
	if len(entries) == 0 {
		return
	}
	out, err := p.Client.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(c.QueueURL), Entries: entries})
	if err != nil {
		log.Error("delete messages failed: they will be delivered again", "err", err)
		return
	}
	for _, f := range out.Failed {
		log.Error("delete message failed: it will be delivered again", "code", aws.ToString(f.Code), "message", aws.ToString(f.Message))
	}
}

// uniqueMessages drops repeats of a message within one receive (an
// emulator quirk), keeping the last, which carries the latest receive count.
func uniqueMessages(msgs []sqstypes.Message) []sqstypes.Message {
	last := make(map[string]int, len(msgs))
	for i, m := range msgs {
		last[aws.ToString(m.MessageId)] = i
	}
	if len(last) == len(msgs) {
		return msgs
	}
	out := make([]sqstypes.Message, 0, len(last))
	for i, m := range msgs {
		if last[aws.ToString(m.MessageId)] == i {
			out = append(out, m)
		}
	}
	return out
}

func callSQS(ctx context.Context, h function.SQSHandler, e events.SQSEvent) (resp events.SQSEventResponse, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return h(ctx, e)
}

// NewSQSEvent builds the event Lambda sends for msgs received from the queue
// at queueURL.
func NewSQSEvent(queueURL string, msgs []sqstypes.Message) events.SQSEvent {
	arn := stack.QueueARN(queueName(queueURL))
	e := events.SQSEvent{Records: make([]events.SQSMessage, 0, len(msgs))}
	for _, m := range msgs {
		rec := events.SQSMessage{
			MessageId:              aws.ToString(m.MessageId),
			ReceiptHandle:          aws.ToString(m.ReceiptHandle),
			Body:                   aws.ToString(m.Body),
			Md5OfBody:              aws.ToString(m.MD5OfBody),
			Md5OfMessageAttributes: aws.ToString(m.MD5OfMessageAttributes),
			Attributes:             m.Attributes,
			EventSource:            "aws:sqs",
			EventSourceARN:         arn,
			AWSRegion:              stack.Region,
		}
		if len(m.MessageAttributes) > 0 {
			rec.MessageAttributes = make(map[string]events.SQSMessageAttribute, len(m.MessageAttributes))
			for k, v := range m.MessageAttributes {
				rec.MessageAttributes[k] = events.SQSMessageAttribute{
					StringValue:      v.StringValue,
					BinaryValue:      v.BinaryValue,
					StringListValues: v.StringListValues,
					BinaryListValues: v.BinaryListValues,
					DataType:         aws.ToString(v.DataType),
				}
			}
		}
		if rec.Attributes == nil {
			rec.Attributes = map[string]string{}
		}
		e.Records = append(e.Records, rec)
	}
	return e
}

// queueName returns the last segment of a queue URL.
func queueName(url string) string {
	return url[strings.LastIndex(url, "/")+1:]
}

func (p *Poller) logger() *slog.Logger {
	if p.Logger != nil {
		return p.Logger
	}
	return slog.Default()
}

// orDefault returns the timeout of a queue or scheduled invocation: t, or
// one minute when t is not set.
func orDefault(t time.Duration) time.Duration {
	if t <= 0 {
		return time.Minute
	}
	return t
}

// sleep waits for d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
