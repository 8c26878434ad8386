package app

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	awsevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"payments/pkg/cards"
	"payments/pkg/function"
	"payments/pkg/function/cardworker"
	"payments/pkg/queue/queuetest"
)

// networkEnv is the cards environment with the card-network sandbox as the
// cards function wires it: each notification signed, accepted by the
// handler of POST /issuer/webhooks onto an issuer-events queue of the SQS
// emulator, which consumers apply with the card-worker as Lambda would.
type networkEnv struct {
	*cardsTestEnv
	sandbox *cards.Sandbox
	worker  function.SQSHandler
	sent    atomic.Int64
}

// networkConsumers is how many card-workers consume the queue at once.
const networkConsumers = 4

func newNetworkEnv(t *testing.T) *networkEnv {
	t.Helper()
	e := &networkEnv{cardsTestEnv: newCardsTestEnv(t)}
	client := queuetest.Client(t)
	e.cfg.SQSEndpoint = os.Getenv("AWS_ENDPOINT_URL_SQS")
	e.cfg.IssuerEventsQueueURL = queuetest.NewQueue(t, client, nil)
	e.cfg.IssuerWebhookSecret = issuerTestSecret
	e.cards = e.cardsFunction(t, e.cfg)
	worker, err := cardworker.New(context.Background(), recording(e.cfg, "card-worker"))
	if err != nil {
		t.Fatal(err)
	}
	e.worker = worker
	svc, err := testCards(e.cfg, e.db)
	if err != nil {
		t.Fatal(err)
	}
	if e.sandbox, err = testCardNetwork(e.cfg, svc); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range networkConsumers {
		wg.Go(func() { e.consume(ctx, client) })
	}
	t.Cleanup(func() { stop(); wg.Wait() })
	return e
}

// consume applies the issuer-events queue's messages with the card-worker
// until ctx ends: a batch at a time, deleting what it applied and making
// what failed visible again at once.
func (e *networkEnv) consume(ctx context.Context, client *sqs.Client) {
	for ctx.Err() == nil {
		out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(e.cfg.IssuerEventsQueueURL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
		})
		if err != nil || len(out.Messages) == 0 {
			continue
		}
		ev := awsevents.SQSEvent{}
		receipts := map[string]*string{}
		for _, m := range out.Messages {
			id := aws.ToString(m.MessageId)
			receipts[id] = m.ReceiptHandle
			ev.Records = append(ev.Records, awsevents.SQSMessage{MessageId: id, Body: aws.ToString(m.Body), Attributes: m.Attributes})
		}
		resp, err := e.worker(ctx, ev)
		if err != nil {
			continue
		}
		for _, f := range resp.BatchItemFailures {
			client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
				QueueUrl: aws.String(e.cfg.IssuerEventsQueueURL), ReceiptHandle: receipts[f.ItemIdentifier], VisibilityTimeout: 0})
			delete(receipts, f.ItemIdentifier)
		}
		for _, r := range receipts {
			client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(e.cfg.IssuerEventsQueueURL), ReceiptHandle: r})
		}
	}
}

// deliver hands a notification to the card-worker directly, again while
// it fails, as the queue would: for the tests that repeat a delivery.
func (e *networkEnv) deliver(ctx context.Context, body []byte) error {
	id := fmt.Sprint(e.sent.Add(1))
	for attempt := 1; attempt <= 20; attempt++ {
		resp, err := e.worker(ctx, awsevents.SQSEvent{Records: []awsevents.SQSMessage{{MessageId: id, Body: string(body)}}})
		if err != nil {
			return err
		}
		if len(resp.BatchItemFailures) == 0 {
			return nil
		}
	}
	return fmt.Errorf("notification %s not applied after 20 deliveries", id)
}

// fundedCard issues a card holding usd to a new company whose USD wallet
// keeps wallet after the issuance (fee 1.00 USD).
func (e *networkEnv) fundedCard(usd, wallet int64) (companyID, token, walletID, cardID string) {
	e.t.Helper()
	companyID, token, walletID, customerID := e.cardCompany(fmt.Sprint(usd+wallet+1), fmt.Sprintf("CM-%d", e.sent.Add(1)))
	r := e.call(e.cards, token, "POST", "/cards", fmt.Sprintf(`{"customer_id":%q,"amount":%d}`, customerID, usd))
	if r.status != 201 {
		e.t.Fatalf("issue: %s", r.raw)
	}
	return companyID, token, walletID, r.str("data", "id")
}

// eventCount returns how many events of kind the company has.
func (e *networkEnv) eventCount(token, kind string) int {
	e.t.Helper()
	r := e.call(e.webhooks, token, "GET", "/webhooks/events?limit=1&event="+kind, "")
	if r.status != 200 {
		e.t.Fatalf("events: %s", r.raw)
	}
	n, err := strconv.Atoi(r.str("pagination", "total"))
	if err != nil {
		e.t.Fatalf("events total: %s", r.raw)
	}
	return n
}
