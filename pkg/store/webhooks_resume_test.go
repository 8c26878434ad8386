package store_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"payments/pkg/events"
	"payments/pkg/store"
	"payments/pkg/store/schema"
	"payments/pkg/store/storetest"
	"payments/pkg/webhooks"
)

// pendingDelivery returns a new PENDING notify_url delivery of the company
// for a new event, created at.
func pendingDelivery(co string, at time.Time) webhooks.Delivery {
	ev := uuid.NewString()
	return webhooks.Delivery{
		ID: webhooks.DeliveryID(ev, webhooks.DestinationNotifyURL, "", 0), CompanyID: co, EventID: ev,
		Destination: webhooks.DestinationNotifyURL, URL: "https://merchant.example/notify",
		Status: webhooks.StatusPending, CreatedAt: at, UpdatedAt: at, ExpiresAt: at.Add(events.Retention),
	}
}

// stalledIDs returns the ids of the deliveries StalledDeliveries returns.
func stalledIDs(t *testing.T, s *store.Webhooks, cutoff time.Time, limit int) []string {
	t.Helper()
	ds, err := s.StalledDeliveries(context.Background(), cutoff, limit)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range ds {
		ids = append(ids, d.ID)
	}
	slices.Sort(ids)
	return ids
}

func sorted(ids ...string) []string { return slices.Sorted(slices.Values(ids)) }

// TestPendingDeliveriesIndex: a PENDING delivery is in the index of
// pending deliveries from when it last moved (created, an attempt
// recorded, queued again) and leaves it when DELIVERED, FAILED or
// CANCELED; the sweeper's requeue is conditioned on the delivery not
// having moved since it was read.
func TestPendingDeliveriesIndex(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	s := store.NewWebhooks(db)
	co := newWebhookCompany(t, db)
	t0 := time.Now().UTC().Truncate(time.Millisecond)
	t1, t2 := t0.Add(time.Minute), t0.Add(2*time.Minute)
	retried, delivered, canceled := pendingDelivery(co, t0), pendingDelivery(co, t0), pendingDelivery(co, t0)
	for _, d := range []webhooks.Delivery{retried, delivered, canceled} {
		if err := s.CreateDelivery(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	if got := stalledIDs(t, s, t0, 10); len(got) != 0 {
		t.Fatalf("stalled before their creation: %v", got)
	}
	if got, want := stalledIDs(t, s, t0.Add(time.Millisecond), 10), sorted(retried.ID, delivered.ID, canceled.ID); !slices.Equal(got, want) {
		t.Fatalf("stalled %v, want %v", got, want)
	}
	if got := stalledIDs(t, s, t0.Add(time.Millisecond), 2); len(got) != 2 {
		t.Fatalf("limit 2 gave %d", len(got))
	}

	failed := webhooks.Attempt{Number: 1, At: t1, StatusCode: 500}
	if err := s.RecordAttempt(ctx, retried, failed, webhooks.StatusPending, t1); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordAttempt(ctx, delivered, webhooks.Attempt{Number: 1, At: t1, StatusCode: 200}, webhooks.StatusDelivered, t1); err != nil {
		t.Fatal(err)
	}
	if err := s.CancelDelivery(ctx, canceled, t1); err != nil {
		t.Fatal(err)
	}
	if got := stalledIDs(t, s, t1, 10); len(got) != 0 {
		t.Fatalf("stalled before t1: %v; the retried one moved at t1, the others left", got)
	}
	if got := stalledIDs(t, s, t2, 10); !slices.Equal(got, []string{retried.ID}) {
		t.Fatalf("stalled before t2: %v, want the retried one", got)
	}

	// The sweeper requeues it as it read it; a stale read is refused.
	read, err := s.Delivery(ctx, co, retried.ID)
	if err != nil || !read.UpdatedAt.Equal(t1) || len(read.Attempts) != 1 {
		t.Fatalf("delivery %+v, %v", read, err)
	}
	if err := s.Requeue(ctx, retried, t2); !errors.Is(err, webhooks.ErrAttemptTaken) {
		t.Fatalf("requeue from a stale read: %v", err)
	}
	if err := s.Requeue(ctx, read, t2); err != nil {
		t.Fatal(err)
	}
	if err := s.Requeue(ctx, read, t2.Add(time.Second)); !errors.Is(err, webhooks.ErrAttemptTaken) {
		t.Fatalf("second requeue of the same read: %v", err)
	}
	if got := stalledIDs(t, s, t2, 10); len(got) != 0 {
		t.Fatalf("stalled before t2 after the requeue: %v", got)
	}
	if got := stalledIDs(t, s, t2.Add(time.Millisecond), 10); !slices.Equal(got, []string{retried.ID}) {
		t.Fatalf("stalled after t2: %v", got)
	}
	gone, _ := s.Delivery(ctx, co, delivered.ID)
	if err := s.Requeue(ctx, gone, t2); !errors.Is(err, webhooks.ErrAttemptTaken) {
		t.Fatalf("requeue of a delivered one: %v", err)
	}
	// Its last attempt fails for good: it leaves the index.
	read, _ = s.Delivery(ctx, co, retried.ID)
	for n := 2; n <= webhooks.MaxAttempts; n++ {
		st := webhooks.StatusPending
		if n == webhooks.MaxAttempts {
			st = webhooks.StatusFailed
		}
		if err := s.RecordAttempt(ctx, read, webhooks.Attempt{Number: n, At: t2, StatusCode: 500}, st, t2); err != nil {
			t.Fatal(err)
		}
	}
	if got := stalledIDs(t, s, t2.Add(time.Hour), 10); len(got) != 0 {
		t.Fatalf("stalled after FAILED: %v", got)
	}
}

// TestClaimAttempt: of copies of a message that claim one attempt at once,
// one gets it; the others get it only once the claim has run out, and
// none gets an attempt whose predecessor is not recorded.
func TestClaimAttempt(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	s := store.NewWebhooks(db)
	co := newWebhookCompany(t, db)
	now := time.Now().UTC().Truncate(time.Millisecond)
	d := pendingDelivery(co, now)
	if err := s.CreateDelivery(ctx, d); err != nil {
		t.Fatal(err)
	}
	until := now.Add(webhooks.AttemptLease)
	errs := make([]error, 8)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() { errs[i] = s.ClaimAttempt(ctx, d, 1, now, until) })
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, webhooks.ErrAttemptTaken):
			t.Fatal(err)
		}
	}
	if won != 1 {
		t.Fatalf("%d copies claimed attempt 1", won)
	}
	tests := []struct {
		name string
		n    int
		at   time.Time
		want error
	}{
		{"while the claim runs", 1, until.Add(-time.Millisecond), webhooks.ErrAttemptTaken},
		{"an attempt whose predecessor is not recorded", 2, now, webhooks.ErrAttemptTaken},
		{"once the claim ran out", 1, until.Add(time.Millisecond), nil},
		{"again, within the new claim", 1, until.Add(time.Second), webhooks.ErrAttemptTaken},
	}
	for _, tt := range tests {
		if err := s.ClaimAttempt(ctx, d, tt.n, tt.at, tt.at.Add(webhooks.AttemptLease)); !errors.Is(err, tt.want) {
			t.Fatalf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	// Attempt 1 recorded, attempt 2 is free at once; a delivery no longer
	// PENDING has no attempt to claim.
	if err := s.RecordAttempt(ctx, d, webhooks.Attempt{Number: 1, At: now, StatusCode: 500}, webhooks.StatusPending, now); err != nil {
		t.Fatal(err)
	}
	if err := s.ClaimAttempt(ctx, d, 2, now, until); err != nil {
		t.Fatalf("attempt 2 after 1 was recorded: %v", err)
	}
	read, _ := s.Delivery(ctx, co, d.ID)
	if err := s.RecordAttempt(ctx, read, webhooks.Attempt{Number: 2, At: now, StatusCode: 200}, webhooks.StatusDelivered, now); err != nil {
		t.Fatal(err)
	}
	if err := s.ClaimAttempt(ctx, d, 3, until.Add(time.Hour), until.Add(2*time.Hour)); !errors.Is(err, webhooks.ErrAttemptTaken) {
		t.Fatalf("claim on a delivered one: %v", err)
	}
}

// TestStalledDeliveriesPageThrough: a shard holding more stalled deliveries
// than one query returns is read page after page, up to the limit.
func TestStalledDeliveriesPageThrough(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	s := store.NewWebhooks(db)
	co := newWebhookCompany(t, db)
	at := time.Now().UTC().Truncate(time.Millisecond)
	const many = 130 // past a page of 100, in one shard
	var shard string
	n := 0
	for n < many {
		d := pendingDelivery(co, at)
		k := schema.ShardKey(schema.PendingDeliveryIndex, d.ID)
		if shard == "" {
			shard = k
		}
		if k != shard {
			continue
		}
		if err := s.CreateDelivery(ctx, d); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if got := stalledIDs(t, s, at.Add(time.Second), 1000); len(got) != many {
		t.Fatalf("read %d of %d", len(got), many)
	}
	if got := stalledIDs(t, s, at.Add(time.Second), 120); len(got) != 120 {
		t.Fatalf("read %d with a limit of 120", len(got))
	}
}
