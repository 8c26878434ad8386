package waittest_test

import (
	"sync/atomic"
	"testing"
	"time"

	"payments/pkg/waittest"
)

func TestUntil(t *testing.T) {
	var calls atomic.Int32
	waittest.Until(t, time.Second, "the third call", func() bool { return calls.Add(1) == 3 })
	if n := calls.Load(); n != 3 {
		t.Fatalf("cond called %d times, want 3", n)
	}
}

// recorder is a testing.TB that records Fatalf instead of stopping the
// test.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = format
	panic(r)
}

func TestUntilGivesUp(t *testing.T) {
	r := &recorder{TB: t}
	start := time.Now()
	func() {
		defer func() {
			if p := recover(); p != r {
				panic(p)
			}
		}()
		waittest.Until(r, 300*time.Millisecond, "never", func() bool { return false })
	}()
	if r.failed == "" {
		t.Fatal("Until returned without failing")
	}
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Fatalf("gave up after %v, before the timeout", took)
	}
}
