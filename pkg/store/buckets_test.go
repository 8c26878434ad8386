package store_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/limits"
	"payments/pkg/store"
	"payments/pkg/store/schema"
	"payments/pkg/store/storetest"
)

// TestTokenBucketRefill walks one company's buckets over an injected clock:
// a burst is admitted at once, the bucket refills at its rate up to its
// burst and no further, a refused request takes nothing and is told the
// wait until the next token, and another class or company has a bucket of
// its own. The item lives in the company's partition and expires once the
// bucket would be full again.
func TestTokenBucketRefill(t *testing.T) {
	db := storetest.NewDB(t)
	b := store.NewTokenBuckets(db)
	ctx := context.Background()
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	lim := limits.Limit{Rate: 2, Burst: 3} // a token every 500 ms

	steps := []struct {
		name          string
		company       string
		class         limits.Class
		at            time.Duration // after t0
		want          bool
		wantRemaining int
		wantWait      time.Duration
	}{
		{"first of the burst", "co_a", limits.Money, 0, true, 2, 0},
		{"second", "co_a", limits.Money, 0, true, 1, 0},
		{"third", "co_a", limits.Money, 0, true, 0, 0},
		{"empty: wait for the next token", "co_a", limits.Money, 0, false, 0, 500 * time.Millisecond},
		{"another class is not drawn on", "co_a", limits.Read, 0, true, 2, 0},
		{"another company is not drawn on", "co_b", limits.Money, 0, true, 2, 0},
		{"refused requests take nothing", "co_a", limits.Money, 499 * time.Millisecond, false, 0, time.Millisecond},
		{"one token refilled", "co_a", limits.Money, 500 * time.Millisecond, true, 0, 0},
		{"a second and a half refills three", "co_a", limits.Money, 2 * time.Second, true, 2, 0},
		{"a long pause refills no more than the burst", "co_a", limits.Money, time.Hour, true, 2, 0},
		{"a clock behind the last writer's takes from what it left", "co_a", limits.Money, time.Hour - 200*time.Millisecond, true, 0, 0},
		{"and finds it empty", "co_a", limits.Money, time.Hour - 200*time.Millisecond, false, 0, 200 * time.Millisecond},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			d, err := b.Take(ctx, s.company, s.class, lim, t0.Add(s.at))
			if err != nil {
				t.Fatal(err)
			}
			want := limits.Decision{Allowed: s.want, Remaining: s.wantRemaining, RetryAfter: s.wantWait}
			if d != want {
				t.Fatalf("Take = %+v, want %+v", d, want)
			}
		})
	}

	out, err := db.Client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(db.Table),
		Key: map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: schema.CompanyPK("co_a")},
			"SK": &types.AttributeValueMemberS{Value: schema.TokenBucketSK("money")},
		},
	})
	if err != nil || out.Item == nil {
		t.Fatalf("read the bucket item: %v, %v", out, err)
	}
	// The last write, at t0+1h-200ms, keeps the item a minute past the
	// latest the bucket can be full again: its burst's 1.5 s later.
	exp, ok := out.Item[schema.AttrExpiresAt].(*types.AttributeValueMemberN)
	if want := t0.Add(time.Hour - 200*time.Millisecond + 1500*time.Millisecond + time.Minute).Unix(); !ok || exp.Value != strconv.FormatInt(want, 10) {
		t.Fatalf("expires_at = %v, want %d", out.Item[schema.AttrExpiresAt], want)
	}
}

// TestTokenBucketConcurrent: takers racing on one bucket from many
// goroutines (as many Lambda instances would) admit exactly its burst,
// never more, and refuse the others with the wait for the next token.
func TestTokenBucketConcurrent(t *testing.T) {
	db := storetest.NewDB(t)
	b := store.NewTokenBuckets(db)
	ctx := context.Background()
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	lim := limits.Limit{Rate: 1, Burst: 10}

	var admitted, refused atomic.Int32
	var wg sync.WaitGroup
	for range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := b.Take(ctx, "co_race", limits.Money, lim, now)
			switch {
			case err != nil:
				t.Errorf("Take: %v", err)
			case d.Allowed:
				admitted.Add(1)
			default:
				refused.Add(1)
				if d.RetryAfter <= 0 || d.RetryAfter > time.Second {
					t.Errorf("RetryAfter = %v, want within (0, 1s]", d.RetryAfter)
				}
			}
		}()
	}
	wg.Wait()
	if admitted.Load() != int32(lim.Burst) || refused.Load() != 20 {
		t.Fatalf("admitted %d, refused %d; want %d and 20", admitted.Load(), refused.Load(), lim.Burst)
	}
	if d, err := b.Take(ctx, "co_race", limits.Money, lim, now); err != nil || d.Allowed {
		t.Fatalf("after the race: %+v, %v; want refused", d, err)
	}
}

// TestTokenBucketRefusesABadLimit: a limit below 1 is an error, never a
// bucket that admits everything or nothing.
func TestTokenBucketRefusesABadLimit(t *testing.T) {
	b := store.NewTokenBuckets(storetest.NewDB(t))
	for _, l := range []limits.Limit{{Rate: 0, Burst: 5}, {Rate: 5, Burst: 0}} {
		if _, err := b.Take(context.Background(), "co_a", limits.Read, l, time.Now()); err == nil {
			t.Errorf("Take with %v: no error", l)
		}
	}
}
