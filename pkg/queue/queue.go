// Package queue is the SQS side of asynchronous work: a publisher that sends
// messages with a per-message delay, and Batch, which turns a one-message
// handler into a Lambda SQS handler that reports partial batch failures.
package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"payments/pkg/correlation"
)

// MaxDelay is the longest per-message delay SQS accepts.
const MaxDelay = 900 * time.Second

// ErrPublish reports a message SQS did not accept.
var ErrPublish = errors.New("queue: publish")

// ErrNoQueue reports a send through a Publisher given no queue URL.
// function.ConfigFromEnv refuses to start a function without the queues it
// uses; in a configuration built by hand without one, every send fails with
// it, and callers log it: accepted payments are then submitted by the
// sweeper, events published by it.
var ErrNoQueue = errors.New("queue: no queue URL is configured")

// NewClient returns an SQS client for cfg, pointed at endpoint (the local
// emulator) when it is set.
func NewClient(cfg aws.Config, endpoint string) *sqs.Client {
	return sqs.NewFromConfig(cfg, func(o *sqs.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
}

// Publisher sends messages to one queue.
type Publisher struct {
	client *sqs.Client
	url    string
}

// NewPublisher returns a Publisher for the queue at url.
func NewPublisher(client *sqs.Client, url string) *Publisher {
	return &Publisher{client: client, url: url}
}

// CorrelationAttribute is the message attribute that carries the
// correlation id of the work a message continues.
const CorrelationAttribute = "correlation_id"

// Send queues body, to become visible after delay (rounded up to whole
// seconds and capped at MaxDelay), with the correlation id and the trace
// header of ctx (pkg/correlation): the handler of the message logs with
// the same id, and X-Ray links its invocation to the sender's trace.
func (p *Publisher) Send(ctx context.Context, body []byte, delay time.Duration) error {
	if p.url == "" {
		return ErrNoQueue
	}
	attrs, system := attributes(ctx)
	_, err := p.client.SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl:                aws.String(p.url),
		MessageBody:             aws.String(string(body)),
		DelaySeconds:            delaySeconds(delay),
		MessageAttributes:       attrs,
		MessageSystemAttributes: system,
	})
	if err != nil {
		return fmt.Errorf("%w: %v", ErrPublish, err)
	}
	return nil
}

// MaxBatch is the most messages one SendMessageBatch sends.
const MaxBatch = 10

// SendAll queues bodies, each visible at once, MaxBatch a call
// (SendMessageBatch), with ctx's correlation id and trace header as Send
// does. The messages of a call that fails, or that SQS refuses, are not
// sent: the error says how many; the others are.
func (p *Publisher) SendAll(ctx context.Context, bodies [][]byte) error {
	if p.url == "" {
		return ErrNoQueue
	}
	attrs, system := attributes(ctx)
	failed, last := 0, error(nil)
	for start := 0; start < len(bodies); start += MaxBatch {
		in := &sqs.SendMessageBatchInput{QueueUrl: aws.String(p.url)}
		for i, b := range bodies[start:min(start+MaxBatch, len(bodies))] {
			in.Entries = append(in.Entries, types.SendMessageBatchRequestEntry{
				Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(string(b)),
				MessageAttributes: attrs, MessageSystemAttributes: system,
			})
		}
		out, err := p.client.SendMessageBatch(ctx, in)
		switch {
		case err != nil:
			failed, last = failed+len(in.Entries), err
		case len(out.Failed) > 0:
			failed, last = failed+len(out.Failed), errors.New(aws.ToString(out.Failed[0].Message))
		}
	}
	if failed > 0 {
		return fmt.Errorf("%w: %d of %d messages: %v", ErrPublish, failed, len(bodies), last)
	}
	return nil
}

// attributes returns the message attributes of a message sent in ctx:
// its correlation id and trace header, when ctx has them.
func attributes(ctx context.Context) (map[string]types.MessageAttributeValue, map[string]types.MessageSystemAttributeValue) {
	var attrs map[string]types.MessageAttributeValue
	var system map[string]types.MessageSystemAttributeValue
	if id := correlation.ID(ctx); id != "" {
		attrs = map[string]types.MessageAttributeValue{
			CorrelationAttribute: {DataType: aws.String("String"), StringValue: aws.String(id)},
		}
	}
	if h := correlation.Trace(ctx); h != "" {
		system = map[string]types.MessageSystemAttributeValue{
			string(types.MessageSystemAttributeNameForSendsAWSTraceHeader): {DataType: aws.String("String"), StringValue: aws.String(h)},
		}
	}
	return attrs, system
}

func delaySeconds(d time.Duration) int32 {
	d = min(max(d, 0), MaxDelay)
	return int32((d + time.Second - 1) / time.Second)
}

// Message is one SQS message as a handler sees it.
type Message struct {
	ID   string
	Body []byte
	// ReceiveCount is how many times SQS has delivered the message,
	// this delivery included.
	ReceiveCount int
}

// Handler processes one message. A nil error deletes the message; an error
// leaves it on the queue, to be delivered again after the visibility
// time-out. Handlers must be idempotent: SQS delivers at least once.
type Handler func(ctx context.Context, m Message) error

// Batch returns the Lambda handler for a queue trigger with
// ReportBatchItemFailures: each message is handled on its own, and only the
// ones that failed (or panicked) are reported for redelivery.
func Batch(h Handler) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		var resp events.SQSEventResponse
		for _, rec := range ev.Records {
			n, _ := strconv.Atoi(rec.Attributes["ApproximateReceiveCount"])
			m := Message{ID: rec.MessageId, Body: []byte(rec.Body), ReceiveCount: n}
			ctx := messageContext(ctx, rec)
			if err := handleOne(ctx, h, m); err != nil {
				slog.WarnContext(ctx, "message failed", "message_id", m.ID, "receive_count", n, "error", err)
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: rec.MessageId})
			}
		}
		return resp, nil
	}
}

// messageContext returns ctx carrying the correlation id and trace header
// rec was sent with; a message sent without an id (by the sweeper, or
// before ids were sent) is correlated by its own message id.
func messageContext(ctx context.Context, rec events.SQSMessage) context.Context {
	id := rec.MessageId
	if a, ok := rec.MessageAttributes[CorrelationAttribute]; ok && a.StringValue != nil && *a.StringValue != "" {
		id = *a.StringValue
	}
	ctx = correlation.NewContext(ctx, id)
	return correlation.WithTrace(ctx, rec.Attributes["AWSTraceHeader"])
}

func handleOne(ctx context.Context, h Handler, m Message) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("queue: handler panicked: %v", p)
		}
	}()
	return h(ctx, m)
}
