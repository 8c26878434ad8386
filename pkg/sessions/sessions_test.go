package sessions_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"payments/pkg/identity"
	"payments/pkg/sessions"
)

// memStore is an in-memory sessions.Store.
type memStore struct {
	mu sync.Mutex
	m  map[string]sessions.Session
}

func (s *memStore) CreateSession(_ context.Context, in sessions.Session) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[in.CompanyID+"/"+in.ID] = in
	return nil
}

func (s *memStore) Session(_ context.Context, companyID, id string) (sessions.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.m[companyID+"/"+id]; ok {
		return v, nil
	}
	return sessions.Session{}, sessions.ErrNotFound
}

func (s *memStore) DeleteSession(_ context.Context, companyID, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, companyID+"/"+id)
	return nil
}

func (s *memStore) DeleteSessionsOf(_ context.Context, companyID, email string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range s.m {
		if v.CompanyID == companyID && v.Email == email {
			delete(s.m, k)
		}
	}
	return nil
}

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

var key = []byte(strings.Repeat("k", sessions.MinKeyLength))

// TestSessionLifecycle starts a session, resumes it by its cookie, refuses
// a tampered cookie, one sealed with another key and one past the
// absolute expiry, and ends it server-side: its cookie no longer works.
func TestSessionLifecycle(t *testing.T) {
	st := &memStore{m: map[string]sessions.Session{}}
	c := &clock{time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	m, err := sessions.NewManager(st, key, c.now)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	user := identity.User{Subject: "sub", Email: "ada@example.com", CompanyID: "c1", Role: identity.Viewer}
	s, value, err := m.Start(ctx, user)
	if err != nil {
		t.Fatal(err)
	}
	if s.Expires.Sub(s.Created) != sessions.Lifetime || s.Role != identity.Viewer || s.CompanyID != "c1" {
		t.Fatalf("session = %+v", s)
	}
	other, _ := sessions.NewManager(st, []byte(strings.Repeat("o", sessions.MinKeyLength)), c.now)
	tampered := []byte(value)
	tampered[len(tampered)/2] ^= 1
	for _, tt := range []struct {
		name  string
		m     *sessions.Manager
		value string
		at    time.Duration
		want  error
	}{
		{"its cookie", m, value, time.Hour, nil},
		{"just before expiry", m, value, sessions.Lifetime - time.Second, nil},
		{"tampered", m, string(tampered), 0, sessions.ErrInvalid},
		{"not base64", m, "!!", 0, sessions.ErrInvalid},
		{"another key", other, value, 0, sessions.ErrInvalid},
		{"at expiry", m, value, sessions.Lifetime, sessions.ErrExpired},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c.t = s.Created.Add(tt.at)
			got, err := tt.m.Resume(ctx, tt.value)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Resume = %v; want %v", err, tt.want)
			}
			if err == nil && got != s {
				t.Errorf("Resume = %+v; want %+v", got, s)
			}
		})
	}
	c.t = s.Created
	if err := m.End(ctx, value); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Resume(ctx, value); !errors.Is(err, sessions.ErrNotFound) {
		t.Errorf("Resume after End = %v; want ErrNotFound", err)
	}
}

// TestSealPurpose refuses a value sealed for one purpose as another.
func TestSealPurpose(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	m, err := sessions.NewManager(&memStore{}, key, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	v, err := m.Seal(sessions.PurposeChallenge, "x", now.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	var got string
	if err := m.Open(sessions.PurposeChallenge, v, &got); err != nil || got != "x" {
		t.Fatalf("Open = %q, %v", got, err)
	}
	if err := m.Open("another", v, &got); !errors.Is(err, sessions.ErrInvalid) {
		t.Errorf("Open for another purpose = %v; want ErrInvalid", err)
	}
}

// TestNewManagerRefuses a short key and no store.
func TestNewManagerRefuses(t *testing.T) {
	if _, err := sessions.NewManager(&memStore{}, []byte("short"), nil); err == nil {
		t.Error("a short key was accepted")
	}
	if _, err := sessions.NewManager(nil, key, nil); err == nil {
		t.Error("no store was accepted")
	}
}

// TestEndAllOf ends every session of one person of a company, whatever
// the case of the email their sign-in gave, and no one else's.
func TestEndAllOf(t *testing.T) {
	st := &memStore{m: map[string]sessions.Session{}}
	m, err := sessions.NewManager(st, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	start := func(company, email string) string {
		_, v, err := m.Start(ctx, identity.User{Subject: email, Email: email, CompanyID: company, Role: identity.Finance})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	bob1, bob2 := start("c1", "Bob@Example.com"), start("c1", "bob@example.com")
	eve, otherBob := start("c1", "eve@example.com"), start("c2", "bob@example.com")
	if err := m.EndAllOf(ctx, "c1", "bob@example.com"); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, value string
		ended       bool
	}{{"bob's", bob1, true}, {"bob's other", bob2, true}, {"eve's", eve, false}, {"bob's of another company", otherBob, false}} {
		if _, err := m.Resume(ctx, tt.value); errors.Is(err, sessions.ErrNotFound) != tt.ended {
			t.Errorf("%s session: Resume = %v, ended want %v", tt.name, err, tt.ended)
		}
	}
}
