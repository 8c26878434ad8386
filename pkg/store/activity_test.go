package store_test

import (
	"context"
	"testing"
	"time"

	"payments/pkg/activity"
	"payments/pkg/page"
	"payments/pkg/store"
	"payments/pkg/store/storetest"
)

// TestActivity records three entries a minute apart and reads them back
// newest first, two to a page, in their company's partition only.
func TestActivity(t *testing.T) {
	db := storetest.NewDB(t)
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	now := t0
	log, err := activity.NewLog(store.NewActivity(db), func() time.Time { now = now.Add(time.Minute); return now })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, action := range []string{"Payout made", "Client key rolled", "Webhook endpoint created"} {
		if err := log.Record(ctx, "c1", "ada@example.com", action, "id-"+action[:3]); err != nil {
			t.Fatal(err)
		}
	}
	if err := log.Record(ctx, "c2", activity.KeyActor("cli-2"), "Payout made", "p9"); err != nil {
		t.Fatal(err)
	}
	first, err := log.List(ctx, "c1", page.Request{Page: 1, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if first.Total != 3 || len(first.Items) != 2 || first.Next == "" {
		t.Fatalf("first page = %+v; want 2 of 3 and a next", first)
	}
	want := activity.Entry{ID: first.Items[0].ID, CompanyID: "c1", At: t0.Add(3 * time.Minute), Actor: "ada@example.com",
		Action: "Webhook endpoint created", Subject: "id-Web"}
	if first.Items[0] != want {
		t.Errorf("newest = %+v; want %+v", first.Items[0], want)
	}
	second, err := log.List(ctx, "c1", page.Request{Page: 1, Limit: 2}.Following(first.Next, first.Total))
	if err != nil {
		t.Fatal(err)
	}
	if len(second.Items) != 1 || second.Items[0].Action != "Payout made" || second.Next != "" {
		t.Errorf("second page = %+v; want the oldest alone", second)
	}
	other, err := log.List(ctx, "c2", page.Request{Page: 1, Limit: 10})
	if err != nil || len(other.Items) != 1 || other.Items[0].Actor != "API key cli-2" {
		t.Errorf("c2's activity = %+v, %v; want its one entry", other, err)
	}
}
