package local_test

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"payments/infra/local/devserver"
	"payments/infra/local/localtest"
	"payments/pkg/store"
	"payments/pkg/store/moneystore"
	"payments/pkg/store/storetest"
	"payments/pkg/waittest"
	"payments/pkg/wallets"
)

// redriveStack is a served local stack with a company whose XAF wallet is
// funded with redriveFunding on its payout balance, and the payouts queue and its
// dead-letter queue in the SQS emulator.
type redriveStack struct {
	t                  *testing.T
	api                *httpClient
	auth               map[string]string
	company, wallet    string
	sqs                *sqs.Client
	payouts, dlq       string // the queues' URLs
	payoutsARN, dlqARN string
	ctx                context.Context
}

// redriveFunding is what the wallet's payout balance is funded with.
const redriveFunding = 100000

// newRedriveStack makes the company and its wallet through the stack served
// at base, over the queues of res.
func newRedriveStack(t *testing.T, base string, res devserver.Resources) *redriveStack {
	s := &redriveStack{t: t, api: &httpClient{t: t, base: base + "/api/v1"}, sqs: localtest.SQSClient(t),
		payouts: res.QueueURLs["payouts"], dlq: res.QueueURLs["payouts-dlq"], ctx: context.Background()}
	if s.payouts == "" || s.dlq == "" {
		t.Fatalf("no payouts queue or payouts DLQ among %v", res.QueueURLs)
	}
	// The ARNs as the runbook reads them (PayoutsDLQArn): the queues' own.
	s.payoutsARN, s.dlqARN = s.attr(s.payouts, sqstypes.QueueAttributeNameQueueArn), s.attr(s.dlq, sqstypes.QueueAttributeNameQueueArn)

	s.company, s.auth, s.wallet = payingCompany(t, s.api, "Redrive Ltd", "", redriveFunding)
	return s
}

// attr returns the attribute name of the queue at url.
func (s *redriveStack) attr(url string, name sqstypes.QueueAttributeName) string {
	s.t.Helper()
	out, err := s.sqs.GetQueueAttributes(s.ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url), AttributeNames: []sqstypes.QueueAttributeName{name}})
	if err != nil {
		s.t.Fatal(err)
	}
	return out.Attributes[string(name)]
}

// depth returns the queue's ApproximateNumberOfMessages and
// ApproximateNumberOfMessagesNotVisible (received, neither deleted nor
// visible again). The SQS emulator counts the latter in the former too.
func (s *redriveStack) depth(url string) (messages, inFlight string) {
	return s.attr(url, sqstypes.QueueAttributeNameApproximateNumberOfMessages),
		s.attr(url, sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible)
}

// empty reports whether the queue at url holds no message at all.
func (s *redriveStack) empty(url string) bool {
	v, f := s.depth(url)
	return v == "0" && f == "0"
}

// status returns the status of payment tx.
func (s *redriveStack) status(tx string) string {
	var st struct {
		Data struct {
			Status string `json:"status"`
		} `json:"data"`
	}
	s.api.do("GET", "/payment/transactions/"+tx+"/status", s.auth, nil, http.StatusOK, &st)
	return st.Data.Status
}

// balances returns the wallet's payout balance and the amount reserved on it.
func (s *redriveStack) balances() (balance, reserved string) {
	var list struct {
		Data []struct {
			ID             string     `json:"id"`
			PayoutBalance  numberText `json:"payout_balance"`
			PayoutReserved numberText `json:"payout_reserved"`
		} `json:"data"`
	}
	s.api.do("GET", "/wallets", s.auth, nil, http.StatusOK, &list)
	for _, w := range list.Data {
		if w.ID == s.wallet {
			return string(w.PayoutBalance), string(w.PayoutReserved)
		}
	}
	s.t.Fatalf("wallet %s not in the list", s.wallet)
	return "", ""
}

// statusEvents returns the statuses that the company's
// payment.payout.status_updated events report for payment tx, one per
// event.
func (s *redriveStack) statusEvents(tx string) []string {
	var list struct {
		Data []struct {
			Payload struct {
				TransactionID string `json:"transaction_id"`
				Status        string `json:"status"`
			} `json:"payload"`
		} `json:"data"`
	}
	s.api.do("GET", "/webhooks/events?limit=100&event=payment.payout.status_updated", s.auth, nil, http.StatusOK, &list)
	var statuses []string
	for _, e := range list.Data {
		if e.Payload.TransactionID == tx {
			statuses = append(statuses, e.Payload.Status)
		}
	}
	slices.Sort(statuses)
	return statuses
}

// redrive starts a message move task out of the payouts DLQ, at most 10
// messages a second, to destination (the messages' own source queue when
// empty, as the runbook's start-message-move-task does), and waits until
// the task has ended; it fails the test unless the task completed having
// moved want messages.
func (s *redriveStack) redrive(destination string, want int64) {
	s.t.Helper()
	in := &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(s.dlqARN), MaxNumberOfMessagesPerSecond: aws.Int32(10)}
	if destination != "" {
		in.DestinationArn = aws.String(destination)
	}
	if _, err := s.sqs.StartMessageMoveTask(s.ctx, in); err != nil {
		s.t.Fatalf("start-message-move-task: %v", err)
	}
	var task sqstypes.ListMessageMoveTasksResultEntry
	waittest.Until(s.t, 30*time.Second, "the message move task ends", func() bool {
		out, err := s.sqs.ListMessageMoveTasks(s.ctx, &sqs.ListMessageMoveTasksInput{SourceArn: aws.String(s.dlqARN), MaxResults: aws.Int32(1)})
		if err != nil {
			s.t.Fatalf("list-message-move-tasks: %v", err)
		}
		if len(out.Results) == 0 {
			return false
		}
		task = out.Results[0]
		return aws.ToString(task.Status) != "RUNNING"
	})
	if aws.ToString(task.Status) != "COMPLETED" || task.ApproximateNumberOfMessagesMoved != want {
		s.t.Fatalf("message move task %s (%s), %d moved, want COMPLETED with %d moved",
			aws.ToString(task.Status), aws.ToString(task.FailureReason), task.ApproximateNumberOfMessagesMoved, want)
	}
}

// TestPayoutsDLQRedrive follows the runbook (docs/operations.md,
// "Re-driving a dead-letter queue" and "PayoutsDLQDepth") on the local
// stack, with the SQS calls its aws sqs commands make. A payout is accepted
// while the stack runs without its payout-worker, and its message fails
// until SQS moves it to the payouts DLQ. Served again with the worker, the
// payout stays PENDING (nothing reads the DLQ); the operator looks at the
// DLQ's message, leaving it there, and re-drives it to the queue it came
// from: the payout is paid, the DLQ empty, the wallet debited the amount
// and the fee. A copy of the same message, now stale, re-driven again does
// nothing: the payout, the balances and its one SUCCESS event stay as they
// were, and the wallet's ledger holds. The sweeper, which would resume the
// payment a minute past its due anyway, is left out of both servers, so
// that only the re-drive moves it.
func TestPayoutsDLQRedrive(t *testing.T) {
	tpl := localtest.Template(t)
	res := localtest.Resources(t, tpl)
	quiet := slog.New(slog.DiscardHandler)
	withoutWorker := func(srv *devserver.Server) {
		srv.Consumers = slices.DeleteFunc(srv.Consumers, func(c devserver.Consumer) bool { return c.Function == "payout-worker" })
		srv.Schedules = nil
	}
	base, stop := localtest.StartServer(t, tpl, res, quiet, withoutWorker)
	s := newRedriveStack(t, base, res)

	// 1. A payout accepted: its message waits on the payouts queue.
	var accepted struct {
		Data struct {
			TransactionID string     `json:"transaction_id"`
			FeeAmount     numberText `json:"fee_amount"`
		} `json:"data"`
	}
	s.api.do("POST", "/payment/payout", s.auth, map[string]any{
		"operator": "mtn", "country": "CM", "phone_number": "237670000001", "amount": 5000, "currency": "XAF",
	}, http.StatusOK, &accepted)
	tx := accepted.Data.TransactionID
	fee, err := strconv.Atoi(string(accepted.Data.FeeAmount))
	if t.Failed() || tx == "" || err != nil {
		t.Fatalf("payout: transaction %q, fee %q (%v)", tx, accepted.Data.FeeAmount, err)
	}

	// 2. The message fails until SQS moves it to the DLQ (maxReceiveCount
	// 10): each receive hands it back at once, as a worker that fails it
	// would after the visibility timeout. SQS's own move stamps the message
	// with the queue it came from (DeadLetterQueueSourceArn), which the
	// runbook's re-drive without a destination needs.
	var original string
	receives := 0
	waittest.Until(t, 30*time.Second, "SQS moves the payout's message to the payouts DLQ", func() bool {
		out, err := s.sqs.ReceiveMessage(s.ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(s.payouts), MaxNumberOfMessages: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Messages {
			receives++
			original = aws.ToString(m.Body)
			if _, err := s.sqs.ChangeMessageVisibility(s.ctx, &sqs.ChangeMessageVisibilityInput{
				QueueUrl: aws.String(s.payouts), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0,
			}); err != nil {
				t.Fatal(err)
			}
		}
		dead, _ := s.depth(s.dlq)
		return dead == "1" && s.empty(s.payouts)
	})
	if !strings.Contains(original, `"transaction_id":"`+tx+`"`) || !strings.Contains(original, `"due":`) {
		t.Fatalf("the payouts message %s does not name payout %s and its due", original, tx)
	}
	// The emulator counts each ChangeMessageVisibility as a receive too.
	t.Logf("dead-lettered after %d receives", receives)
	stop()

	// 3. Served again with the worker: nothing reads the DLQ.
	base, stop = localtest.StartServer(t, tpl, res, quiet, func(srv *devserver.Server) { srv.Schedules = nil })
	t.Cleanup(stop)
	s.api.base = base + "/api/v1"
	if got := s.status(tx); got != "PENDING" {
		t.Fatalf("payout %s before the re-drive, want PENDING", got)
	}
	if balance, reserved := s.balances(); balance != strconv.Itoa(redriveFunding) || reserved != strconv.Itoa(5000+fee) {
		t.Fatalf("before the re-drive: payout_balance %s, reserved %s; want %d, %d", balance, reserved, redriveFunding, 5000+fee)
	}

	// Look (receive-message), leaving the message on the DLQ. The runbook
	// hides it 30 s; a move task started meanwhile finds nothing visible to
	// move, so this look hides it 1 s, and the re-drive waits until it is
	// visible again.
	look, err := s.sqs.ReceiveMessage(s.ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(s.dlq), MaxNumberOfMessages: 10, VisibilityTimeout: 1,
		//lint:ignore SA1019 the runbook's --attribute-names All, the only one the SQS emulator reads
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll}})
	if err != nil {
		t.Fatal(err)
	}
	if len(look.Messages) != 1 || aws.ToString(look.Messages[0].Body) != original {
		t.Fatalf("the DLQ holds %d messages, want the payout's: %+v", len(look.Messages), look.Messages)
	}
	if src := look.Messages[0].Attributes["DeadLetterQueueSourceArn"]; src != s.payoutsARN {
		t.Errorf("DeadLetterQueueSourceArn %q, want the payouts queue's %q", src, s.payoutsARN)
	}
	waittest.Until(t, 10*time.Second, "the looked-at message visible again on the DLQ", func() bool {
		n, inFlight := s.depth(s.dlq)
		return n == "1" && inFlight == "0"
	})

	// 4. The runbook's re-drive: start-message-move-task --source-arn only.
	s.redrive("", 1)
	paid := strconv.Itoa(redriveFunding - 5000 - fee)
	waittest.Until(t, time.Minute, "the re-driven payout paid, both queues empty", func() bool {
		return s.status(tx) == "SUCCESS" && s.empty(s.dlq) && s.empty(s.payouts)
	})
	if balance, reserved := s.balances(); balance != paid || reserved != "0" {
		t.Fatalf("after the payout: payout_balance %s, reserved %s; want %s, 0", balance, reserved, paid)
	}
	waittest.Until(t, 30*time.Second, "the payout's SUCCESS event published", func() bool {
		return slices.Contains(s.statusEvents(tx), "SUCCESS")
	})

	// 5. A copy of the same message, now stale, re-driven again. Sent to the
	// DLQ by hand, it carries no DeadLetterQueueSourceArn: a task without a
	// destination fails on it (CouldNotDetermineMessageSource), so this one
	// names the payouts queue.
	if _, err := s.sqs.SendMessage(s.ctx, &sqs.SendMessageInput{QueueUrl: aws.String(s.dlq), MessageBody: aws.String(original)}); err != nil {
		t.Fatal(err)
	}
	s.redrive(s.payoutsARN, 1)
	waittest.Until(t, 30*time.Second, "the stale message handled: both queues empty", func() bool {
		return s.empty(s.dlq) && s.empty(s.payouts)
	})
	if got := s.status(tx); got != "SUCCESS" {
		t.Errorf("payout %s after the stale re-drive, want SUCCESS", got)
	}
	if balance, reserved := s.balances(); balance != paid || reserved != "0" {
		t.Errorf("after the stale re-drive: payout_balance %s, reserved %s; want %s, 0", balance, reserved, paid)
	}
	if got := s.statusEvents(tx); !slices.Equal(got, []string{"PENDING", "PROCESSING", "SUCCESS"}) {
		t.Errorf("the payout's status events %v, want one each of PENDING, PROCESSING, SUCCESS", got)
	}
	db := store.New(storetest.Client(t), res.TableName)
	if err := wallets.VerifyLedger(s.ctx, moneystore.NewWallets(db), s.company); err != nil {
		t.Fatal(err)
	}
}
