package moneystore_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"payments/pkg/bulk"
	"payments/pkg/store/moneystore"
	"payments/pkg/store/storetest"
	"payments/pkg/wallets"
)

// TestClaimExternalIDs: claims are written many a transaction; those
// another payment holds are returned and the transaction written again
// without them; a claim already the payout's is kept.
func TestClaimExternalIDs(t *testing.T) {
	db := storetest.NewDB(t)
	s := moneystore.NewBulk(db)
	ctx := context.Background()
	company := uuid.NewString()
	claims := make([]bulk.Claim, 25) // three transactions of up to ten on DynamoDB Local
	for i := range claims {
		claims[i] = bulk.Claim{ExternalID: fmt.Sprintf("pay-%02d", i), TransactionID: uuid.NewString()}
	}
	// Claims 3 and 14 are another payout's; claim 20 is already its own.
	before := []bulk.Claim{{ExternalID: "pay-03", TransactionID: uuid.NewString()}, {ExternalID: "pay-14", TransactionID: uuid.NewString()}, claims[20]}
	if taken, err := s.ClaimExternalIDs(ctx, company, before); err != nil || len(taken) != 0 {
		t.Fatalf("claims before: %v %v", taken, err)
	}
	taken, err := s.ClaimExternalIDs(ctx, company, claims)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{claims[3].TransactionID, claims[14].TransactionID}
	slices.Sort(want)
	if got := slices.Sorted(maps.Keys(taken)); !slices.Equal(got, want) {
		t.Fatalf("taken %v, want %v", got, want)
	}
	ids := make([]string, len(claims))
	for i, c := range claims {
		ids[i] = c.ExternalID
	}
	held, err := s.TakenExternalIDs(ctx, company, ids)
	if err != nil || len(held) != len(claims) {
		t.Fatalf("claims held: %d %v", len(held), err)
	}
	// Again, as a chunk written again: nothing is taken that was its own.
	if again, err := s.ClaimExternalIDs(ctx, company, claims); err != nil || len(again) != 2 {
		t.Fatalf("again: %v %v", again, err)
	}
}

// TestChunkLease: one run at a time holds a chunk; another takes it once
// the lease has run out or been given back, and only the holder finishes
// it, once.
func TestChunkLease(t *testing.T) {
	db := storetest.NewDB(t)
	s := moneystore.NewBulk(db)
	ctx := context.Background()
	now := time.Now().UTC()
	b := bulk.Batch{ID: uuid.NewString(), CompanyID: uuid.NewString(), Mode: bulk.ModePartial, ItemCount: 1, RejectedCount: 1,
		Chunks: 1, CreatedAt: now, UpdatedAt: now}
	c := bulk.Chunk{CompanyID: b.CompanyID, BatchID: b.ID, Rows: []bulk.Row{{Input: bulk.Input{Row: 1},
		Rejection: &bulk.Rejection{Code: "INVALID_FIELD", Field: "amount", Message: "amount: is required"}}}}
	nothing, err := wallets.NewPosting(b.CompanyID, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateBatch(ctx, b, []bulk.Chunk{c}, nothing); err != nil {
		t.Fatal(err)
	}
	lease := func(id string, at time.Time) error {
		return s.LeaseChunk(ctx, b.CompanyID, b.ID, 0, id, at, at.Add(time.Minute))
	}
	steps := []struct {
		name string
		do   func() error
		want error
	}{
		{"a first run takes it", func() error { return lease("a", now) }, nil},
		{"a second run while it holds", func() error { return lease("b", now.Add(30*time.Second)) }, bulk.ErrChanged},
		{"the second once it ran out", func() error { return lease("b", now.Add(2*time.Minute)) }, nil},
		{"the first cannot finish", func() error {
			c.Lease = "a"
			return s.FinishChunk(ctx, b, c, nil, nil, now)
		}, bulk.ErrChanged},
		{"the first's release leaves it", func() error { return s.ReleaseChunk(ctx, b.CompanyID, b.ID, 0, "a") }, nil},
		{"a third while the second holds", func() error { return lease("c", now.Add(2*time.Minute)) }, bulk.ErrChanged},
		{"the second finishes", func() error {
			c.Lease = "b"
			return s.FinishChunk(ctx, b, c, nil, nil, now)
		}, nil},
		{"a done chunk is never taken", func() error { return lease("d", now.Add(time.Hour)) }, bulk.ErrChanged},
	}
	for _, st := range steps {
		if err := st.do(); !errors.Is(err, st.want) || (st.want == nil && err != nil) {
			t.Fatalf("%s: %v, want %v", st.name, err, st.want)
		}
	}
	got, err := s.GetChunk(ctx, b.CompanyID, b.ID, 0)
	if err != nil || !got.Done {
		t.Fatalf("chunk %+v %v", got, err)
	}
	if bb, err := s.GetBatch(ctx, b.CompanyID, b.ID); err != nil || bb.ChunksDone != 1 {
		t.Fatalf("batch %+v %v", bb, err)
	}
}
