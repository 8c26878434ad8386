package issuersandbox

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// Notice is a notification the sandbox network keeps until we
// acknowledge it (store and forward): its body as delivered, how many
// times it was delivered again, and when it is due again. One kept due
// later than now is a delivery scheduled then (a dispute's decision,
// sandbox_disputes.go): Redeliver delivers it first once due.
type Notice struct {
	ID       string
	Body     []byte
	Attempts int
	Due      time.Time
}

// NoticeStore keeps the sandbox network's unacknowledged notifications
// (a Store is one).
type NoticeStore interface {
	// KeepNotice keeps n until AckNotice forgets it.
	KeepNotice(ctx context.Context, n Notice) error
	// DueNotices returns up to limit kept notifications due at or before
	// now, the longest due first.
	DueNotices(ctx context.Context, now time.Time, limit int) ([]Notice, error)
	// DelayNotice records notification id's attempts and when it is due
	// again; nothing when it was acknowledged meanwhile.
	DelayNotice(ctx context.Context, id string, attempts int, due time.Time) error
}

// RedeliverAfter is how long the sandbox network waits for our
// acknowledgement of a notification before it delivers it again: longer
// than the issuer-events queue takes to apply one, retries included. Each
// further delivery waits twice as long, up to MaxRedeliverWait.
const RedeliverAfter = 2 * time.Minute

// MaxRedeliverWait bounds the wait between two deliveries of one
// notification: a network keeps trying for as long as it is not
// acknowledged.
const MaxRedeliverWait = 2 * time.Hour

// redeliverBatch bounds the notifications one Redeliver delivers again.
const redeliverBatch = 100

// redeliverWait returns how long the network waits after the delivery
// that makes attempts.
func redeliverWait(attempts int) time.Duration {
	wait := RedeliverAfter
	for range attempts {
		if wait >= MaxRedeliverWait/2 {
			return MaxRedeliverWait
		}
		wait *= 2
	}
	return wait
}

// Redeliver delivers again, once each, the notifications we have not
// acknowledged that are due at now, as a card network does with what it
// stored and forwarded, and returns how many. It runs on the sweeper's
// schedule in sandbox mode. A delivery that fails waits its turn again.
func (n *Network) Redeliver(ctx context.Context, now time.Time) (int, error) {
	if n.Notices == nil {
		return 0, nil
	}
	due, err := n.Notices.DueNotices(ctx, now, redeliverBatch)
	if err != nil {
		return 0, fmt.Errorf("issuer: read the notifications due again: %w", err)
	}
	sent := 0
	for _, no := range due {
		attempts := no.Attempts + 1
		if err := n.Notices.DelayNotice(ctx, no.ID, attempts, now.Add(redeliverWait(attempts))); err != nil {
			return sent, fmt.Errorf("issuer: delay notification %s: %w", no.ID, err)
		}
		if err := n.Deliver(ctx, no.Body); err != nil {
			slog.WarnContext(ctx, "the card network could not deliver a notification again", "event_id", no.ID, "error", err)
			continue
		}
		slog.InfoContext(ctx, "the card network delivered an unacknowledged notification again", "event_id", no.ID, "attempts", attempts)
		sent++
	}
	return sent, nil
}
