package local_test

import (
	"context"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"payments/infra/local/devserver"
	"payments/infra/local/localtest"
	"payments/pkg/cards"
	functionbase "payments/pkg/function/base"
	"payments/pkg/function/sweeper"
	"payments/pkg/providers/issuer"
	"payments/pkg/providers/issuer/issuersandbox"
	"payments/pkg/store"
	"payments/pkg/store/moneystore"
	"payments/pkg/store/storetest"
	"payments/pkg/waittest"
	"payments/pkg/wallets"
)

// cardStack is a served local stack with the fixture's company, its
// verified customer and funded USD wallet.
type cardStack struct {
	*localtest.Fixture
	api  *httpClient
	auth map[string]string
}

// newCardStack returns f with a client of the stack served at base.
func newCardStack(t *testing.T, f *localtest.Fixture, base string) *cardStack {
	return &cardStack{Fixture: f, api: &httpClient{t: t, base: base + "/api/v1"}, auth: map[string]string{"Authorization": "Bearer " + f.Token}}
}

// card issues a card of usd dollars to the fixture's customer.
func (s *cardStack) card(usd int) string {
	var card struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	s.api.do("POST", "/cards", s.auth, map[string]any{"customer_id": s.Customer, "amount": usd}, http.StatusCreated, &card)
	return card.Data.ID
}

// events returns how many events of kind the company has.
func (s *cardStack) events(kind string) int {
	var list struct {
		Pagination struct {
			Total numberText `json:"total"`
		} `json:"pagination"`
	}
	s.api.do("GET", "/webhooks/events?limit=1&event="+kind, s.auth, nil, http.StatusOK, &list)
	n, _ := strconv.Atoi(string(list.Pagination.Total))
	return n
}

// numberText is a JSON number's text.
type numberText string

func (n *numberText) UnmarshalJSON(b []byte) error { *n = numberText(b); return nil }

// TestCardBurstAnswersEveryAuthorization: 200 authorizations of 1 USD at
// once through the sandbox route of the local stack (the dev server, its
// pollers and schedules, as make run serves it), on a card with 50
// available: every answer is 201 with the decided card transaction,
// exactly 50 approved and 150 declined; each fee and event is published
// once; the invariants hold. DynamoDB Local decides about 130 of them a
// second on the machines this runs on, past the network's default 2 s for
// the last ones (docs/performance.md): the stack runs with a deadline that
// waits for them, the stand-in being TestStandIn's (pkg/cards).
func TestCardBurstAnswersEveryAuthorization(t *testing.T) {
	tpl := localtest.Template(t)
	res := localtest.Resources(t, tpl)
	res.Params["IssuerDecisionDeadlineMs"] = "25000"
	f := localtest.NewFixture(t, tpl, res, localtest.HTTPHandlers(t, tpl, res))
	base, stop := localtest.StartServer(t, tpl, res, slog.New(slog.DiscardHandler), nil)
	t.Cleanup(stop)
	s := newCardStack(t, f, base)
	cardID := s.card(50)
	if t.Failed() {
		t.FailNow()
	}

	types := make([]string, 200)
	began := time.Now()
	var wg sync.WaitGroup
	for i := range types {
		wg.Go(func() {
			var tx struct {
				Data struct {
					Type          string `json:"type"`
					DeclineReason string `json:"decline_reason"`
				} `json:"data"`
			}
			s.api.do("POST", "/sandbox/cards/"+cardID+"/authorizations", s.auth, map[string]any{
				"amount": 1, "merchant_name": "Corner Shop", "merchant_city": "Austin", "merchant_country": "US",
			}, http.StatusCreated, &tx)
			types[i] = tx.Data.Type + " " + tx.Data.DeclineReason
		})
	}
	wg.Wait()
	t.Logf("200 authorizations answered in %v", time.Since(began))
	counts := map[string]int{}
	for _, typ := range types {
		counts[typ]++
	}
	if want := map[string]int{"AUTHORIZATION ": 50, "DECLINE insufficient_funds": 150}; !maps.Equal(counts, want) {
		t.Fatalf("answers %v, want %v", counts, want)
	}
	want := map[string]int{ // the fixture approved one authorization before
		"transaction.authorization.created": 51, "transaction.authorization.declined": 150, "fee.payment_failure.charged": 150,
	}
	got := map[string]int{}
	waittest.Until(t, time.Minute, "each event of the burst published once", func() bool {
		for kind := range want {
			got[kind] = s.events(kind)
		}
		return maps.Equal(got, want)
	})
	db := store.New(storetest.Client(t), res.TableName)
	ctx := context.Background()
	if err := cards.VerifyLedger(ctx, moneystore.NewCards(db), moneystore.NewWallets(db), f.Company); err != nil {
		t.Fatal(err)
	}
	if err := wallets.VerifyLedger(ctx, moneystore.NewWallets(db), f.Company); err != nil {
		t.Fatal(err)
	}
}

// TestCrashLosesNoCardNotification: the local stack is killed between a
// settlement's notification and its application. The stack is served
// without its card-worker, so that the network's notification waits on
// the issuer-events queue (the settle route answers 202); then it stops,
// and the queue loses what it held, as the SQS emulator, which keeps its
// messages in memory, does when make run is killed. Served again, the
// stack applies nothing until the simulated network delivers again what
// we did not acknowledge (the sweeper's card_network step, on a clock
// moved past issuersandbox.RedeliverAfter): the settlement is applied once, then
// acknowledged, and the next sweep delivers nothing.
func TestCrashLosesNoCardNotification(t *testing.T) {
	tpl := localtest.Template(t)
	res := localtest.Resources(t, tpl)
	f := localtest.NewFixture(t, tpl, res, localtest.HTTPHandlers(t, tpl, res))
	quiet := slog.New(slog.DiscardHandler)
	withoutWorkers := func(srv *devserver.Server) {
		srv.Consumers = slices.DeleteFunc(srv.Consumers, func(c devserver.Consumer) bool { return c.Function == "card-worker" })
		srv.Schedules = nil // the sweeps are the test's
	}
	base, stop := localtest.StartServer(t, tpl, res, quiet, withoutWorkers)
	s := newCardStack(t, f, base)
	var auth struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	s.api.do("POST", "/sandbox/cards/"+f.Card+"/authorizations", s.auth, map[string]any{
		"amount": 4, "merchant_name": "Hotel", "merchant_city": "Austin", "merchant_country": "US",
	}, http.StatusCreated, &auth)
	var queued struct {
		Data struct {
			EventID string `json:"event_id"`
		} `json:"data"`
	}
	s.api.do("POST", "/sandbox/card-transactions/"+auth.Data.ID+"/settle", s.auth, nil, http.StatusAccepted, &queued)
	if t.Failed() {
		t.FailNow()
	}
	stop()
	queue := res.QueueURLs["issuer-events"]
	if _, err := localtest.SQSClient(t).PurgeQueue(context.Background(), &sqs.PurgeQueueInput{QueueUrl: aws.String(queue)}); err != nil {
		t.Fatal(err)
	}

	base, stop = localtest.StartServer(t, tpl, res, quiet, func(srv *devserver.Server) { srv.Schedules = nil })
	t.Cleanup(stop)
	s = newCardStack(t, f, base)
	db := store.New(storetest.Client(t), res.TableName)
	ctx := context.Background()
	// A settlement is claimed by the network's transaction id, which the
	// sandbox network derives from its notification's.
	claim := issuer.NotifiedTransactionID(queued.Data.EventID)
	if _, found, err := moneystore.NewCards(db).Outcome(ctx, f.Company, claim); err != nil || found {
		t.Fatalf("the settlement was applied before the network delivered it again (%v, %v)", found, err)
	}
	sweep := func(after time.Duration) sweeper.Outcome {
		h, err := sweeper.NewWithClock(localtest.FunctionConfig(t, tpl, res, "sweeper"), functionbase.NewCaches(time.Now), func() time.Time { return time.Now().Add(after) })
		if err != nil {
			t.Fatal(err)
		}
		r, err := h(devserver.LambdaContext(ctx, "sweeper"), events.EventBridgeEvent{})
		if err != nil {
			t.Fatal(err)
		}
		return r.(sweeper.Report)["card_network"]
	}
	// Neither the authorization's advice nor the settlement was applied,
	// nor so acknowledged: both are delivered again.
	if got := sweep(issuersandbox.RedeliverAfter); got.Done != 2 {
		t.Fatalf("card_network %+v, want the advice and the settlement delivered again", got)
	}
	waittest.Until(t, 30*time.Second, "the card-worker applies the settlement delivered again", func() bool {
		_, found, err := moneystore.NewCards(db).Outcome(ctx, f.Company, claim)
		return err == nil && found
	})
	var card struct {
		Data struct {
			Balance numberText `json:"balance"`
		} `json:"data"`
	}
	s.api.do("GET", "/cards/"+f.Card+"?sync=false", s.auth, nil, http.StatusOK, &card)
	if card.Data.Balance != "16" {
		t.Errorf("card balance %s after the settlement of 4, want 16", card.Data.Balance)
	}
	waittest.Until(t, 30*time.Second, "the settlement acknowledged: nothing to deliver again", func() bool {
		return sweep(10*issuersandbox.RedeliverAfter).Done == 0
	})
	if err := cards.VerifyLedger(ctx, moneystore.NewCards(db), moneystore.NewWallets(db), f.Company); err != nil {
		t.Fatal(err)
	}
}
