package reconcile_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/app/apptest"
	"payments/pkg/cards"
	"payments/pkg/function"
	"payments/pkg/metrics"
	"payments/pkg/providers/issuer"
	"payments/pkg/reconcile"
	"payments/pkg/store/moneystore"
	"payments/pkg/store/schema"
)

// later is how far the tests' clock moves past the records they made:
// beyond the issuer's window grace.
const later = reconcile.Grace + 5*time.Minute

// TestRecoversASettlementNeverDelivered: the network settled an
// authorization and its notification never reached us (the endpoint was
// down: dropped). The reconciliation lists the issuer's transactions,
// applies the one we do not have, as the card-worker would have, and
// reports it recovered with no mismatch; the card's money and its ledger
// then agree with the issuer. A run later finds nothing more to apply.
func TestRecoversASettlementNeverDelivered(t *testing.T) {
	t.Parallel()
	e := newCardEnv(t)
	companyID, c := e.card(50)
	kept := e.authorize(c, 1200)
	auth := e.authorize(c, 2000)
	e.Drop(issuer.NotifySettlement)
	e.follow(issuer.NotifySettlement, c, auth, 2000)
	if len(e.Dropped()) != 1 {
		t.Fatalf("dropped %+v, want the settlement", e.Dropped())
	}
	if h := e.hold(companyID, auth); h.Hold != 2000 || h.Settled != 0 {
		t.Fatalf("before the reconciliation: %+v, want the hold open, nothing settled", h)
	}

	e.Clock.Advance(later)
	reports := reconcileNow(t, e.Console, e.console, "issuer")
	if len(reports) != 1 {
		t.Fatalf("reports %+v, want the issuer's", reports)
	}
	first := reports[0]
	if first.Provider != "issuer" || first.Status != "COMPLETED" || first.Recovered != 1 || first.MismatchCount != 0 || len(first.Mismatches) != 0 {
		t.Fatalf("report %+v: want COMPLETED, the settlement recovered, no mismatch", first)
	}
	if first.Matched < 2 { // the hold still open, and the balance
		t.Errorf("matched %d, want the open hold and the balance at least", first.Matched)
	}
	h := e.hold(companyID, auth)
	if h.Hold != 0 || h.Settled != 2000 || h.Status != cards.TxSuccess {
		t.Errorf("after the reconciliation: %+v, want settled 2000, no hold", h)
	}
	if k := e.hold(companyID, kept); k.Hold != 1200 {
		t.Errorf("the other authorization: %+v, want its hold kept", k)
	}
	card := e.ourCard(companyID, c.ID)
	if card.Balance != 3000 || card.Held != 1200 {
		t.Errorf("card %+v: want balance 30.00 (50 less the 20 settled), 12.00 held", card)
	}
	if len(first.Balances) != 1 || first.Balances[0].Currency != "USD" || first.Balances[0].OurAmount == nil ||
		first.Balances[0].ProviderAmount.String() != "10000000" {
		t.Errorf("balances %+v: want the sandbox issuer's float against the cards' balances", first.Balances)
	}
	e.VerifyCards(companyID)

	e.Clock.Advance(2 * time.Hour)
	again := reconcileNow(t, e.Console, e.console, "issuer")[0]
	if again.Status != "COMPLETED" || again.Recovered != 0 || again.MismatchCount != 0 || again.Window.From != first.Window.To {
		t.Fatalf("the next run %+v: want COMPLETED from where the first ended, nothing applied, no mismatch", again)
	}
	if card := e.ourCard(companyID, c.ID); card.Balance != 3000 {
		t.Errorf("after the next run: balance %d, want 3000: nothing applied twice", card.Balance)
	}
	// The first window taken again: the settlement recovered is found, as
	// recorded, and matched.
	r := e.console(e.Console, "POST", "/admin/reconciliations", `{"provider":"issuer","from":"`+first.Window.From+`"}`)
	if r.Status != 201 {
		t.Fatalf("a window taken again: %d %s", r.Status, r.Raw)
	}
	var redo struct {
		Data []report `json:"data"`
	}
	if err := json.Unmarshal([]byte(r.Raw), &redo); err != nil || len(redo.Data) != 1 {
		t.Fatalf("%s: %v", r.Raw, err)
	}
	if x := redo.Data[0]; x.Status != "COMPLETED" || x.Recovered != 0 || x.MismatchCount != 0 || x.Matched < 3 || x.Window.From != first.Window.From {
		t.Fatalf("the window taken again %+v: want the settlement matched, nothing applied, no mismatch", x)
	}
	if card := e.ourCard(companyID, c.ID); card.Balance != 3000 {
		t.Errorf("after the window taken again: balance %d, want 3000: nothing applied twice", card.Balance)
	}
	e.VerifyCards(companyID)
}

// TestConsoleRunEndsNow: a settlement whose notification was dropped a
// minute ago, well within Grace, is recovered by the run the console asks
// for at once: its window ends when it starts, not Grace before, as the
// operator who saw the deliveries fail asks for what the issuer has now.
func TestConsoleRunEndsNow(t *testing.T) {
	t.Parallel()
	e := newCardEnv(t)
	companyID, c := e.card(30)
	auth := e.authorize(c, 1200)
	e.Drop(issuer.NotifySettlement)
	e.follow(issuer.NotifySettlement, c, auth, 1500)
	if len(e.Dropped()) != 1 {
		t.Fatalf("dropped %+v, want the settlement", e.Dropped())
	}

	e.Clock.Advance(time.Minute)
	rep := reconcileNow(t, e.Console, e.console, "issuer")[0]
	if rep.Window.To != rep.StartedAt {
		t.Errorf("window %+v, started at %s: want it to end when the run started", rep.Window, rep.StartedAt)
	}
	if rep.Status != "COMPLETED" || rep.Recovered != 1 || rep.MismatchCount != 0 {
		t.Fatalf("report %+v: want COMPLETED, the settlement of a minute ago recovered, no mismatch", rep)
	}
	if h := e.hold(companyID, auth); h.Hold != 0 || h.Settled != 1500 {
		t.Errorf("after the reconciliation: %+v, want settled 1500, no hold", h)
	}
	if card := e.ourCard(companyID, c.ID); card.Balance != 1500 || card.Held != 0 {
		t.Errorf("card %+v: want balance 15.00 (30 less the 15 settled), nothing held", card)
	}
	if r := e.console(e.Console, "POST", "/admin/reconciliations", `{"provider":"issuer","from":"`+rep.StartedAt+`"}`); r.Status != 400 || !strings.Contains(r.Raw, "from") {
		t.Errorf("a window from now: %d %s, want 400 naming from", r.Status, r.Raw)
	}
	e.VerifyCards(companyID)
}

// TestAmountMismatchIsReported: a settlement both sides have, whose
// amount we recorded otherwise (our record tampered with), is a mismatch of
// kind amount naming both records: kept in the report, logged at error
// level and counted by ReconciliationMismatches. Nothing is applied.
func TestAmountMismatchIsReported(t *testing.T) {
	e := newCardEnv(t)
	companyID, c := e.card(40)
	auth := e.authorize(c, 1500)
	e.follow(issuer.NotifySettlement, c, auth, 1500)
	settlement := settlementOf(t, e, companyID, c.ID)
	if settlement.Amount != 1500 {
		t.Fatalf("settlement %+v", settlement)
	}
	tamper := func(amount string) {
		t.Helper()
		_, err := e.DB.Client.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
			TableName:                 aws.String(e.DB.Table),
			Key:                       map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: schema.CompanyPK(companyID)}, "SK": &types.AttributeValueMemberS{Value: schema.CardTxSK(settlement.ID)}},
			UpdateExpression:          aws.String("SET amount = :a"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":a": &types.AttributeValueMemberN{Value: amount}},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	tamper("1400")
	logs := apptest.CaptureLogs(t)
	var emf bytes.Buffer
	console, err := consoleWithMetrics(e, &emf)
	if err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(later)
	r := reconcileNow(t, console, e.console, "issuer")[0]
	if r.Status != "COMPLETED" || r.MismatchCount != 1 || len(r.Mismatches) != 1 || r.Recovered != 0 {
		t.Fatalf("report %+v: want one mismatch, nothing recovered", r)
	}
	m := r.Mismatches[0]
	if m.Kind != "amount" || m.Subject != "transaction" || str(m.CompanyID) != companyID || str(m.Reference) != c.ID ||
		str(m.TransactionID) != settlement.ID || str(m.ProviderID) != settlement.IssuerTxID || str(m.Currency) != "USD" ||
		m.ProviderAmount == nil || m.ProviderAmount.String() != "15" || m.OurAmount == nil || m.OurAmount.String() != "14" {
		t.Errorf("mismatch %+v: want amount 15 at the issuer, 14 here, naming both records", m)
	}
	if n := countMetric(t, emf.String(), metrics.ReconciliationMismatches); n != 1 {
		t.Errorf("ReconciliationMismatches %v, want 1:\n%s", n, emf.String())
	}
	logged := false
	for _, line := range logs.Lines() {
		if strings.Contains(line, `"level":"ERROR"`) && strings.Contains(line, `"msg":"reconciliation mismatch"`) &&
			strings.Contains(line, settlement.ID) && strings.Contains(line, `"kind":"amount"`) {
			logged = true
		}
	}
	if !logged {
		t.Errorf("no error line for the mismatch:\n%s", strings.Join(logs.Lines(), "\n"))
	}
	if h := e.hold(companyID, auth); h.Settled != 1500 || h.Hold != 0 {
		t.Errorf("authorization %+v: want it as it was", h)
	}
	if card := e.ourCard(companyID, c.ID); card.Balance != 2500 {
		t.Errorf("card %+v: want 25.00, nothing applied", card)
	}
	// The run moved nothing: with our record as it was, the ledger holds.
	tamper("1500")
	e.VerifyCards(companyID)
}

// TestReleasesAHoldTheIssuerNoLongerHolds: the network reversed an
// authorization and its notification never reached us, so we kept its hold:
// the reconciliation finds the issuer holds nothing of it and releases it
// with a reversal of its own making, and the card's money is available
// again; the same finding is never applied twice.
func TestReleasesAHoldTheIssuerNoLongerHolds(t *testing.T) {
	t.Parallel()
	e := newCardEnv(t)
	companyID, c := e.card(30)
	auth := e.authorize(c, 900)
	e.Drop(issuer.NotifyReversal)
	e.follow(issuer.NotifyReversal, c, auth, 0)
	if h := e.hold(companyID, auth); h.Hold != 900 {
		t.Fatalf("before: %+v, want the hold we were never told was released", h)
	}
	e.Clock.Advance(later)
	r := reconcileNow(t, e.Console, e.console, "")
	if len(r) != 2 || r[0].Provider != "issuer" || r[1].Provider != "operator" {
		t.Fatalf("reports %+v: want the issuer's, then the operator's", r)
	}
	if r[0].Status != "COMPLETED" || r[0].Recovered != 1 || r[0].MismatchCount != 0 {
		t.Fatalf("issuer report %+v: want the hold released, no mismatch", r[0])
	}
	h := e.hold(companyID, auth)
	if h.Hold != 0 || h.Status != cards.TxSuccess {
		t.Errorf("after: %+v, want its hold released", h)
	}
	if card := e.ourCard(companyID, c.ID); card.Balance != 3000 || card.Held != 0 || card.Available() != 3000 {
		t.Errorf("card %+v: want its 30.00 available again", card)
	}
	reversals := 0
	txs, err := cardTransactions(e, companyID)
	if err != nil {
		t.Fatal(err)
	}
	for _, tx := range txs {
		if tx.Type == cards.TxReversal && tx.OriginalID == h.ID {
			reversals++
		}
	}
	if reversals != 1 {
		t.Errorf("%d reversals of the authorization, want 1", reversals)
	}
	e.VerifyCards(companyID)
}

// TestOpenHoldsCompared: an approval the issuer holds matches our hold of
// the same amount; a hold we keep that the issuer's list does not name is
// reported missing, and left as it is.
func TestOpenHoldsCompared(t *testing.T) {
	t.Parallel()
	e := newCardEnv(t)
	companyID, c := e.card(30)
	e.authorize(c, 700)
	ghost := e.OpenHolds(companyID, c.ID, 1, 300)[0]
	e.Clock.Advance(later)
	r := reconcileNow(t, e.Console, e.console, "issuer")[0]
	if r.Status != "COMPLETED" || r.MismatchCount != 1 || r.Recovered != 0 {
		t.Fatalf("report %+v: want the one hold the issuer does not know", r)
	}
	if m := r.Mismatches[0]; m.Kind != "missing" || m.Subject != "hold" || str(m.TransactionID) != ghost.ID || str(m.ProviderID) != ghost.IssuerTxID {
		t.Errorf("mismatch %+v", m)
	}
	if h := e.hold(companyID, ghost.IssuerTxID); h.Hold != 300 {
		t.Errorf("the hold the issuer does not know: %+v, want it left open", h)
	}
	e.VerifyCards(companyID)
}

// settlementOf returns the card's settlement.
func settlementOf(t *testing.T, e *cardEnv, companyID, cardID string) cards.Transaction {
	t.Helper()
	txs, err := cardTransactions(e, companyID)
	if err != nil {
		t.Fatal(err)
	}
	for _, tx := range txs {
		if tx.Type == cards.TxSettlement && tx.CardID == cardID {
			return tx
		}
	}
	t.Fatalf("no settlement of card %s in %+v", cardID, txs)
	return cards.Transaction{}
}

// consoleWithMetrics returns the console on e's clock whose invocations
// write their metrics to emf.
func consoleWithMetrics(e *cardEnv, emf *bytes.Buffer) (function.HTTPHandler, error) {
	h := e.Console
	return func(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		return h(metrics.NewContext(ctx, metrics.New(emf, "payments/test", "admin")), req)
	}, nil
}

// cardTransactions reads every card transaction of the company.
func cardTransactions(e *cardEnv, companyID string) ([]cards.Transaction, error) {
	return moneystore.NewCards(e.DB).Transactions(context.Background(), companyID)
}

// countMetric returns the sum of the metric name in the EMF lines emf.
func countMetric(t *testing.T, emf, name string) float64 {
	t.Helper()
	rows, invalid, err := metrics.Summarize(strings.NewReader(emf))
	if err != nil || invalid > 0 {
		t.Fatalf("EMF lines: %d invalid, %v", invalid, err)
	}
	var n float64
	for _, r := range rows {
		if r.Name == name && r.Dimensions == "" {
			n += r.Sum()
		}
	}
	return n
}
