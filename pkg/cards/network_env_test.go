package cards_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	awsevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"payments/pkg/app/apptest"
	"payments/pkg/cards"
	"payments/pkg/function"
	"payments/pkg/function/cardworker"
	"payments/pkg/providers/issuer/issuersandbox"
	"payments/pkg/queue/queuetest"
)

// networkEnv is the cards environment with the card-network sandbox as the
// cards function wires it: each notification signed, accepted by the
// handler of POST /issuer/webhooks onto an issuer-events queue of the SQS
// emulator, which consumers apply with the card-worker as Lambda would.
type networkEnv struct {
	*apptest.CardsTestEnv
	sandbox *cards.Sandbox
	// Network is the card-network function, which serves the sandbox
	// routes.
	Network function.HTTPHandler
	worker  function.SQSHandler
	sent    atomic.Int64
}

// networkConsumers is how many card-workers consume the queue at once.
const networkConsumers = 4

func newNetworkEnv(t *testing.T) *networkEnv {
	t.Helper()
	e := &networkEnv{CardsTestEnv: apptest.NewCardsTestEnv(t)}
	client := queuetest.Client(t)
	e.Cfg.SQSEndpoint = os.Getenv("AWS_ENDPOINT_URL_SQS")
	e.Cfg.IssuerEventsQueueURL = queuetest.NewQueue(t, client, nil)
	e.Cfg.IssuerWebhookSecret = apptest.IssuerTestSecret
	e.Cards = e.CardsFunction(t, e.Cfg)
	e.Network = e.CardNetworkFunction(t, e.Cfg)
	worker, err := cardworker.New(context.Background(), apptest.Recording(e.Cfg, "card-worker"))
	if err != nil {
		t.Fatal(err)
	}
	e.worker = worker
	svc, err := testCards(e.Cfg, e.DB)
	if err != nil {
		t.Fatal(err)
	}
	if e.sandbox, err = testCardNetwork(e.Cfg, e.DB, svc); err != nil {
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
			QueueUrl: aws.String(e.Cfg.IssuerEventsQueueURL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
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
				QueueUrl: aws.String(e.Cfg.IssuerEventsQueueURL), ReceiptHandle: receipts[f.ItemIdentifier], VisibilityTimeout: 0})
			delete(receipts, f.ItemIdentifier)
		}
		for _, r := range receipts {
			client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(e.Cfg.IssuerEventsQueueURL), ReceiptHandle: r})
		}
	}
}

// capture returns a sandbox network that asks for decisions as the cards
// function's does, in process, and keeps what it delivers instead of
// delivering it: bodies returns it, in order, and last the last one.
func (e *networkEnv) capture() (n *issuersandbox.Network, bodies func() [][]byte, last func() []byte) {
	var mu sync.Mutex
	var kept [][]byte
	sb := e.sandbox.Network.(*issuersandbox.Network)
	n = issuersandbox.NewNetwork(sb.Ask, func(_ context.Context, body []byte) error {
		mu.Lock()
		defer mu.Unlock()
		kept = append(kept, body)
		return nil
	})
	bodies = func() [][]byte {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(kept)
	}
	last = func() []byte {
		b := bodies()
		return b[len(b)-1]
	}
	return n, bodies, last
}

// Deliver hands a notification to the card-worker directly, again while
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
	e.T.Helper()
	companyID, token, walletID, customerID := e.CardCompany(fmt.Sprint(usd+wallet+1), fmt.Sprintf("CM-%d", e.sent.Add(1)))
	r := e.Call(e.Cards, token, "POST", "/cards", fmt.Sprintf(`{"customer_id":%q,"amount":%d}`, customerID, usd))
	if r.Status != 201 {
		e.T.Fatalf("issue: %s", r.Raw)
	}
	return companyID, token, walletID, r.Str("data", "id")
}

// eventCount returns how many events of kind the company has.
func (e *networkEnv) eventCount(token, kind string) int {
	e.T.Helper()
	r := e.Call(e.Webhooks, token, "GET", "/webhooks/events?limit=1&event="+kind, "")
	if r.Status != 200 {
		e.T.Fatalf("events: %s", r.Raw)
	}
	n, err := strconv.Atoi(r.Str("pagination", "total"))
	if err != nil {
		e.T.Fatalf("events total: %s", r.Raw)
	}
	return n
}
