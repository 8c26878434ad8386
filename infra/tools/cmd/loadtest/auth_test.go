package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"payments/infra/local/samtemplate"
	"payments/infra/local/stack"
	"payments/pkg/store/moneystore"
)

func TestAuthOutcome(t *testing.T) {
	for _, c := range []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"approved", 200, `{"data":{"decision":"APPROVED","decline_reason":null,"transaction_id":"t","available_balance":100}}`, ""},
		{"declined", 200, `{"data":{"decision":"DECLINED","decline_reason":"insufficient_funds","transaction_id":"t","available_balance":0}}`, "DECLINED insufficient_funds"},
		{"declined without reason", 200, `{"data":{"decision":"DECLINED"}}`, "DECLINED"},
		{"refused signature", 401, `{"statusCode":401,"code":"UNAUTHORIZED"}`, "401 UNAUTHORIZED"},
		{"not JSON", 502, `Bad Gateway`, "502"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := authOutcome(c.status, []byte(c.body)); got != c.want {
				t.Errorf("authOutcome(%d, %s) = %q, want %q", c.status, c.body, got, c.want)
			}
		})
	}
}

// TestAuthorizationScenarios runs (c) and (d) briefly on two cards made
// through the API and checks that every decision was an approval and that
// the cards hold exactly what the approvals of both scenarios held.
func TestAuthorizationScenarios(t *testing.T) {
	ep := fromEnv()
	if ep.dynamodb == "" || ep.sqs == "" || ep.s3 == "" {
		t.Fatal("AWS_ENDPOINT_URL_DYNAMODB, _SQS and _S3 are not set: run it inside `devstack exec`")
	}
	root, err := stack.FindRoot()
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := samtemplate.Load(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	d, err := deploy(ctx, tpl, ep)
	if err != nil {
		t.Fatal(err)
	}
	defer d.stop()
	cs, err := d.setUpCards(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if c.Available() != cardFunding*100 || c.Held != 0 {
			t.Fatalf("card %s issued with %d available, %d held, want %d and 0", c.ID, c.Available(), c.Held, cardFunding*100)
		}
	}
	via := d.authViaServer(ctx, cs, 2, 300*time.Millisecond)
	direct := authDirect(ctx, d.db(), cs, 2, 300*time.Millisecond)
	for _, r := range []Result{via, direct} {
		if r.Accepted == 0 || len(r.Refused) > 0 || len(r.Latencies) != r.Accepted {
			t.Errorf("approved %d (%d latencies), not approved %v: want approvals only", r.Accepted, len(r.Latencies), r.Refused)
		}
	}
	var held int64
	st := moneystore.NewCards(d.db())
	for _, c := range cs {
		now, err := st.Card(ctx, c.CompanyID, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if now.Balance != c.Balance {
			t.Errorf("card %s balance %d, want %d: an authorization only holds", c.ID, now.Balance, c.Balance)
		}
		held += now.Held
	}
	if want := int64(via.Accepted+direct.Accepted) * authAmount; held != want {
		t.Errorf("the cards hold %d, want %d: %d approvals through the server and %d direct, of %d each",
			held, want, via.Accepted, direct.Accepted, authAmount)
	}
}
