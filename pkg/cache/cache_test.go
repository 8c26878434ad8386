package cache_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"payments/pkg/cache"
)

type clock struct{ t time.Time }

func (c *clock) Now() time.Time { return c.t }

func TestCache(t *testing.T) {
	tests := []struct {
		name string
		ttl  time.Duration
		// run acts on c, whose clock is clk, after "a" was read as "v1";
		// the store now holds "v2".
		run   func(c *cache.Cache[string], clk *clock)
		loads int // reads of the store, the first included
		want  string
	}{
		{"fresh: from the cache", time.Minute, func(*cache.Cache[string], *clock) {}, 1, "v1"},
		{"just before the ttl: from the cache", time.Minute, func(_ *cache.Cache[string], clk *clock) {
			clk.t = clk.t.Add(time.Minute - time.Millisecond)
		}, 1, "v1"},
		{"at the ttl: read again", time.Minute, func(_ *cache.Cache[string], clk *clock) {
			clk.t = clk.t.Add(time.Minute)
		}, 2, "v2"},
		{"forgotten: read again", time.Minute, func(c *cache.Cache[string], _ *clock) { c.Forget("a") }, 2, "v2"},
		{"no ttl: kept", 0, func(_ *cache.Cache[string], clk *clock) { clk.t = clk.t.Add(24 * time.Hour) }, 1, "v1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := &clock{t: time.Unix(1_700_000_000, 0)}
			c := cache.New[string](tt.ttl, clk.Now)
			value, loads := "v1", 0
			load := func(context.Context) (string, error) { loads++; return value, nil }
			if v, err := c.Read(context.Background(), "a", load); err != nil || v != "v1" {
				t.Fatalf("first read %q %v", v, err)
			}
			value = "v2"
			tt.run(c, clk)
			v, err := c.Read(context.Background(), "a", load)
			if err != nil || v != tt.want || loads != tt.loads {
				t.Fatalf("read %q %v after %d loads, want %q after %d", v, err, loads, tt.want, tt.loads)
			}
		})
	}
}

// TestReadRacingForget: a value read while the key was forgotten (the
// console changed it meanwhile) is returned but not kept.
func TestReadRacingForget(t *testing.T) {
	clk := &clock{t: time.Unix(1_700_000_000, 0)}
	c := cache.New[string](time.Minute, clk.Now)
	v, err := c.Read(context.Background(), "a", func(context.Context) (string, error) {
		c.Forget("a")
		return "old", nil
	})
	if err != nil || v != "old" {
		t.Fatalf("read %q %v", v, err)
	}
	if got, ok := c.Get("a"); ok {
		t.Fatalf("kept %q read across a Forget", got)
	}
}

func TestReadErrorIsNotKept(t *testing.T) {
	c := cache.New[string](time.Minute, time.Now)
	boom := errors.New("boom")
	if _, err := c.Read(context.Background(), "a", func(context.Context) (string, error) { return "", boom }); !errors.Is(err, boom) {
		t.Fatalf("error %v", err)
	}
	if _, ok := c.Get("a"); ok {
		t.Fatal("kept a failed read")
	}
}

// TestSlowReadAgesFromItsStart: a value is as old as the read that brought
// it began, so a slow read does not stretch Staleness.
func TestSlowReadAgesFromItsStart(t *testing.T) {
	clk := &clock{t: time.Unix(1_700_000_000, 0)}
	c := cache.New[string](time.Minute, clk.Now)
	slow := func(context.Context) (string, error) { clk.t = clk.t.Add(40 * time.Second); return "v1", nil }
	if _, err := c.Read(context.Background(), "a", slow); err != nil {
		t.Fatal(err)
	}
	clk.t = clk.t.Add(20 * time.Second) // 60 s after the read began
	if v, ok := c.Get("a"); ok {
		t.Errorf("got %q 60 s after its read began, want it expired", v)
	}
}
