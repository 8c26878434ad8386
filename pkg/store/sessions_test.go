package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"payments/pkg/identity"
	"payments/pkg/sessions"
	"payments/pkg/store"
	"payments/pkg/store/schema"
	"payments/pkg/store/storetest"
)

// TestDashboardSessions writes a session, reads it back in its company's
// partition with its TTL, finds it not from another company, and deletes
// it (twice: the second is no error).
func TestDashboardSessions(t *testing.T) {
	db := storetest.NewDB(t)
	s := store.NewSessions(db)
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	in := sessions.Session{ID: "s1", CompanyID: "c1", Subject: "sub-1", Email: "ada@example.com", Role: identity.Finance,
		Created: t0, Expires: t0.Add(sessions.Lifetime)}
	if err := s.CreateSession(ctx, in); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateSession(ctx, in); err == nil {
		t.Error("a second session of the same id was written over the first")
	}
	got, err := s.Session(ctx, "c1", "s1")
	if err != nil || got != in {
		t.Fatalf("Session = %+v, %v; want %+v", got, err, in)
	}
	var item struct {
		ExpiresAt int64  `dynamodbav:"expires_at"`
		Type      string `dynamodbav:"type"`
	}
	if found, err := db.Find(ctx, schema.CompanyPK("c1"), schema.DashboardSessionSK("s1"), &item); err != nil || !found {
		t.Fatalf("the record is not in the company's partition: %v, %v", found, err)
	}
	if item.ExpiresAt != in.Expires.Unix() || item.Type != schema.KindDashboardSession {
		t.Errorf("record = %+v; want expires_at %d, type %s", item, in.Expires.Unix(), schema.KindDashboardSession)
	}
	if _, err := s.Session(ctx, "c2", "s1"); !errors.Is(err, sessions.ErrNotFound) {
		t.Errorf("another company's Session = %v; want ErrNotFound", err)
	}
	for range 2 {
		if err := s.DeleteSession(ctx, "c1", "s1"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Session(ctx, "c1", "s1"); !errors.Is(err, sessions.ErrNotFound) {
		t.Errorf("Session after DeleteSession = %v; want ErrNotFound", err)
	}
}

// TestDeleteSessionsOf deletes every session of one person of a company,
// and only theirs: another person's, and the same email's in another
// company, stay.
func TestDeleteSessionsOf(t *testing.T) {
	db := storetest.NewDB(t)
	s := store.NewSessions(db)
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	all := []sessions.Session{
		{ID: "s1", CompanyID: "c1", Email: "bob@example.com"},
		{ID: "s2", CompanyID: "c1", Email: "bob@example.com"},
		{ID: "s3", CompanyID: "c1", Email: "eve@example.com"},
		{ID: "s4", CompanyID: "c2", Email: "bob@example.com"},
	}
	for _, in := range all {
		in.Subject, in.Role, in.Created, in.Expires = "sub", identity.Viewer, t0, t0.Add(sessions.Lifetime)
		if err := s.CreateSession(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteSessionsOf(ctx, "c1", "bob@example.com"); err != nil {
		t.Fatal(err)
	}
	for _, in := range all {
		_, err := s.Session(ctx, in.CompanyID, in.ID)
		if gone, want := errors.Is(err, sessions.ErrNotFound), in.CompanyID == "c1" && in.Email == "bob@example.com"; gone != want {
			t.Errorf("session %s of %s/%s: gone %v (%v), want %v", in.ID, in.CompanyID, in.Email, gone, err, want)
		}
	}
}
