package store_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/google/uuid"

	"payments/pkg/bulk"
	"payments/pkg/store"
	"payments/pkg/store/storetest"
)

// TestClaimExternalIDs: claims are written many a transaction; those
// another payment holds are returned and the transaction written again
// without them; a claim already the payout's is kept.
func TestClaimExternalIDs(t *testing.T) {
	db := storetest.NewDB(t)
	s := store.NewBulk(db)
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
