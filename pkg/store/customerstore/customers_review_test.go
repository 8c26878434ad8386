package customerstore_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"payments/pkg/customers"
	"payments/pkg/events"
	"payments/pkg/ids"
	"payments/pkg/store"
	"payments/pkg/store/customerstore"
	"payments/pkg/store/storetest"
	"payments/pkg/timestamp"
	"payments/pkg/waittest"
)

// pendingCustomer returns the n-th customer of company as an enrolment with
// no verifier stores it: PENDING_REVIEW, no verification, no cardholder.
func pendingCustomer(companyID string, n int) customers.Customer {
	c := newCustomer(companyID, n)
	c.KYCStatus, c.KYCID, c.CardholderID = customers.PendingReview, "", ""
	return c
}

// decided returns c as the console decides it at, and its event.
func decided(t *testing.T, c customers.Customer, status customers.KYCStatus, reason string, at time.Time) (customers.Customer, events.Event) {
	t.Helper()
	c.KYCStatus, c.KYCReason, c.UpdatedAt = status, "", at
	if status == "REJECTED" {
		c.KYCReason = reason
	}
	c.Review = &customers.ReviewRecord{By: "arn:aws:iam::000000000000:user/reviewer", Note: reason, At: at}
	var r *string
	if c.KYCReason != "" {
		r = &c.KYCReason
	}
	ev, err := events.Build(c.CompanyID, events.CustomerKYCUpdatedData{
		CustomerID: c.ID, KYCStatus: string(status), KYCReason: r, UpdatedAt: timestamp.Format(at),
	}, at)
	if err != nil {
		t.Fatal(err)
	}
	return c, ev
}

// TestCustomersReviewQueue: the customers PENDING_REVIEW of every company
// are listed oldest first, paged and counted; a customer decided leaves
// the queue; ByID finds a customer of any company and not an unknown id.
func TestCustomersReviewQueue(t *testing.T) {
	db := storetest.NewDB(t)
	s := customerstore.NewCustomers(db)
	ctx := context.Background()
	a, b := uuid.NewString(), uuid.NewString()
	// Created out of order, in two companies, with a verified one between.
	var want []customers.Customer
	for _, c := range []customers.Customer{pendingCustomer(b, 3), pendingCustomer(a, 1), newCustomer(a, 2), pendingCustomer(a, 4), pendingCustomer(b, 5)} {
		mustCreate(t, s, c)
		if c.KYCStatus == customers.PendingReview {
			want = append(want, c)
		}
	}
	// Oldest first: by id, a UUID v7 of the creation time.
	want = []customers.Customer{want[1], want[0], want[2], want[3]}

	// The queue is an index, eventually consistent.
	waittest.Until(t, 10*time.Second, "the index holds the four customers waiting", func() bool {
		n, err := s.CountPendingReview(ctx)
		return err == nil && n == 4
	})
	var got []customers.Customer
	after := ""
	for pages := 0; ; pages++ {
		page, next, err := s.PendingReview(ctx, after, 3)
		if err != nil {
			t.Fatalf("PendingReview: %v", err)
		}
		got = append(got, page...)
		if next == "" {
			if pages != 1 {
				t.Errorf("%d pages of 3 for 4 customers", pages+1)
			}
			break
		}
		after = next
	}
	if len(got) != len(want) {
		t.Fatalf("listed %d customers, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].ID != want[i].ID || got[i].CompanyID != want[i].CompanyID || got[i].KYCStatus != customers.PendingReview {
			t.Errorf("item %d = %s of %s (%s), want %s of %s", i, got[i].ID, got[i].CompanyID, got[i].KYCStatus, want[i].ID, want[i].CompanyID)
		}
	}

	c, err := s.ByID(ctx, want[2].ID)
	if err != nil || c != want[2] {
		t.Fatalf("ByID = %+v, %v; want %+v", c, err, want[2])
	}
	if _, err := s.ByID(ctx, ids.NewV7(customerBase)); !errors.Is(err, customers.ErrNotFound) {
		t.Errorf("ByID of an unknown id: %v, want ErrNotFound", err)
	}

	at := customerBase.Add(time.Hour)
	d, ev := decided(t, c, "REJECTED", "the photo is not the customer", at)
	if err := s.Decide(ctx, d, ev); err != nil {
		t.Fatalf("Decide: %v", err)
	}
	stored, err := s.Get(ctx, c.CompanyID, c.ID)
	if err != nil || stored.KYCStatus != "REJECTED" || stored.KYCReason != "the photo is not the customer" ||
		!stored.UpdatedAt.Equal(at) || stored.Review == nil || *stored.Review != *d.Review {
		t.Fatalf("after Decide: %+v (review %+v), %v", stored, stored.Review, err)
	}
	if e, err := store.NewOutbox(db).Event(ctx, c.CompanyID, ev.ID); err != nil || e.Kind != events.CustomerKYCUpdated {
		t.Errorf("event = %+v, %v", e, err)
	}
	var rest []customers.Customer
	waittest.Until(t, 10*time.Second, "the decided customer leaves the queue", func() bool {
		rest, _, err = s.PendingReview(ctx, "", 10)
		return err == nil && len(rest) == 3
	})
	for _, r := range rest {
		if r.ID == c.ID {
			t.Errorf("the decided customer is still in the queue")
		}
	}
}

// TestCustomersDecideOnce: decisions written at once from the same read of
// a PENDING_REVIEW customer: exactly one is stored, with its event; the
// others are ErrKYCDecided and write nothing. A customer a verifier
// decided is ErrKYCDecided too.
func TestCustomersDecideOnce(t *testing.T) {
	db := storetest.NewDB(t)
	s := customerstore.NewCustomers(db)
	ctx := context.Background()
	company := uuid.NewString()
	c := pendingCustomer(company, 1)
	mustCreate(t, s, c)

	at := customerBase.Add(time.Hour)
	evs := make([]events.Event, 10)
	errs := make([]error, len(evs))
	var wg sync.WaitGroup
	for i := range evs {
		status := customers.KYCStatus("VERIFIED")
		if i%2 == 1 {
			status = "REJECTED"
		}
		d, ev := decided(t, c, status, "reviewer "+string(rune('a'+i)), at.Add(time.Duration(i)*time.Millisecond))
		evs[i] = ev
		wg.Go(func() { errs[i] = s.Decide(ctx, d, ev) })
	}
	wg.Wait()
	won := -1
	for i, err := range errs {
		switch {
		case err == nil && won >= 0:
			t.Fatalf("decisions %d and %d were both stored", won, i)
		case err == nil:
			won = i
		case !errors.Is(err, customers.ErrKYCDecided):
			t.Errorf("decision %d: %v, want ErrKYCDecided", i, err)
		}
	}
	if won < 0 {
		t.Fatal("no decision was stored")
	}
	stored, err := s.Get(ctx, company, c.ID)
	if err != nil || stored.Review == nil || stored.Review.Note != "reviewer "+string(rune('a'+won)) {
		t.Fatalf("stored %+v, %v; want decision %d", stored, err, won)
	}
	for i, ev := range evs {
		_, err := store.NewOutbox(db).Event(ctx, company, ev.ID)
		if (i == won) != (err == nil) {
			t.Errorf("event of decision %d (won %d): %v", i, won, err)
		}
	}

	byVerifier := newCustomer(company, 2)
	mustCreate(t, s, byVerifier)
	d, ev := decided(t, byVerifier, "REJECTED", "second look", at)
	if err := s.Decide(ctx, d, ev); !errors.Is(err, customers.ErrKYCDecided) {
		t.Errorf("Decide on a customer the verifier decided: %v, want ErrKYCDecided", err)
	}
	if got, _ := s.Get(ctx, company, byVerifier.ID); got != byVerifier {
		t.Errorf("the verifier's customer changed: %+v", got)
	}
}
