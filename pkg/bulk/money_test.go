package bulk_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"payments/pkg/app/apptest"
	"payments/pkg/function/payoutworker"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
)

// TestIdempotentBatch: the same request with the same Idempotency-Key
// twice makes one batch, reserved once, and answers the first's batch.
func TestIdempotentBatch(t *testing.T) {
	t.Parallel()
	e := newBatchEnv(t, "10000")
	body := batch("partial", item("237670000001", 1000, "k-1"), item("237670000002", 2000, "k-2"))
	first := e.submit(body, "Idempotency-Key", "payroll-june")
	again := e.submit(body, "Idempotency-Key", "payroll-june")
	if first.Status != 202 || again.Status != 202 || again.Headers["Idempotent-Replayed"] != "true" ||
		again.Str("data", "batch_id") != first.Str("data", "batch_id") {
		t.Fatalf("first %s\nagain %d %v %s", first.Raw, again.Status, again.Headers, again.Raw)
	}
	if got := e.wallet(); got != "10000/3045/6955" {
		t.Fatalf("wallet: %s", got)
	}
	if r := e.Call(e.Payments, e.token, "GET", "/payment/payouts/bulk", ""); r.Str("meta", "total") != "1" {
		t.Fatalf("batches: %s", r.Raw)
	}
	e.Verify(e.companyID)
}

// TestConcurrentBatchesNeverOverspend: batches sent at once on one wallet
// together reserve no more than it holds, and each item reserved is one
// accepted.
func TestConcurrentBatchesNeverOverspend(t *testing.T) {
	t.Parallel()
	e := newBatchEnv(t, "10150") // room for ten items of 1,000 + 15
	const batches = 4
	results := make([]lambdaevents.APIGatewayV2HTTPResponse, batches)
	var wg sync.WaitGroup
	for i := range batches {
		wg.Go(func() {
			var items []string
			for j := range 3 {
				items = append(items, item(fmt.Sprintf("23767000%04d", 10*i+j+1), 1000, ""))
			}
			results[i] = e.Send(e.Payments, e.token, "POST", "/payment/payouts/bulk", batch("partial", items...))
		})
	}
	wg.Wait()
	accepted := 0
	for _, r := range results {
		var body struct {
			Data struct {
				Accepted int `json:"accepted_count"`
				Rejected int `json:"rejected_count"`
			} `json:"data"`
		}
		switch r.StatusCode {
		case 202:
			if err := json.Unmarshal([]byte(r.Body), &body); err != nil || body.Data.Accepted+body.Data.Rejected != 3 {
				t.Errorf("batch: %s", r.Body)
			}
			accepted += body.Data.Accepted
		case 409: // a batch whose wallet kept moving: nothing reserved
		default:
			t.Errorf("answer: %d %s", r.StatusCode, r.Body)
		}
	}
	if accepted > 10 || accepted == 0 {
		t.Fatalf("%d items accepted in all, the wallet covers 10: %v", accepted, results)
	}
	if got, want := e.wallet(), fmt.Sprintf("10150/%d/%d", accepted*1015, 10150-accepted*1015); got != want {
		t.Fatalf("wallet %s, want %s", got, want)
	}
	e.Verify(e.companyID)
}

// TestDuplicateFoundWhenWritten: an external_id a payout takes between the
// batch's acceptance and the writing of its item rejects the item then,
// and gives its reservation back to the wallet.
func TestDuplicateFoundWhenWritten(t *testing.T) {
	t.Parallel()
	e := newBatchEnv(t, "10000")
	r := e.submit(batch("partial", item("237670000001", 1000, "race-1"), item("237670000002", 2000, "race-2")))
	if r.Status != 202 || r.Str("data", "accepted_count") != "2" {
		t.Fatalf("submit: %s", r.Raw)
	}
	if p := e.Call(e.Payments, e.token, "POST", "/payment/payout", item("237670000003", 500, "race-1")); p.Status != 200 {
		t.Fatalf("payout: %s", p.Raw)
	}
	done := e.settle(r.Str("data", "batch_id"))
	if done.Str("data", "accepted_count") != "1" || done.Str("data", "rejected_count") != "1" {
		t.Fatalf("batch: %s", done.Raw)
	}
	items := e.Call(e.Payments, e.token, "GET", "/payment/payouts/bulk/"+r.Str("data", "batch_id")+"/items?status=REJECTED", "")
	if len(items.Items()) != 1 {
		t.Fatalf("rejected items: %s", items.Raw)
	}
	if it := items.Items()[0].(map[string]any); it["row"] != json.Number("1") || it["failure_code"] != "DUPLICATE_EXTERNAL_ID" || it["transaction_id"] != nil {
		t.Fatalf("rejected item: %v", it)
	}
	// The single payout of 500 + 8 and the item of 2,000 + 30 are paid; the
	// first item's reservation went back.
	e.Pump(30*time.Second, func() bool { return e.wallet() == "7462/0/7462" })
	e.Verify(e.companyID)
}

// TestSweeperSendsLostChunks: a chunk job lost before any worker saw it is
// sent again by the sweeper once the batch is a minute old, and the batch
// completes.
func TestSweeperSendsLostChunks(t *testing.T) {
	t.Parallel()
	e := newBatchEnv(t, "10000")
	r := e.submit(batch("partial", item("237670000001", 1000, ""), item("237670000002", 1000, "")))
	if r.Status != 202 {
		t.Fatalf("submit: %s", r.Raw)
	}
	id := r.Str("data", "batch_id")
	ctx := context.Background()
	if _, err := e.Sqs.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: aws.String(e.Bulk)}); err != nil {
		t.Fatal(err)
	}
	if s := e.get(id).Str("data", "status"); s != "ACCEPTED" {
		t.Fatalf("status %s", s)
	}
	sweep := apptest.MustSweeper(t, apptest.Recording(e.Cfg, "sweeper"), func() time.Time { return time.Now().Add(2 * time.Minute) })
	if _, err := sweep(ctx, lambdaevents.EventBridgeEvent{}); err != nil {
		t.Fatal(err)
	}
	if done := e.settle(id); done.Str("data", "counts", "success") != "2" {
		t.Fatalf("batch: %s", done.Raw)
	}
	if got := e.wallet(); got != "7970/0/7970" {
		t.Fatalf("wallet: %s", got)
	}
	e.Verify(e.companyID)
}

// TestChunkWrittenAgain: a chunk job that fails after writing its payouts
// (its last transaction refused) is run again: the payouts written stay as
// they are, none twice, and the batch completes.
func TestChunkWrittenAgain(t *testing.T) {
	t.Parallel()
	e := newBatchEnv(t, "10000")
	r := e.submit(batch("partial", item("237670000001", 1000, "again-1"), item("237670000002", 1000, "again-2")))
	if r.Status != 202 {
		t.Fatalf("submit: %s", r.Raw)
	}
	ctx := context.Background()
	out, err := e.Sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(e.Bulk), MaxNumberOfMessages: 10})
	if err != nil || len(out.Messages) != 1 {
		t.Fatalf("chunk jobs: %v %d", err, len(out.Messages))
	}
	m := out.Messages[0]
	ev := lambdaevents.SQSEvent{Records: []lambdaevents.SQSMessage{{
		MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle), Body: aws.ToString(m.Body), EventSource: "aws:sqs",
	}}}
	var failed atomic.Bool
	finishing := func(in any) bool {
		tx, ok := in.(*dynamodb.TransactWriteItemsInput)
		if !ok || failed.Load() {
			return false
		}
		for _, it := range tx.TransactItems {
			if it.Update != nil && strings.HasPrefix(dynamo.StringAttr(it.Update.Key, "SK"), schema.BulkChunkPrefix) {
				failed.Store(true)
				return true
			}
		}
		return false
	}
	broken, err := payoutworker.New(ctx, apptest.Recording(apptest.Failing(e.Cfg, finishing), "payout-worker"))
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := broken(ctx, ev); err != nil || len(resp.BatchItemFailures) != 1 || !failed.Load() {
		t.Fatalf("first run: %+v %v", resp, err)
	}
	if n := e.PayoutCount(e.token); n != "2" {
		t.Fatalf("%s payouts after the first run", n)
	}
	if resp, err := e.Worker(ctx, ev); err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("second run: %+v %v", resp, err)
	}
	e.Sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(e.Bulk), ReceiptHandle: m.ReceiptHandle})
	if done := e.settle(r.Str("data", "batch_id")); done.Str("data", "counts", "success") != "2" {
		t.Fatalf("batch: %s", done.Raw)
	}
	if n := e.PayoutCount(e.token); n != "2" {
		t.Fatalf("%s payouts", n)
	}
	e.Verify(e.companyID)
}
