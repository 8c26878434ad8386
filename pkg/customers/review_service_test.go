package customers

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"payments/pkg/events"
	"payments/pkg/providers/issuer"
	"payments/pkg/providers/kyc"
)

// The tests below drive the review's paths that the local stack cannot
// provoke (an issuer down or present in production mode, a link that
// cannot be made) through fakes; review_test.go runs the console's routes
// against DynamoDB Local and the S3 emulator.

// fakeReviewStore is fakeStore with the review's reads and a Decide that
// keeps the condition on PENDING_REVIEW.
type fakeReviewStore struct {
	*fakeStore
	events []events.Event
}

func (f *fakeReviewStore) PendingReview(context.Context, string, int) ([]Customer, string, error) {
	return nil, "", nil
}

func (f *fakeReviewStore) CountPendingReview(context.Context) (int, error) { return 0, nil }

func (f *fakeReviewStore) ByID(ctx context.Context, id string) (Customer, error) {
	return f.Get(ctx, "", id)
}

func (f *fakeReviewStore) Decide(_ context.Context, c Customer, ev events.Event) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.customers[c.ID].KYCStatus != PendingReview {
		return ErrKYCDecided
	}
	f.customers[c.ID] = c
	f.events = append(f.events, ev)
	return nil
}

// fakeLinker links documents, or fails.
type fakeLinker struct{ err error }

func (f fakeLinker) DocumentLink(_ context.Context, key string, ttl time.Duration) (string, error) {
	if f.err != nil {
		return "", f.err
	}
	return "https://documents.example/" + key + "?expires=" + ttl.String(), nil
}

// countingIssuer is fakeIssuer counting its registrations.
type countingIssuer struct {
	fakeIssuer
	enrolled int
}

func (c *countingIssuer) EnrollCardholder(ctx context.Context, r issuer.CardholderRequest) (issuer.Cardholder, error) {
	c.enrolled++
	return c.fakeIssuer.EnrollCardholder(ctx, r)
}

// TestNewReviewRefusesMissingDeps: the console's review is never built
// without a dependency, and the error names it; issuer.None is not a
// missing one.
func TestNewReviewRefusesMissingDeps(t *testing.T) {
	t.Parallel()
	st := &fakeReviewStore{fakeStore: &fakeStore{customers: map[string]Customer{}}}
	if r, err := NewReview(st, fakeLinker{}, issuer.None, nopPublisher{}, nil); err != nil || r.svc.issuer != nil {
		t.Fatalf("NewReview with issuer.None = %v, %v; want a review without an issuer", r, err)
	}
	for name, build := range map[string]func() (*Review, error){
		"Store":  func() (*Review, error) { return NewReview(nil, fakeLinker{}, issuer.None, nopPublisher{}, nil) },
		"Linker": func() (*Review, error) { return NewReview(st, nil, issuer.None, nopPublisher{}, nil) },
		"Issuer": func() (*Review, error) { return NewReview(st, fakeLinker{}, nil, nopPublisher{}, nil) },
		"Events": func() (*Review, error) { return NewReview(st, fakeLinker{}, issuer.None, nil, nil) },
	} {
		if r, err := build(); err == nil || r != nil || !strings.Contains(err.Error(), name) {
			t.Errorf("NewReview without %s = %v, %v; want an error naming it", name, r, err)
		}
	}
}

// TestReviewDecideAndTheIssuer: a customer verified at the console is
// registered as a cardholder when an issuer answers; with the issuer down
// or none configured the decision stands without one; a rejected customer
// is never registered. A link that cannot be made leaves the decision
// standing, without links.
func TestReviewDecideAndTheIssuer(t *testing.T) {
	t.Parallel()
	const id = "0196c1d2-3e4f-7a5b-8c6d-7e8f9a0b1c2d"
	at := time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)
	tests := []struct {
		name       string
		issuer     *countingIssuer // nil: issuer.None
		decision   Decision
		linkErr    error
		cardholder string
		enrolled   int
		links      int
	}{
		{"verified, issuer up", &countingIssuer{}, Decision{Status: "VERIFIED", By: "op"}, nil, "ch_" + id, 1, 2},
		{"verified, issuer down", &countingIssuer{fakeIssuer: fakeIssuer{err: issuer.ErrUnavailable}}, Decision{Status: "VERIFIED", By: "op"}, nil, "", 1, 2},
		{"verified, no issuer", nil, Decision{Status: "VERIFIED", By: "op"}, nil, "", 0, 2},
		{"rejected, issuer up", &countingIssuer{}, Decision{Status: "REJECTED", Reason: "blurred", By: "op"}, nil, "", 0, 2},
		{"verified, links fail", &countingIssuer{}, Decision{Status: "VERIFIED", By: "op"}, errors.New("no credentials"), "ch_" + id, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &fakeReviewStore{fakeStore: &fakeStore{customers: map[string]Customer{id: {
				ID: id, CompanyID: "company-1", KYCStatus: PendingReview,
				Front: Document{Key: "companies/company-1/customers/" + id + "/id_document_front"},
				Back:  Document{Key: "companies/company-1/customers/" + id + "/id_document_back"},
			}}}}
			var iss issuer.Cardholders = issuer.None
			if tt.issuer != nil {
				iss = tt.issuer
			}
			r, err := NewReview(st, fakeLinker{err: tt.linkErr}, iss, nopPublisher{}, func() time.Time { return at })
			if err != nil {
				t.Fatal(err)
			}
			c, links, err := r.Decide(context.Background(), id, tt.decision)
			if err != nil || c.KYCStatus != tt.decision.Status || c.CardholderID != tt.cardholder || len(links) != tt.links {
				t.Fatalf("Decide = %+v, %d links, %v; want %s, cardholder %q, %d links", c, len(links), err, tt.decision.Status, tt.cardholder, tt.links)
			}
			for _, l := range links {
				if !l.ExpiresAt.Equal(at.Add(DocumentLinkTTL)) || !strings.HasSuffix(l.URL, "id_document_"+l.Side+"?expires=15m0s") {
					t.Errorf("link %+v", l)
				}
			}
			if stored := st.customers[id]; stored.CardholderID != tt.cardholder || stored.Review == nil || stored.Review.By != "op" {
				t.Errorf("stored %+v", stored)
			}
			if tt.issuer != nil && tt.issuer.enrolled != tt.enrolled {
				t.Errorf("%d registrations, want %d", tt.issuer.enrolled, tt.enrolled)
			}
			if len(st.events) != 1 || st.events[0].Kind != events.CustomerKYCUpdated {
				t.Errorf("events %v", st.events)
			}
		})
	}
}

// TestEnrollWithoutProviders: with no verifier the customer is stored
// PENDING_REVIEW and the issuer is not asked; with a verifier but no
// issuer a verified customer is stored without a cardholder, registered
// later.
func TestEnrollWithoutProviders(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                 string
		noVerifier, noIssuer bool
		status               KYCStatus
	}{
		{"no verifier, no issuer", true, true, PendingReview},
		{"no verifier, an issuer", true, false, PendingReview},
		{"a verifier, no issuer", false, true, "VERIFIED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarnessWith(t, func(d *Deps) {
				if tt.noVerifier {
					d.Verifier = kyc.None
				}
				if tt.noIssuer {
					d.Issuer = issuer.None
				}
			})
			c, err := h.svc.EnrollFromURLs(context.Background(), "company-1", fields(frontURL, backURL))
			if err != nil || c.KYCStatus != tt.status || c.CardholderID != "" {
				t.Fatalf("enrol = %+v, %v; want %s without a cardholder", c, err, tt.status)
			}
			if stored := h.store.customers[c.ID]; stored.KYCStatus != tt.status || stored.CardholderID != "" || h.docs.count() != 2 {
				t.Errorf("stored %+v with %d documents", stored, h.docs.count())
			}
		})
	}
}
