// Package activity is a company's activity log: who changed what, and
// when. The dashboard records each change its people make (the person's
// email), the company's API records each change its key makes (the
// client_id); the dashboard's Activity page reads them back, newest first.
// An entry is never changed or deleted.
package activity

import (
	"context"
	"errors"
	"fmt"
	"time"

	"payments/pkg/ids"
	"payments/pkg/page"
)

// Entry is one change.
type Entry struct {
	// ID is a UUID v7 of At: entries sort by time.
	ID        string
	CompanyID string
	At        time.Time
	// Actor is who made the change: a person's email, or "API key" and
	// the company's client_id.
	Actor string
	// Action says what they did, in words ("Payout made", "Client key
	// rolled").
	Action string
	// Subject is the id of what changed, if it has one.
	Subject string
}

// Store keeps the entries, each in its company's partition.
type Store interface {
	// RecordActivity writes e.
	RecordActivity(ctx context.Context, e Entry) error
	// Activity reads page p of the company's entries, newest first.
	Activity(ctx context.Context, companyID string, p page.Request) (page.Result[Entry], error)
}

// ErrNoStore is a Log built without its store.
var ErrNoStore = errors.New("activity: no store")

// Log records and reads a company's activity.
type Log struct {
	store Store
	now   func() time.Time
}

// NewLog returns a Log over store telling the time by now (time.Now when
// nil).
func NewLog(store Store, now func() time.Time) (*Log, error) {
	if store == nil {
		return nil, ErrNoStore
	}
	if now == nil {
		now = time.Now
	}
	return &Log{store: store, now: now}, nil
}

// KeyActor is the Actor of a change made with the company's API key
// clientID.
func KeyActor(clientID string) string { return "API key " + clientID }

// Record records that actor did action to subject in the company, now.
func (l *Log) Record(ctx context.Context, companyID, actor, action, subject string) error {
	at := l.now().UTC()
	e := Entry{ID: ids.NewV7(at), CompanyID: companyID, At: at, Actor: actor, Action: action, Subject: subject}
	if err := l.store.RecordActivity(ctx, e); err != nil {
		return fmt.Errorf("activity: record %q: %w", action, err)
	}
	return nil
}

// List reads page p of the company's activity, newest first.
func (l *Log) List(ctx context.Context, companyID string, p page.Request) (page.Result[Entry], error) {
	return l.store.Activity(ctx, companyID, p)
}
