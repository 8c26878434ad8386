package store_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"payments/pkg/idempotency"
	"payments/pkg/store"
	"payments/pkg/store/storetest"
)

// claimAt returns the claim of request hash at now with the middleware's
// lease and retention.
func claimAt(hash string, now time.Time) idempotency.Claim {
	return idempotency.Claim{
		RequestHash: hash, LeaseID: uuid.NewString(), Now: now,
		LeaseUntil: now.Add(idempotency.Lease), ExpiresAt: now.Add(idempotency.Retention),
	}
}

// TestIdempotencyClaims checks the conditions of Claim on each state a
// key's record can be in: what holds the key, and what an expired record
// or an ended lease lets through.
func TestIdempotencyClaims(t *testing.T) {
	db := storetest.NewDB(t)
	s := store.NewIdempotency(db)
	ctx := context.Background()
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	resp := idempotency.Response{Status: 201, ContentType: "application/json", Body: []byte(`{"id":"x"} `)}
	tests := []struct {
		name     string
		done     bool          // the first request completed
		other    bool          // the second claim is of another request
		after    time.Duration // when the second claim comes
		company  bool          // the second claim is another company's
		claimed  bool
		inFlight bool // the record returned is in progress
	}{
		{"in progress, same request", false, false, 10 * time.Second, false, false, true},
		{"in progress, another request", false, true, 10 * time.Second, false, false, true},
		{"lease ended, same request: taken over", false, false, idempotency.Lease, false, true, false},
		{"lease ended, another request: still held", false, true, idempotency.Lease + time.Second, false, false, true},
		{"done, same request", true, false, time.Hour, false, false, false},
		{"done, another request", true, true, time.Hour, false, false, false},
		{"done, just before 24 h", true, false, idempotency.Retention - time.Second, false, false, false},
		{"done, after 24 h: absent", true, true, idempotency.Retention, false, true, false},
		{"in progress, after 24 h: absent", false, true, idempotency.Retention + time.Second, false, true, false},
		{"another company", true, false, time.Second, true, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			company, key := uuid.NewString(), "key "+uuid.NewString()
			first := claimAt("hash-a", t0)
			if _, ok, err := s.Claim(ctx, company, key, first); err != nil || !ok {
				t.Fatalf("first claim: %v %v", ok, err)
			}
			if tt.done {
				if err := s.Complete(ctx, company, key, first.LeaseID, resp); err != nil {
					t.Fatal(err)
				}
			}
			hash := "hash-a"
			if tt.other {
				hash = "hash-b"
			}
			if tt.company {
				company = uuid.NewString()
			}
			rec, ok, err := s.Claim(ctx, company, key, claimAt(hash, t0.Add(tt.after)))
			if err != nil || ok != tt.claimed {
				t.Fatalf("second claim: claimed %v (%v), want %v", ok, err, tt.claimed)
			}
			if ok {
				return
			}
			if rec.RequestHash != "hash-a" || (rec.Response == nil) != tt.inFlight {
				t.Fatalf("record %+v", rec)
			}
			if r := rec.Response; r != nil && (r.Status != 201 || r.ContentType != resp.ContentType || !bytes.Equal(r.Body, resp.Body) || r.Omitted) {
				t.Fatalf("response %+v", r)
			}
		})
	}
}

// TestIdempotencyLeases: only the claim that holds a key completes or
// releases it; a released key is free.
func TestIdempotencyLeases(t *testing.T) {
	db := storetest.NewDB(t)
	s := store.NewIdempotency(db)
	ctx := context.Background()
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	company, key := uuid.NewString(), "k"
	first := claimAt("h", t0)
	if _, ok, err := s.Claim(ctx, company, key, first); err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	second := claimAt("h", t0.Add(idempotency.Lease+time.Millisecond))
	if _, ok, err := s.Claim(ctx, company, key, second); err != nil || !ok {
		t.Fatalf("take over: %v %v", ok, err)
	}
	if err := s.Complete(ctx, company, key, first.LeaseID, idempotency.Response{Status: 200}); !errors.Is(err, idempotency.ErrLeaseLost) {
		t.Fatalf("complete with the lost lease: %v", err)
	}
	if err := s.Release(ctx, company, key, first.LeaseID); !errors.Is(err, idempotency.ErrLeaseLost) {
		t.Fatalf("release with the lost lease: %v", err)
	}
	if err := s.Release(ctx, company, key, second.LeaseID); err != nil {
		t.Fatalf("release: %v", err)
	}
	if err := s.Release(ctx, company, key, second.LeaseID); !errors.Is(err, idempotency.ErrLeaseLost) {
		t.Fatalf("release again: %v", err)
	}
	third := claimAt("another request", t0.Add(time.Minute))
	if _, ok, err := s.Claim(ctx, company, key, third); err != nil || !ok {
		t.Fatalf("claim after release: %v %v", ok, err)
	}
	if err := s.Complete(ctx, company, key, third.LeaseID, idempotency.Response{Status: 500, Omitted: true}); err != nil {
		t.Fatal(err)
	}
	rec, ok, err := s.Claim(ctx, company, key, claimAt("another request", t0.Add(2*time.Minute)))
	if err != nil || ok || rec.Response == nil || rec.Response.Status != 500 || !rec.Response.Omitted || rec.Response.Body != nil {
		t.Fatalf("replay of an omitted body: %v %+v %v", ok, rec.Response, err)
	}
}
