package deadline

import (
	"context"
	"testing"
	"time"
)

func TestReserve(t *testing.T) {
	for _, c := range []struct {
		invocation, want time.Duration
	}{
		{29 * time.Second, MaxReserve},
		{15 * time.Second, MaxReserve},
		{3 * time.Second, 600 * time.Millisecond},
		{time.Second, MinReserve},
		{300 * time.Millisecond, 150 * time.Millisecond}, // never more than half
		{0, 0},
	} {
		if got := Reserve(c.invocation); got != c.want {
			t.Errorf("Reserve(%v) = %v, want %v", c.invocation, got, c.want)
		}
	}
}

// TestWorkThenAnswer: the work ends its reserve before the invocation;
// the answer outlives the work, not the invocation.
func TestWorkThenAnswer(t *testing.T) {
	invocation, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	end, _ := invocation.Deadline()
	work, stop := Work(invocation)
	workEnd, ok := work.Deadline()
	if !ok || end.Sub(workEnd) < MaxReserve-10*time.Millisecond || end.Sub(workEnd) > MaxReserve {
		t.Errorf("the work ends %v before the invocation, want %v", end.Sub(workEnd), MaxReserve)
	}
	stop() // the work is over
	answer, done := Answer(work, time.Minute)
	defer done()
	if answer.Err() != nil {
		t.Fatalf("the answer's context ended with the work: %v", answer.Err())
	}
	if answerEnd, _ := answer.Deadline(); answerEnd.After(end) || !answerEnd.After(workEnd) {
		t.Errorf("the answer ends at %v: after the work (%v), not after the invocation (%v)", answerEnd, workEnd, end)
	}
	if !Enough(invocation, time.Second) || Enough(invocation, time.Minute) {
		t.Error("Enough does not read the time left")
	}
}

// TestNoDeadline: without a deadline, the work is ctx itself and the
// answer has the fallback.
func TestNoDeadline(t *testing.T) {
	ctx := context.Background()
	if work, stop := Work(ctx); work != ctx {
		t.Error("Work changed a context without a deadline")
	} else {
		stop()
	}
	answer, done := Answer(ctx, time.Minute)
	defer done()
	if end, ok := answer.Deadline(); !ok || time.Until(end) > time.Minute {
		t.Errorf("the answer's deadline %v, want the fallback", end)
	}
	if !Enough(ctx, time.Hour) {
		t.Error("no deadline is not enough time")
	}
}
