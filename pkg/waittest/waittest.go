// Package waittest waits, in tests, for a condition that work running
// elsewhere (a goroutine, a queue consumer, another process) makes true,
// instead of sleeping for a guessed time.
package waittest

import (
	"testing"
	"time"
)

// Interval is how often Until checks its condition.
const Interval = 100 * time.Millisecond

// Until calls cond until it returns true, and fails t when it has not
// within timeout; what names the condition in the failure ("the message
// reaches the DLQ").
func Until(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up after %v waiting until %s", timeout, what)
		}
		time.Sleep(Interval)
	}
}
