// Package deadline keeps an invocation's answer inside its own time limit.
//
// Lambda stops a function at its timeout, and API Gateway then answers the
// client itself, without our envelope: a client that committed money and
// sees that answer cannot know it did, and may send the request again. So
// an HTTP function does its work under a context that ends Reserve before
// the invocation's own deadline (Work), and what must still happen once
// that work is over — storing the answer of an Idempotency-Key, telling
// what a commit left — runs under Answer, which ends just before the
// invocation's deadline. A write that commits money is not started when
// less than CommitTime is left of the work (Enough): it would be cut off
// with its outcome unknown.
package deadline

import (
	"context"
	"time"
)

const (
	// MinReserve and MaxReserve bound the time kept to answer.
	MinReserve = 200 * time.Millisecond
	MaxReserve = 2 * time.Second
	// CommitTime is the least time a write that commits money is started
	// with.
	CommitTime = 500 * time.Millisecond
	// margin is what Answer leaves before the invocation's deadline: the
	// response's own way out.
	margin = 50 * time.Millisecond
)

// Reserve returns the time an invocation of length d keeps to answer: a
// fifth of it, within MinReserve and MaxReserve, never more than half.
func Reserve(d time.Duration) time.Duration {
	return min(max(d/5, MinReserve), MaxReserve, d/2)
}

// invocationKey is the context key of the invocation's own deadline.
type invocationKey struct{}

// Work returns ctx for an invocation's work: its deadline moved Reserve
// earlier, the invocation's own kept for Answer. A ctx without a deadline
// is returned as it is.
func Work(ctx context.Context) (context.Context, context.CancelFunc) {
	end, ok := ctx.Deadline()
	if !ok {
		return ctx, func() {}
	}
	ctx = context.WithValue(ctx, invocationKey{}, end)
	return context.WithDeadline(ctx, end.Add(-Reserve(time.Until(end))))
}

// Answer returns a context for what must be done once the work under ctx
// is over, even when ctx has ended: not cancelled with ctx, it ends just
// before the invocation's own deadline, or after fallback when ctx has
// none.
func Answer(ctx context.Context, fallback time.Duration) (context.Context, context.CancelFunc) {
	end, ok := ctx.Value(invocationKey{}).(time.Time)
	if !ok {
		end, ok = ctx.Deadline()
	}
	detached := context.WithoutCancel(ctx)
	if !ok {
		return context.WithTimeout(detached, fallback)
	}
	return context.WithDeadline(detached, end.Add(-margin))
}

// Enough reports whether ctx leaves at least need before its deadline;
// true when it has none.
func Enough(ctx context.Context, need time.Duration) bool {
	end, ok := ctx.Deadline()
	return !ok || time.Until(end) >= need
}
