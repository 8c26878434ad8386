package cards_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	awsevents "github.com/aws/aws-lambda-go/events"

	"payments/pkg/app/apptest"
	"payments/pkg/cards"
	"payments/pkg/function"
	"payments/pkg/store/moneystore"
)

// TestFundingEventsSayWhatHappened: card.fund is sent once the issuer has
// confirmed a funding, card.fund.failed once it has refused it, whether it
// answered the request or only the sweeper after the request was answered
// 502; nothing is sent while the issuer has not answered.
func TestFundingEventsSayWhatHappened(t *testing.T) {
	t.Parallel()
	e := apptest.NewCardsTestEnv(t)
	companyID, token, _, customerID := e.CardCompany("100", "CM-7901")
	ctx := context.Background()
	svc, err := testCards(e.Cfg, e.DB)
	if err != nil {
		t.Fatal(err)
	}
	down := e.IssuerDown(t)
	sweep := apptest.MustSweeper(t, apptest.Recording(e.Cfg, "sweeper"), func() time.Time { return time.Now().Add(2 * time.Minute) })
	cs := moneystore.NewCards(e.DB)
	// frozenAtIssuer: the issuer freezes its card on its own, so that it
	// refuses fundings our card still takes.
	frozenAtIssuer := func(card string) {
		c, err := cs.Card(ctx, companyID, card)
		if err == nil {
			_, err = svc.Issuer.FreezeCard(ctx, c.IssuerCardID)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	// frozen: the company freezes the card, here and at the issuer.
	frozen := func(card string) {
		if r := e.Call(e.Cards, token, "PUT", "/cards/"+card+"/freeze", ""); r.Status != 200 {
			t.Fatalf("freeze: %s", r.Raw)
		}
	}
	// sent returns the data of the events of kind about funding txID.
	sent := func(kind, txID string) []map[string]any {
		var out []map[string]any
		for _, it := range e.Call(e.Webhooks, token, "GET", "/webhooks/events?limit=100&event="+kind, "").Items() {
			if p, _ := it.(map[string]any)["payload"].(map[string]any); p["transaction_id"] == txID {
				out = append(out, p)
			}
		}
		return out
	}
	tests := []struct {
		name   string
		before func(card string) // before the request
		via    function.HTTPHandler
		status int               // the request's answer
		after  func(card string) // after the answer, before the sweeper
		want   string            // the event sent, once
	}{
		{"confirmed at once", nil, e.Cards, 200, nil, "card.fund"},
		{"refused at once", frozenAtIssuer, e.Cards, 422, nil, "card.fund.failed"},
		{"confirmed after the answer", nil, down, 502, nil, "card.fund"},
		{"refused after the answer", nil, down, 502, frozen, "card.fund.failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			card := e.Call(e.Cards, token, "POST", "/cards", `{"customer_id":"`+customerID+`","amount":5}`).Str("data", "id")
			if tt.before != nil {
				tt.before(card)
			}
			if r := e.Call(tt.via, token, "POST", "/cards/"+card+"/fund", `{"amount":3}`); r.Status != tt.status {
				t.Fatalf("fund: %d %s, want %d", r.Status, r.Raw, tt.status)
			}
			var funding cards.Transaction
			txs, err := cs.Transactions(ctx, companyID)
			if err != nil {
				t.Fatal(err)
			}
			for _, tx := range txs {
				if tx.CardID == card && tx.Type == cards.TxFunding && !tx.Issuance {
					funding = tx
				}
			}
			if funding.ID == "" {
				t.Fatalf("no funding of card %s", card)
			}
			if tt.status == 502 {
				for _, kind := range []string{"card.fund", "card.fund.failed"} {
					if got := sent(kind, funding.ID); len(got) != 0 {
						t.Errorf("%s sent before the issuer answered: %v", kind, got)
					}
				}
			}
			if tt.after != nil {
				tt.after(card)
			}
			if _, err := sweep(ctx, awsevents.EventBridgeEvent{}); err != nil {
				t.Fatal(err)
			}
			for _, kind := range []string{"card.fund", "card.fund.failed"} {
				got := sent(kind, funding.ID)
				if kind != tt.want {
					if len(got) != 0 {
						t.Errorf("%s sent: %v", kind, got)
					}
					continue
				}
				if len(got) != 1 || got[0]["card_id"] != card || fmt.Sprint(got[0]["amount"]) != "3" {
					t.Errorf("%s: %v, want one, of 3 USD on card %s", kind, got, card)
				}
				if kind == "card.fund.failed" && len(got) == 1 && got[0]["error"] == "" {
					t.Errorf("card.fund.failed says no error: %v", got[0])
				}
			}
		})
	}
	e.VerifyCards(companyID)
	e.CheckTimestamps(token)
}
