package queuetest

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// take receives up to max of q's receivable messages, moving to the
// dead-letter queue those received maxReceiveCount times already, and
// returns them with the time the next one becomes receivable (zero when
// none waits).
func (s *sqsServer) take(q *memQueue, max int, visibility *int, now time.Time) ([]map[string]any, time.Time) {
	vis, _ := strconv.Atoi(q.attrs["VisibilityTimeout"])
	if visibility != nil {
		vis = *visibility
	}
	dlq, maxReceives := s.redrive(q)
	var out []map[string]any
	var next time.Time
	kept := q.msgs[:0]
	for _, m := range q.msgs {
		if m.visible.After(now) || len(out) == max {
			if m.visible.After(now) && (next.IsZero() || m.visible.Before(next)) {
				next = m.visible
			}
			kept = append(kept, m)
			continue
		}
		if dlq != nil && maxReceives > 0 && m.receives >= maxReceives {
			m.visible = now
			dlq.msgs = append(dlq.msgs, m)
			continue
		}
		m.receives++
		if !m.received {
			m.received, m.firstReceive = true, now
		}
		m.handles = append(m.handles, randomID())
		m.visible = now.Add(time.Duration(vis) * time.Second)
		attrs := map[string]string{
			"ApproximateReceiveCount":          strconv.Itoa(m.receives),
			"SentTimestamp":                    strconv.FormatInt(m.sent.UnixMilli(), 10),
			"ApproximateFirstReceiveTimestamp": strconv.FormatInt(m.firstReceive.UnixMilli(), 10),
			"SenderId":                         sqsAccount,
		}
		if m.trace != "" {
			attrs["AWSTraceHeader"] = m.trace
		}
		msg := map[string]any{"MessageId": m.id, "ReceiptHandle": m.handles[len(m.handles)-1], "Body": m.body, "MD5OfBody": md5Hex(m.body), "Attributes": attrs}
		if len(m.attrs) > 0 && string(m.attrs) != "null" {
			msg["MessageAttributes"] = m.attrs
		}
		out = append(out, msg)
		kept = append(kept, m)
	}
	q.msgs = kept
	return out, next
}

// redrive returns q's dead-letter queue and maxReceiveCount (nil, 0
// without a RedrivePolicy).
func (s *sqsServer) redrive(q *memQueue) (*memQueue, int) {
	var p struct {
		DeadLetterTargetArn string          `json:"deadLetterTargetArn"`
		MaxReceiveCount     json.RawMessage `json:"maxReceiveCount"`
	}
	if json.Unmarshal([]byte(q.attrs["RedrivePolicy"]), &p) != nil {
		return nil, 0
	}
	n, _ := strconv.Atoi(strings.Trim(string(p.MaxReceiveCount), `"`))
	name := p.DeadLetterTargetArn[strings.LastIndex(p.DeadLetterTargetArn, ":")+1:]
	return s.queues[name], n
}

// attributes returns q's attributes with its message counts at now.
func (q *memQueue) attributes(now time.Time) map[string]string {
	out := map[string]string{}
	for k, v := range q.attrs {
		out[k] = v
	}
	var visible, inFlight, delayed int
	for _, m := range q.msgs {
		switch {
		case !m.visible.After(now):
			visible++
		case m.received:
			inFlight++
		default:
			delayed++
		}
	}
	out["ApproximateNumberOfMessages"] = strconv.Itoa(visible)
	out["ApproximateNumberOfMessagesNotVisible"] = strconv.Itoa(inFlight)
	out["ApproximateNumberOfMessagesDelayed"] = strconv.Itoa(delayed)
	return out
}

// byHandle returns the index of the message of receipt handle h (of its
// latest receive only when latest), -1 when there is none.
func (q *memQueue) byHandle(h string, latest bool) int {
	for i, m := range q.msgs {
		for j, mh := range m.handles {
			if mh == h && (!latest || j == len(m.handles)-1) {
				return i
			}
		}
	}
	return -1
}
