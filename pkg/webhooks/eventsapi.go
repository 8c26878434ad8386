package webhooks

import (
	"context"
	"strings"
	"time"

	"payments/pkg/events"
	"payments/pkg/field"
	"payments/pkg/ids"
	"payments/pkg/page"
)

// The Events API, our addition to the spec: the company's events as they
// were delivered, kept events.Retention whether or not they were.
//
//	GET /events       the company's events, newest first
//	GET /events/{id}  one event

// EventQuery filters GET /events. Zero fields do not filter.
type EventQuery struct {
	Kind   events.Kind // one kind
	Prefix string      // the kinds that start with it, dot included ("card.")
	From   time.Time   // inclusive
	To     time.Time   // exclusive
}

// Events returns page p of the company's events that match q, newest
// first.
func (l *Log) Events(ctx context.Context, companyID string, q EventQuery, p page.Request) (page.Result[events.Event], error) {
	return l.store.Events(ctx, companyID, q, p)
}

// Event returns one of the company's events; another company's event, or
// an id that is not a UUID, is events.ErrNotFound.
func (l *Log) Event(ctx context.Context, companyID, eventID string) (events.Event, error) {
	if !ids.IsUUID(eventID) {
		return events.Event{}, events.ErrNotFound
	}
	return l.store.Event(ctx, companyID, eventID)
}

// ParseType reads the type filter of GET /events into q: a kind of the
// catalogue, or a prefix of kinds ending in ".*", such as card.*, that some
// kind of the catalogue starts with; "" does not filter. Anything else is
// a field error naming type.
func ParseType(s string) (EventQuery, error) {
	var q EventQuery
	if s == "" {
		return q, nil
	}
	switch prefix, ok := strings.CutSuffix(s, "*"); {
	case !ok && events.Kind(s).Known():
		q.Kind = events.Kind(s)
	case ok && knownPrefix(prefix):
		q.Prefix = prefix
	default:
		return q, field.Invalid("type", "must be an event name of the catalogue (docs/events.md) or a prefix of names ending in .*, such as card.*")
	}
	return q, nil
}

// knownPrefix reports whether p ends with a dot after a name and some kind
// of the catalogue starts with it.
func knownPrefix(p string) bool {
	if len(p) < 2 || !strings.HasSuffix(p, ".") {
		return false
	}
	for _, k := range events.Kinds() {
		if strings.HasPrefix(string(k), p) {
			return true
		}
	}
	return false
}
