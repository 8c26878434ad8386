package reconcile_test

import (
	"context"

	"encoding/json"
	"fmt"
	"testing"
	"time"

	awsevents "github.com/aws/aws-lambda-go/events"

	"payments/pkg/app/apptest"
	"payments/pkg/function"
	"payments/pkg/function/adminapi"
	"payments/pkg/providers/issuer"
	"payments/pkg/reconcile"
	"payments/pkg/waittest"
)

// TestOperatorPaymentsReconciled: every payment of the window that may
// have reached the sandbox operator is asked about. A payout both sides
// have SUCCESS, and one both have FAILED, match; a payout the operator
// completed whose status poll we lost (the payout worker never ran it) is
// still PROCESSING here: a status mismatch naming it; a payout whose
// status the operator cannot give (a number ending in 998) is unverified.
// Nothing is moved, the wallet's ledger holds.
func TestOperatorPaymentsReconciled(t *testing.T) {
	t.Parallel()
	e := apptest.NewPaymentsTestEnv(t)
	companyID, token, _ := e.Company("100000")
	payout := func(phone string) string {
		t.Helper()
		r := e.Call(e.Payments, token, "POST", "/payment/payout",
			fmt.Sprintf(`{"operator":"mtn","country":"CM","phone_number":%q,"amount":1000,"currency":"XAF"}`, phone))
		if r.Status != 200 {
			t.Fatalf("payout: %s", r.Raw)
		}
		return r.Str("data", "transaction_id")
	}
	status := func(id string) string { return e.Status(token, id).Str("data", "status") }
	settled, failed := payout("237670000001"), payout("237670000000")
	e.Pump(30*time.Second, func() bool { return status(settled) == "SUCCESS" && status(failed) == "FAILED" })

	// Two more, submitted and left there: their polls, 5 s later, are
	// never run.
	lost, unreachable := payout("237670000002"), payout("237670000998")
	waittest.Until(t, 4*time.Second, "both submitted", func() bool {
		e.Deliver()
		return status(lost) == "PROCESSING" && status(unreachable) == "PROCESSING"
	})

	clock := apptest.NewClock(time.Now().Add(reconcile.OperatorLag + time.Hour))
	console, err := adminapi.NewWith(context.Background(), apptest.Recording(e.Cfg, "admin"), e.Caches, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	call := func(h function.HTTPHandler, method, target, body string) apptest.Result {
		return e.Call(h, "", method, target, body, adminapi.KeyHeader, apptest.AuthTestAdminKey)
	}
	r := reconcileNow(t, console, call, "operator")[0]
	if r.Provider != "operator" || r.Status != "COMPLETED" || r.Matched != 2 || r.Recovered != 0 || r.MismatchCount != 2 {
		t.Fatalf("report %+v: want 2 matched, 2 mismatches", r)
	}
	byRef := map[string]int{}
	for i, m := range r.Mismatches {
		byRef[str(m.Reference)] = i
		if str(m.CompanyID) != companyID || str(m.Currency) != "XAF" || m.Subject != "payment" {
			t.Errorf("mismatch %+v: want the company's XAF payment", m)
		}
	}
	if i, ok := byRef[lost]; !ok {
		t.Errorf("no mismatch for the payout whose poll was lost: %+v", r.Mismatches)
	} else if m := r.Mismatches[i]; m.Kind != "status" || str(m.ProviderStatus) != "SUCCESS" || str(m.OurStatus) != "PROCESSING" ||
		str(m.ProviderID) != "SBX-"+lost || m.ProviderAmount == nil || m.ProviderAmount.String() != "1000" {
		t.Errorf("the lost poll's mismatch %+v: want status SUCCESS at the operator, PROCESSING here", m)
	}
	if i, ok := byRef[unreachable]; !ok || r.Mismatches[i].Kind != "unverified" {
		t.Errorf("the unreachable payout's mismatch: %+v", r.Mismatches)
	}
	if len(r.Balances) != 0 {
		t.Errorf("balances %+v: the sandbox operator keeps no wallet", r.Balances)
	}
	if status(lost) != "PROCESSING" {
		t.Errorf("the lost payout is %s: the reconciliation moves no payment", status(lost))
	}
	e.Verify(companyID)
}

// TestConsoleRoutes: POST runs and answers 201 with the reports; GET
// lists them newest first, a page at a time; GET of one answers it, an
// unknown or malformed id is 404 RECONCILIATION_NOT_FOUND; a provider that
// is neither is a 400 naming it.
func TestConsoleRoutes(t *testing.T) {
	t.Parallel()
	e := newCardEnv(t)
	e.Clock.Advance(later)
	first := reconcileNow(t, e.Console, e.console, "")
	e.Clock.Advance(time.Hour)
	second := reconcileNow(t, e.Console, e.console, "operator")
	if len(first) != 2 || len(second) != 1 {
		t.Fatalf("runs %+v, %+v", first, second)
	}
	list := e.console(e.Console, "GET", "/admin/reconciliations?limit=2", "")
	if list.Status != 200 || list.Str("meta", "total") != "3" || len(list.Items()) != 2 {
		t.Fatalf("list: %d %s", list.Status, list.Raw)
	}
	var page struct {
		Data []report `json:"data"`
		Meta struct {
			NextCursor *string `json:"next_cursor"`
		} `json:"meta"`
	}
	if err := json.Unmarshal([]byte(list.Raw), &page); err != nil {
		t.Fatal(err)
	}
	// The first run's two reports started at the clock's same instant:
	// either may come first.
	if page.Data[0].ID != second[0].ID || (page.Data[1].ID != first[0].ID && page.Data[1].ID != first[1].ID) || page.Meta.NextCursor == nil {
		t.Fatalf("first page %+v: want the newest first, and a cursor", page)
	}
	other := first[0].ID
	if page.Data[1].ID == other {
		other = first[1].ID
	}
	rest := e.console(e.Console, "GET", "/admin/reconciliations?limit=2&cursor="+*page.Meta.NextCursor, "")
	if rest.Status != 200 || len(rest.Items()) != 1 || rest.Items()[0].(map[string]any)["id"] != other {
		t.Fatalf("second page: %d %s", rest.Status, rest.Raw)
	}
	one := e.console(e.Console, "GET", "/admin/reconciliations/"+first[0].ID, "")
	if one.Status != 200 || one.Str("data", "id") != first[0].ID || one.Str("data", "provider") != "issuer" || one.Str("data", "status") != "COMPLETED" {
		t.Fatalf("one: %d %s", one.Status, one.Raw)
	}
	for _, id := range []string{"01a24ee2-0000-7000-8000-000000000000", "not-a-uuid"} {
		r := e.console(e.Console, "GET", "/admin/reconciliations/"+id, "")
		if r.Status != 404 || r.Str("code") != "RECONCILIATION_NOT_FOUND" {
			t.Errorf("GET %s: %d %s, want 404 RECONCILIATION_NOT_FOUND", id, r.Status, r.Raw)
		}
	}
	bad := e.console(e.Console, "POST", "/admin/reconciliations", `{"provider":"bank"}`)
	if bad.Status != 400 || bad.Str("field") != "provider" {
		t.Errorf("POST a provider that is neither: %d %s, want 400 naming provider", bad.Status, bad.Raw)
	}
}

// TestRunOutOfTimeIsContinued: a run whose invocation has too little time
// left stops where it stands, RUNNING, and says so; while its invocation
// may still hold it another is refused (409 RECONCILIATION_RUNNING); once
// that time is over, the next run continues it, the same report, to the
// end.
func TestRunOutOfTimeIsContinued(t *testing.T) {
	t.Parallel()
	e := newCardEnv(t)
	companyID, c := e.card(20)
	auth := e.authorize(c, 500)
	e.Drop(issuer.NotifySettlement)
	e.follow(issuer.NotifySettlement, c, auth, 500)
	e.Clock.Advance(later)
	short := e.CallWithin(time.Second, e.Console, "", "POST", "/admin/reconciliations", `{"provider":"issuer"}`,
		adminapi.KeyHeader, apptest.AuthTestAdminKey)
	var out struct {
		Data []report `json:"data"`
	}
	if err := json.Unmarshal([]byte(short.Raw), &out); short.Status != 201 || err != nil || len(out.Data) != 1 {
		t.Fatalf("a run with a second to go: %d %s", short.Status, short.Raw)
	}
	cut := out.Data[0]
	if cut.Status != "RUNNING" || str(cut.Phase) != "authorizations" || cut.Recovered != 0 {
		t.Fatalf("the run cut short %+v: want RUNNING, nothing recovered yet", cut)
	}
	if h := e.hold(companyID, auth); h.Hold != 500 {
		t.Fatalf("the hold %+v: want it untouched by a run that had no time", h)
	}
	busy := e.console(e.Console, "POST", "/admin/reconciliations", `{"provider":"issuer"}`)
	if busy.Status != 409 || busy.Str("code") != "RECONCILIATION_RUNNING" {
		t.Fatalf("while the first may still run: %d %s, want 409 RECONCILIATION_RUNNING", busy.Status, busy.Raw)
	}
	e.Clock.Advance(time.Minute)
	done := reconcileNow(t, e.Console, e.console, "issuer")[0]
	if done.ID != cut.ID || done.Status != "COMPLETED" || done.Recovered != 1 || done.MismatchCount != 0 {
		t.Fatalf("the run continued %+v: want the same report completed, the settlement recovered", done)
	}
	if h := e.hold(companyID, auth); h.Settled != 500 {
		t.Errorf("after: %+v, want settled", h)
	}
	e.VerifyCards(companyID)
}

// TestSweeperReconcilesHourly: the sweeper's reconciliation step runs each
// provider's reconciliation when its latest run started an hour ago or
// more, on the sweeper's clock, and not in between; what its issuer's run
// recovers is applied as the card-worker would have.
func TestSweeperReconcilesHourly(t *testing.T) {
	t.Parallel()
	e := newCardEnv(t)
	companyID, c := e.card(20)
	auth := e.authorize(c, 700)
	e.Drop(issuer.NotifySettlement)
	e.follow(issuer.NotifySettlement, c, auth, 700)
	clock := apptest.NewClock(time.Now().Add(later))
	sweep := apptest.MustSweeper(t, apptest.Recording(e.Cfg, "sweeper"), clock.Now)
	ran := func() int {
		t.Helper()
		resp, err := sweep(context.Background(), awsevents.EventBridgeEvent{})
		if err != nil {
			t.Fatalf("sweep: %v (%+v)", err, resp)
		}
		b, _ := json.Marshal(resp)
		var got struct {
			Reconciliation struct {
				Done  int    `json:"done"`
				Error string `json:"error"`
			} `json:"reconciliation"`
		}
		if err := json.Unmarshal(b, &got); err != nil || got.Reconciliation.Error != "" {
			t.Fatalf("sweep report %s", b)
		}
		return got.Reconciliation.Done
	}
	if n := ran(); n != 2 {
		t.Fatalf("the first sweep ran %d reconciliations, want both providers'", n)
	}
	if h := e.hold(companyID, auth); h.Settled != 700 || h.Hold != 0 {
		t.Errorf("after the first sweep: %+v, want the lost settlement applied", h)
	}
	for _, step := range []struct {
		advance time.Duration
		want    int
	}{{time.Minute, 0}, {58 * time.Minute, 0}, {time.Minute, 2}, {time.Minute, 0}} {
		clock.Advance(step.advance)
		if n := ran(); n != step.want {
			t.Fatalf("at %v: %d reconciliations run, want %d", clock.Now(), n, step.want)
		}
	}
	list := e.console(e.Console, "GET", "/admin/reconciliations", "")
	if list.Str("meta", "total") != "4" {
		t.Errorf("reports: %s, want 4", list.Raw)
	}
	e.VerifyCards(companyID)
}
