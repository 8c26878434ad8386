package webhooks_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"payments/pkg/webhooks"
)

// resumeStore serves the deliveries of a fakeStore to the Resumer: its
// index is a copy taken when the test says (eventually consistent, as
// DynamoDB's), the deliveries themselves are read as they are.
type resumeStore struct {
	*fakeStore
	index    []webhooks.Delivery
	requeued []string
}

func (s *resumeStore) StalledDeliveries(_ context.Context, cutoff time.Time, limit int) ([]webhooks.Delivery, error) {
	var out []webhooks.Delivery
	for _, d := range s.index {
		if d.Status == webhooks.StatusPending && d.UpdatedAt.Before(cutoff) && len(out) < limit {
			out = append(out, d)
		}
	}
	return out, nil
}

func (s *resumeStore) Requeue(_ context.Context, d webhooks.Delivery, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.deliveries[d.ID]
	if !ok || cur.Status != webhooks.StatusPending || len(cur.Attempts) != len(d.Attempts) || !cur.UpdatedAt.Equal(d.UpdatedAt) {
		return webhooks.ErrAttemptTaken
	}
	cur.UpdatedAt = now
	s.deliveries[d.ID] = cur
	s.requeued = append(s.requeued, d.ID)
	return nil
}

// snapshot copies the deliveries into the index.
func (s *resumeStore) snapshot() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.index = nil
	for _, d := range s.deliveries {
		s.index = append(s.index, d)
	}
}

// failingQueue refuses every message.
type failingQueue struct{}

func (failingQueue) Send(context.Context, []byte, time.Duration) error {
	return errors.New("queue down")
}

func TestResumerQueuesWhatStoppedMoving(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Millisecond)
	old := now.Add(-webhooks.StallAfter - time.Second)
	attempt := func(n int) webhooks.Attempt { return webhooks.Attempt{Number: n, At: old, StatusCode: 500} }
	deliveries := []webhooks.Delivery{
		{ID: "e1#webhook#a", Status: webhooks.StatusPending, UpdatedAt: old},                                                       // created, never attempted
		{ID: "e2#webhook#a", Status: webhooks.StatusPending, UpdatedAt: old, Attempts: []webhooks.Attempt{attempt(1), attempt(2)}}, // its retry lost
		{ID: "e3#webhook#a", Status: webhooks.StatusPending, UpdatedAt: now.Add(-time.Second)},                                     // on its way
		{ID: "e4#webhook#a", Status: webhooks.StatusDelivered, UpdatedAt: old},
		{ID: "e5#webhook#a", Status: webhooks.StatusPending, UpdatedAt: old}, // moves after the index is read
		{ID: "e6#webhook#a", Status: webhooks.StatusPending, UpdatedAt: old}, // gone after the index is read
	}
	s := &resumeStore{fakeStore: newFakeStore()}
	for _, d := range deliveries {
		d.CompanyID = "co-1"
		s.deliveries[d.ID] = d
	}
	s.snapshot()
	moved := s.deliveries["e5#webhook#a"]
	moved.Attempts, moved.UpdatedAt = []webhooks.Attempt{attempt(1)}, now
	s.deliveries[moved.ID] = moved
	delete(s.deliveries, "e6#webhook#a")

	q := &fakeQueue{}
	r := webhooks.NewResumer(s, q)
	n, err := r.Sweep(context.Background(), now)
	if err != nil || n != 2 {
		t.Fatalf("Sweep = %d, %v; want 2", n, err)
	}
	want := map[string]int{"e1#webhook#a": 1, "e2#webhook#a": 3}
	got := map[string]int{}
	for _, m := range q.take() {
		if m.msg.Kind != webhooks.KindAttempt || m.msg.CompanyID != "co-1" || m.delay != 0 {
			t.Errorf("message %+v", m)
		}
		got[m.msg.DeliveryID] = m.msg.Attempt
	}
	if !maps.Equal(got, want) {
		t.Fatalf("queued %v, want %v", got, want)
	}
	for id := range want {
		if d := s.deliveries[id]; !d.UpdatedAt.Equal(now) {
			t.Errorf("%s moved at %v, want the sweep's time", id, d.UpdatedAt)
		}
	}

	// A sweep at the same time, or one that still reads the old index,
	// queues nothing again: the deliveries moved at the first sweep.
	if n, err := r.Sweep(context.Background(), now); err != nil || n != 0 || len(q.take()) != 0 {
		t.Fatalf("second sweep queued %d, %v", n, err)
	}
	// A minute later, still not moving, they are queued again, with the
	// two that were moving then and have not moved since.
	s.snapshot()
	if n, err := r.Sweep(context.Background(), now.Add(webhooks.StallAfter+time.Millisecond)); err != nil || n != 4 {
		t.Fatalf("sweep a minute later queued %d, %v; want 4", n, err)
	}
	got = map[string]int{}
	for _, m := range q.take() {
		got[m.msg.DeliveryID] = m.msg.Attempt
	}
	if want := map[string]int{"e1#webhook#a": 1, "e2#webhook#a": 3, "e3#webhook#a": 1, "e5#webhook#a": 2}; !maps.Equal(got, want) {
		t.Fatalf("queued %v, want %v", got, want)
	}
}

func TestResumerStopsWhenTheQueueIsDown(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Millisecond)
	s := &resumeStore{fakeStore: newFakeStore()}
	for _, id := range []string{"e1#notify", "e2#notify", "e3#notify"} {
		s.deliveries[id] = webhooks.Delivery{ID: id, CompanyID: "co-1", Status: webhooks.StatusPending, UpdatedAt: now.Add(-time.Hour)}
	}
	s.snapshot()
	n, err := webhooks.NewResumer(s, failingQueue{}).Sweep(context.Background(), now)
	if err == nil || n != 0 || len(s.requeued) != 1 {
		t.Fatalf("Sweep = %d, %v after marking %v; want an error after the first", n, err, s.requeued)
	}
	// The one marked waits for a later sweep; the others are still due.
	s.snapshot()
	q := &fakeQueue{}
	if n, err := webhooks.NewResumer(s, q).Sweep(context.Background(), now.Add(time.Second)); err != nil || n != 2 {
		t.Fatalf("next sweep = %d, %v; want the 2 others", n, err)
	}
	var ids []string
	for _, m := range q.take() {
		ids = append(ids, m.msg.DeliveryID)
	}
	if slices.Contains(ids, s.requeued[0]) {
		t.Fatalf("queued %v: the delivery marked a second ago again", ids)
	}
}
