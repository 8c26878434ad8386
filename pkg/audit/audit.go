// Package audit is the operators' audit trail: every change made through
// the operator console (the admin API), by whom, to what, when and from
// where. A change is recorded twice: when it is asked for, before anything
// is done (a change whose record cannot be written is not made), and when
// it is answered, with the outcome. Records are only ever added: the trail
// keeps its own table, where no function may update or delete an item
// (docs/security.md, "The audit trail").
package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"payments/pkg/field"
	"payments/pkg/ids"
	"payments/pkg/page"
)

// The phases of a change: each has one record of each.
const (
	// Requested is the record written before the change is made.
	Requested = "REQUESTED"
	// Answered is the record written once the change is answered, with
	// its status.
	Answered = "ANSWERED"
)

// Record is one record of the trail.
type Record struct {
	// ID is a UUID v7 of At: records sort by time.
	ID string
	At time.Time
	// RequestID joins the two records of one change (the API's request id).
	RequestID string
	// Phase is Requested or Answered.
	Phase string
	// Operator is who made the change: the IAM principal's ARN of an API
	// caller, or the credential that admitted them where no IAM runs
	// ("admin-api-key", locally).
	Operator string
	// Action is the route of the change: "POST /admin/wallets/{id}/credit".
	Action string
	// Targets are the ids the route names, by the name of their wildcard
	// ("id" → the wallet's id).
	Targets map[string]string
	// CompanyID is the company the change concerns, where known: the
	// route's company or the answer's company_id.
	CompanyID string
	// Request is the request's JSON body, Answer the answer's data (on the
	// Answered record), each with every secret withheld (Withhold).
	Request, Answer json.RawMessage
	// Status is the answer's HTTP status (on the Answered record).
	Status int
	// SourceIP and UserAgent are where the change came from.
	SourceIP, UserAgent string
}

// Filter narrows a listing of the trail; a zero field matches all.
type Filter struct {
	Operator  string
	CompanyID string
	Action    string
	// From and To bound At: From ≤ At < To.
	From, To time.Time
}

// Store keeps the trail.
type Store interface {
	// PutRecord adds r, refusing to replace a record of the same id.
	PutRecord(ctx context.Context, r Record) error
	// Records reads page p of the records that match f, newest first.
	Records(ctx context.Context, f Filter, p page.Request) (page.Result[Record], error)
}

// ErrNoStore is a Trail built without its store.
var ErrNoStore = errors.New("audit: no store")

// ErrUnavailable is a record that could not be written: the change it
// records is not made.
var ErrUnavailable = errors.New("audit: the audit trail cannot be written")

// Trail records and reads the operators' changes.
type Trail struct {
	store Store
	now   func() time.Time
}

// NewTrail returns a Trail over store telling the time by now.
func NewTrail(store Store, now func() time.Time) (*Trail, error) {
	if store == nil {
		return nil, ErrNoStore
	}
	if now == nil {
		now = time.Now
	}
	return &Trail{store: store, now: now}, nil
}

// Record writes r, stamped now with a new id; a failure is ErrUnavailable.
func (t *Trail) Record(ctx context.Context, r Record) error {
	r.At = t.now().UTC()
	r.ID = ids.NewV7(r.At)
	if err := t.store.PutRecord(ctx, r); err != nil {
		return fmt.Errorf("%w: %s %s: %w", ErrUnavailable, r.Phase, r.Action, err)
	}
	return nil
}

// List reads page p of the records that match f, newest first. f.To must
// not precede f.From.
func (t *Trail) List(ctx context.Context, f Filter, p page.Request) (page.Result[Record], error) {
	if !f.From.IsZero() && !f.To.IsZero() && f.To.Before(f.From) {
		return page.Result[Record]{}, field.Invalid("to", "must not be before from")
	}
	return t.store.Records(ctx, f, p)
}

// Withheld stands in a record for a secret's value.
const Withheld = "[withheld]"

// Withhold returns the JSON document doc with the value of every member
// whose name speaks of a secret (secretName) replaced by Withheld, at any depth; what is not a JSON
// document is kept as a JSON string of at most 1 KiB, and nothing is
// nil.
func Withhold(doc []byte) json.RawMessage {
	if len(strings.TrimSpace(string(doc))) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		s := string(doc)
		if len(s) > 1024 {
			s = s[:1024]
		}
		b, _ := json.Marshal(s)
		return b
	}
	b, err := json.Marshal(withhold(v))
	if err != nil {
		return nil
	}
	return b
}

func withhold(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, member := range v {
			if secretName(k) {
				v[k] = Withheld
			} else {
				v[k] = withhold(member)
			}
		}
	case []any:
		for i := range v {
			v[i] = withhold(v[i])
		}
	}
	return v
}

// secretName reports whether a member's name speaks of a secret: it
// contains secret, password, token or cvc, is or ends in key, or names a
// card's number.
func secretName(name string) bool {
	n := strings.ToLower(name)
	for _, word := range []string{"secret", "password", "token", "cvc"} {
		if strings.Contains(n, word) {
			return true
		}
	}
	return n == "key" || strings.HasSuffix(n, "_key") || n == "number" || n == "card_number" || n == "pan"
}
