package cards_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	awsevents "github.com/aws/aws-lambda-go/events"

	"payments/pkg/app/apptest"
	"payments/pkg/function"
	"payments/pkg/metrics"
	"payments/pkg/providers/issuer"
	"payments/pkg/store/moneystore"
)

// TestSweeperMeasuresWhatItLeavesOpen: every sweep writes its two measures
// for the alarms (docs/operations.md): the card movements it found open
// past its window and could not finish, and the payments waiting for
// reconciliation for over an hour. A funding left open by an issuer that
// did not answer counts while the issuer stays down, and is finished once
// it is back.
func TestSweeperMeasuresWhatItLeavesOpen(t *testing.T) {
	t.Parallel()
	e := apptest.NewCardsTestEnv(t)
	_, token, _, customerID := e.CardCompany("100", "CM-7902")
	card := e.Call(e.Cards, token, "POST", "/cards", `{"customer_id":"`+customerID+`","amount":5}`).Str("data", "id")
	if r := e.Call(e.IssuerDown(t), token, "POST", "/cards/"+card+"/fund", `{"amount":3}`); r.Status != 502 {
		t.Fatalf("fund with the issuer down: %d %s, want 502", r.Status, r.Raw)
	}
	later := func() time.Time { return time.Now().Add(2 * time.Minute) }
	cfg := apptest.Recording(e.Cfg, "sweeper")
	tests := []struct {
		name  string
		sweep function.ScheduleHandler
		open  func(n float64) bool // the card movements left open
		done  int                  // the card movements the sweep finished, at least
	}{
		{"the issuer still down", apptest.MustSweeper(t, apptest.IssuerDownConfig(cfg), later), func(n float64) bool { return n >= 1 }, 0},
		{"the issuer back", apptest.MustSweeper(t, cfg, later), func(float64) bool { return true }, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var emf bytes.Buffer
			ctx := metrics.NewContext(context.Background(), metrics.New(metrics.SyncWriter(&emf), "payments/test", "sweeper")) // its steps run at once
			resp, _ := tt.sweep(ctx, awsevents.EventBridgeEvent{})
			report, _ := json.Marshal(resp)
			var got struct {
				CardMovements struct{ Done int } `json:"card_movements"`
			}
			json.Unmarshal(report, &got)
			if got.CardMovements.Done < tt.done {
				t.Errorf("report %s: want at least %d card movement finished", report, tt.done)
			}
			gauges := map[string][]float64{}
			for _, line := range strings.Split(strings.TrimSpace(emf.String()), "\n") {
				samples, err := metrics.Parse([]byte(line))
				if err != nil {
					t.Fatalf("%v: %s", err, line)
				}
				for _, s := range samples {
					gauges[s.Name] = append(gauges[s.Name], s.Values...)
				}
			}
			if v := gauges[metrics.CardMovementsOpenPastWindow]; len(v) != 1 || !tt.open(v[0]) {
				t.Errorf("CardMovementsOpenPastWindow %v", v)
			}
			if v := gauges[metrics.PaymentsAwaitingReconciliationOverAnHour]; len(v) != 1 {
				t.Errorf("PaymentsAwaitingReconciliationOverAnHour %v: want one measure", v)
			}
		})
	}
}

// TestDecisionsAreMeasured: each authorization decided is counted by its
// outcome, a retry's answer not; every answer's time is measured.
func TestDecisionsAreMeasured(t *testing.T) {
	t.Parallel()
	e := newNetworkEnv(t)
	companyID, _, _, cardID := e.fundedCard(20, 10)
	ctx := context.Background()
	card, err := moneystore.NewCards(e.DB).Card(ctx, companyID, cardID)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := testCards(e.Cfg, e.DB)
	if err != nil {
		t.Fatal(err)
	}
	var emf bytes.Buffer
	ctx = metrics.NewContext(ctx, metrics.New(&emf, "payments/test", "issuer-authorizations"))
	for _, r := range []struct {
		id     string
		amount int64
		want   string
	}{{"ntx_measured-1", 1500, issuer.Approved}, {"ntx_measured-2", 1000, issuer.Declined}, {"ntx_measured-1", 1500, issuer.Approved}} {
		a, err := svc.Decide(ctx, issuer.AuthorizationRequest{ID: r.id, CardID: card.IssuerCardID, Reference: card.ID,
			Kind: issuer.KindAuthorization, Amount: r.amount, Currency: "USD",
			Merchant: issuer.Merchant{Name: "Book Shop", City: "Austin", Country: "US"}, CreatedAt: time.Now().UTC()})
		if err != nil || a.Decision != r.want {
			t.Fatalf("%s: %v %v, want %v", r.id, a.Decision, err, r.want)
		}
	}
	got := map[string][]float64{}
	for _, line := range strings.Split(strings.TrimSpace(emf.String()), "\n") {
		samples, err := metrics.Parse([]byte(line))
		if err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		for _, s := range samples {
			got[s.Name] = append(got[s.Name], s.Values...)
		}
	}
	if fmt.Sprint(got[metrics.AuthorizationsApproved], got[metrics.AuthorizationsDeclined]) != "[1] [1]" {
		t.Errorf("approved %v, declined %v: want one of each", got[metrics.AuthorizationsApproved], got[metrics.AuthorizationsDeclined])
	}
	if l := got[metrics.AuthorizationDecisionLatency]; len(l) != 3 || slices.Min(l) <= 0 {
		t.Errorf("answer times %v: want three, above zero", l)
	}
}
