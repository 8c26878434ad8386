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

	"payments/pkg/store"
	"payments/pkg/store/schema"
	"payments/pkg/store/storetest"
)

func TestRateLimiterConcurrent(t *testing.T) {
	db := storetest.NewDB(t)
	lim := store.NewRateLimiter(db, "token", 10, time.Minute)
	ctx := context.Background()
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

	var admitted, refused atomic.Int32
	var wg sync.WaitGroup
	for range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, wait, err := lim.Allow(ctx, "203.0.113.7", now)
			if err != nil {
				t.Errorf("Allow: %v", err)
				return
			}
			if ok {
				admitted.Add(1)
				return
			}
			refused.Add(1)
			if wait <= 0 || wait > time.Minute {
				t.Errorf("retryAfter = %v, want within (0, 1m]", wait)
			}
		}()
	}
	wg.Wait()
	if admitted.Load() != 10 || refused.Load() != 20 {
		t.Fatalf("admitted %d, refused %d; want 10 and 20", admitted.Load(), refused.Load())
	}

	tests := []struct {
		name    string
		ip      string
		at      time.Time
		want    bool
		maxWait time.Duration
	}{
		{"same IP still in window", "203.0.113.7", now.Add(30 * time.Second), false, 30 * time.Second},
		{"other IP is independent", "198.51.100.1", now.Add(30 * time.Second), true, 0},
		{"same IP after the window", "203.0.113.7", now.Add(61 * time.Second), true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, wait, err := lim.Allow(ctx, tt.ip, tt.at)
			if err != nil {
				t.Fatal(err)
			}
			if ok != tt.want {
				t.Fatalf("allowed = %v, want %v", ok, tt.want)
			}
			if !ok && (wait <= 0 || wait > tt.maxWait) {
				t.Fatalf("retryAfter = %v, want within (0, %v]", wait, tt.maxWait)
			}
		})
	}
}

func TestRateLimiterSlidingWindow(t *testing.T) {
	db := storetest.NewDB(t)
	lim := store.NewRateLimiter(db, "token", 3, time.Minute)
	ctx := context.Background()
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

	steps := []struct {
		name     string
		at       time.Duration // after t0
		want     bool
		wantWait time.Duration
	}{
		{"first", 0, true, 0},
		{"second", 10 * time.Second, true, 0},
		{"third", 20 * time.Second, true, 0},
		{"fourth refused until the first leaves", 30 * time.Second, false, 30 * time.Second},
		{"refused requests do not count", 59 * time.Second, false, time.Second},
		{"first left the window", 60 * time.Second, true, 0},
		{"full again until the second leaves", 61 * time.Second, false, 9 * time.Second},
		{"second left the window", 70 * time.Second, true, 0},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			ok, wait, err := lim.Allow(ctx, "192.0.2.1", t0.Add(s.at))
			if err != nil {
				t.Fatal(err)
			}
			if ok != s.want || wait != s.wantWait {
				t.Fatalf("Allow = %v, %v; want %v, %v", ok, wait, s.want, s.wantWait)
			}
		})
	}

	out, err := db.Client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(db.Table),
		Key: map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: schema.RateLimitPK("token", "192.0.2.1")},
			"SK": &types.AttributeValueMemberS{Value: schema.RateLimitSK},
		},
	})
	if err != nil || out.Item == nil {
		t.Fatalf("read window item: %v, %v", out, err)
	}
	exp, ok := out.Item[schema.AttrExpiresAt].(*types.AttributeValueMemberN)
	if want := t0.Add(70*time.Second + 2*time.Minute).Unix(); !ok || exp.Value != strconv.FormatInt(want, 10) {
		t.Fatalf("expires_at = %v, want %d", out.Item[schema.AttrExpiresAt], want)
	}
}
