package e2e_test

import (
	"context"
	"strings"
	"testing"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"payments/pkg/app/apptest"
	"payments/pkg/events"
	"payments/pkg/function"
	"payments/pkg/function/sweeper"
	"payments/pkg/function/webhookworker"
	"payments/pkg/outbox"
	"payments/pkg/queue"
	"payments/pkg/queue/queuetest"
	"payments/pkg/store"
	"payments/pkg/waittest"
	"payments/pkg/webhooks"
)

// Faults that stop the webhook pipeline at one of its steps.
var (
	// failMarkDispatched fails the worker's mark that it took an event.
	failMarkDispatched = updating("dispatched_at")
	// failClaim fails the claim of an attempt, before it is sent.
	failClaim = updating("claimed_until")
	// failRecord fails the record of an attempt, after it is sent.
	failRecord = updating("list_append")
)

// updating returns a fault on the UpdateItem calls whose update names
// what.
func updating(what string) func(any) bool {
	return func(in any) bool {
		u, ok := in.(*dynamodb.UpdateItemInput)
		return ok && strings.Contains(aws.ToString(u.UpdateExpression), what)
	}
}

// failNotifyDelivery fails the creation of an event's notify_url delivery.
func failNotifyDelivery(in any) bool {
	p, ok := in.(*dynamodb.PutItemInput)
	if !ok {
		return false
	}
	sk, _ := p.Item["SK"].(*types.AttributeValueMemberS)
	return sk != nil && strings.HasSuffix(sk.Value, "#notify")
}

// failSends fails every message the worker sends.
func failSends(in any) bool { _, ok := in.(*sqs.SendMessageInput); return ok }

// TestWebhookDeliveredAfterACrashAtEachStep stops the pipeline of an event
// between each pair of its steps (written in the outbox with its change →
// queued on the webhooks queue → its deliveries created → each attempted →
// the retry queued), as a kill -9 of the whole local stack does: the
// process dies there (a fault fails its next step) and the queue loses
// what it held (purged, as the emulator's queues are on a restart). The
// sweeper, its clock past its one-minute bound, finds what was left (the
// events step an event not taken by the worker, the webhook_deliveries
// step a pending delivery that stopped moving), and every delivery then
// arrives at its receiver, once per attempt number: the event's two
// destinations (its endpoint, its notify_url) get it, and only what was
// sent and never recorded is sent again (at least once).
func TestWebhookDeliveredAfterACrashAtEachStep(t *testing.T) {
	publish := func(t *testing.T, e *hookEnv, ev events.Event) {
		if err := e.publisher.Publish(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
	// dies publishes ev, then has a worker whose calls that match fail
	// take its message, and dies: the queue loses the message.
	dies := func(fail func(any) bool) func(*testing.T, *hookEnv, webhooks.Sender, events.Event) {
		return func(t *testing.T, e *hookEnv, sender webhooks.Sender, ev events.Event) {
			publish(t, e, ev)
			w, err := webhookworker.NewWith(apptest.Recording(apptest.Failing(e.Cfg, fail), "webhook-worker"), sender, e.clock.Now)
			if err != nil {
				t.Fatal(err)
			}
			e.crashWith(t, w)
		}
	}
	tests := []struct {
		name string
		hook []int // the endpoint's answers, in turn
		// crash runs the pipeline of ev up to where it stops.
		crash func(t *testing.T, e *hookEnv, sender webhooks.Sender, ev events.Event)
		// events and deliveries: what the sweep's two steps take up.
		events, deliveries int
		// hooks and notifies: the requests each destination gets in all;
		// hookAttempts: the attempts recorded of the endpoint's delivery.
		hooks, notifies, hookAttempts int
	}{
		{"written, never queued", []int{200}, func(t *testing.T, e *hookEnv, _ webhooks.Sender, ev events.Event) {
			crashed := outbox.NewPublisher(store.NewOutbox(e.DB), crashedQueue{})
			if err := crashed.Publish(context.Background(), ev); err == nil {
				t.Fatal("the injected fault did not fail the publish")
			}
		}, 1, 0, 1, 1, 1},
		{"queued, the message lost", []int{200}, func(t *testing.T, e *hookEnv, _ webhooks.Sender, ev events.Event) {
			lost := outbox.NewPublisher(store.NewOutbox(e.DB), queue.NewPublisher(e.sqs, e.lostQueue(t)))
			if err := lost.Publish(context.Background(), ev); err != nil {
				t.Fatal(err)
			}
		}, 1, 0, 1, 1, 1},
		{"one delivery created, not the other", []int{200}, dies(failNotifyDelivery), 1, 1, 1, 1, 1},
		{"deliveries created, the event not marked taken", []int{200}, dies(failMarkDispatched), 1, 2, 1, 1, 1},
		{"deliveries created, never attempted", []int{200}, dies(failClaim), 0, 2, 1, 1, 1},
		{"attempted, never recorded", []int{200}, dies(failRecord), 0, 2, 2, 2, 1},
		{"attempt 1 failed, attempt 2 never queued", []int{500, 200}, dies(failSends), 0, 1, 2, 1, 2},
		{"attempt 2 queued, the message lost", []int{500, 200}, func(t *testing.T, e *hookEnv, sender webhooks.Sender, ev events.Event) {
			publish(t, e, ev)
			cfg := e.Cfg
			cfg.WebhooksQueueURL = e.lostQueue(t)
			w, err := webhookworker.NewWith(apptest.Recording(cfg, "webhook-worker"), sender, e.clock.Now)
			if err != nil {
				t.Fatal(err)
			}
			e.crashWith(t, w)
		}, 0, 1, 2, 1, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // each on a table and queues of its own
			rcv := newReceiver(t, map[string][]int{"/hook": tt.hook, "/notify": {200}})
			e := newHookEnv(t, rcv.client())
			e.setWebhook(t, rcv.URL+"/hook", true)
			ev := e.commit(t, rcv.URL+"/notify")
			tt.crash(t, e, rcv.client(), ev)
			if e.drain(t) != 0 {
				t.Fatal("a message survived the crash")
			}
			if le := e.entry(t, ev.ID); le.Status != "PENDING" {
				t.Fatalf("after the crash the event is %s", le.Status)
			}

			// The stack comes back; its first sweep runs past the bound.
			e.clock.Advance(2 * time.Minute)
			sweep := apptest.MustSweeper(t, apptest.Recording(e.Cfg, "sweeper"), e.clock.Now)
			report := runSweep(t, sweep)
			if report["events"].Done != tt.events || report["webhook_deliveries"].Done != tt.deliveries {
				t.Fatalf("the sweep took up %+v events and %+v deliveries, want %d and %d",
					report["events"], report["webhook_deliveries"], tt.events, tt.deliveries)
			}
			le := e.waitFor(t, ev.ID, 30*time.Second, "DELIVERED", func(le logEntry) bool {
				if le.Status != "DELIVERED" {
					e.drain(t)
				}
				return le.Status == "DELIVERED"
			})
			for e.drain(t) > 0 {
				// the copies the sweep queued of what was done meanwhile
			}
			if got := len(rcv.requests("/hook")); got != tt.hooks {
				t.Errorf("the endpoint got %d requests, want %d", got, tt.hooks)
			}
			if got := len(rcv.requests("/notify")); got != tt.notifies {
				t.Errorf("the notify_url got %d requests, want %d", got, tt.notifies)
			}
			for _, r := range rcv.got {
				if string(r.body) != string(ev.Body) || r.header.Get(webhooks.EventIDHeader) != ev.ID {
					t.Errorf("%s got another event: %s", r.path, r.body)
				}
			}
			if len(le.Deliveries) != 2 {
				t.Fatalf("%d deliveries, want 2", len(le.Deliveries))
			}
			for _, d := range le.Deliveries {
				want := 1
				if d.Destination == "webhook" {
					want = tt.hookAttempts
				}
				if d.Status != "DELIVERED" || len(d.Attempts) != want {
					t.Errorf("%s delivery %s after %d attempts, want DELIVERED after %d", d.Destination, d.Status, len(d.Attempts), want)
				}
			}

			// Nothing is left for a later sweep.
			e.clock.Advance(2 * time.Minute)
			if report := runSweep(t, sweep); report["events"].Done != 0 || report["webhook_deliveries"].Done != 0 {
				t.Fatalf("a later sweep took up %+v", report)
			}
		})
	}
}

// runSweep runs the sweeper once and returns its report.
func runSweep(t *testing.T, sweep function.ScheduleHandler) sweeper.Report {
	t.Helper()
	resp, err := sweep(context.Background(), lambdaevents.EventBridgeEvent{})
	if err != nil {
		t.Fatalf("sweep: %v (%v)", err, resp)
	}
	return resp.(sweeper.Report)
}

// lostQueue returns a queue no worker reads: what is sent there is lost.
func (e *hookEnv) lostQueue(t *testing.T) string {
	t.Helper()
	return queuetest.NewQueue(t, e.sqs, nil)
}

// crashWith receives what the queue holds, hands it to worker w and
// deletes it whatever w did with it: w died after what it did, and the
// queue lost its messages (the emulator's are on a restart).
func (e *hookEnv) crashWith(t *testing.T, w function.SQSHandler) {
	t.Helper()
	var msgs []sqsMessage
	waittest.Until(t, 5*time.Second, "the event's message", func() bool {
		out, err := e.sqs.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(e.queueURL), MaxNumberOfMessages: 10, WaitTimeSeconds: 0,
		})
		if err != nil {
			t.Fatal(err)
		}
		msgs = out.Messages
		return len(msgs) > 0
	})
	e.invokeWith(t, context.Background(), w, msgs...)
	for _, m := range msgs {
		if _, err := e.sqs.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: aws.String(e.queueURL), ReceiptHandle: m.ReceiptHandle}); err != nil {
			t.Fatal(err)
		}
	}
}
