package customers

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"payments/pkg/events"
	"payments/pkg/field"
	"payments/pkg/outbound"
	"payments/pkg/page"
	"payments/pkg/providers/issuer"
	"payments/pkg/providers/kyc"
)

// The tests below drive the service's paths that the local stack cannot
// provoke (a verifier or an issuer down, a write whose answer is lost)
// through fakes of its dependencies; customers_test.go runs the same paths
// that they can against DynamoDB Local and the S3 emulator.

var (
	pngBytes = []byte("\x89PNG\r\n\x1a\n0000IHDR rest of an image")
	pdfBytes = []byte("%PDF-1.4\n1 0 obj << >> endobj\n%%EOF")
	errDown  = errors.New("connection refused")
)

// fakeStore keeps customers in memory.
type fakeStore struct {
	mu        sync.Mutex
	customers map[string]Customer
	createErr error // returned by Create; with lost set, after storing
	lost      bool
	getErr    error
}

func (f *fakeStore) Taken(context.Context, string, string, string) (bool, error) { return false, nil }

func (f *fakeStore) Create(_ context.Context, c Customer, _ events.Event) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.createErr != nil && !f.lost {
		return f.createErr
	}
	f.customers[c.ID] = c
	return f.createErr
}

func (f *fakeStore) Get(_ context.Context, _, id string) (Customer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.getErr != nil {
		return Customer{}, f.getErr
	}
	c, ok := f.customers[id]
	if !ok {
		return Customer{}, ErrNotFound
	}
	return c, nil
}

func (f *fakeStore) List(context.Context, string, page.Request) (page.Result[Customer], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Customer
	for _, c := range f.customers {
		out = append(out, c)
	}
	return page.Result[Customer]{Items: out, Total: len(out)}, nil
}

func (f *fakeStore) SetCardholder(_ context.Context, _, id, cardholderID string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.customers[id]
	c.CardholderID = cardholderID
	f.customers[id] = c
	return nil
}

func (f *fakeStore) SetActive(_ context.Context, _, id string, active bool, now time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.customers[id]
	c.IsActive, c.UpdatedAt = active, now
	f.customers[id] = c
	return nil
}

// fakeDocuments keeps documents in memory.
type fakeDocuments struct {
	mu      sync.Mutex
	objects map[string][]byte
	putErr  error
}

func (f *fakeDocuments) PutDocument(_ context.Context, key, _ string, b []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.objects[key] = b // written, even when the answer is an error
	return f.putErr
}

func (f *fakeDocuments) DeleteDocument(_ context.Context, key string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.objects, key)
	return nil
}

func (f *fakeDocuments) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.objects)
}

// fakeFetcher answers each URL from a table; a URL it does not know blocks
// until the request is cancelled, as a slow server would.
type fakeFetcher struct {
	answers   map[string]outbound.Response
	errs      map[string]error
	cancelled chan string
}

func (f *fakeFetcher) Get(ctx context.Context, rawURL string) (outbound.Response, error) {
	if err, ok := f.errs[rawURL]; ok {
		return outbound.Response{}, err
	}
	if r, ok := f.answers[rawURL]; ok {
		return r, nil
	}
	<-ctx.Done()
	f.cancelled <- rawURL
	return outbound.Response{}, ctx.Err()
}

// fakeVerifier verifies everyone, or fails.
type fakeVerifier struct{ err error }

func (f fakeVerifier) Verify(_ context.Context, r kyc.Request) (kyc.Decision, error) {
	if f.err != nil {
		return kyc.Decision{}, f.err
	}
	return kyc.Decision{ID: "kyc_" + r.Reference, Status: kyc.Verified}, nil
}

// fakeIssuer registers cardholders, or fails; Active says how it sees them.
type fakeIssuer struct {
	issuer.Issuer
	err    error
	active bool
}

func (f *fakeIssuer) EnrollCardholder(_ context.Context, r issuer.CardholderRequest) (issuer.Cardholder, error) {
	if f.err != nil {
		return issuer.Cardholder{}, f.err
	}
	return issuer.Cardholder{ID: "ch_" + r.Reference, Reference: r.Reference, Active: true}, nil
}

func (f *fakeIssuer) Cardholder(_ context.Context, id string) (issuer.Cardholder, error) {
	if f.err != nil {
		return issuer.Cardholder{}, f.err
	}
	return issuer.Cardholder{ID: id, Active: f.active}, nil
}

type approvedCompanies struct{}

func (approvedCompanies) KYBApproved(context.Context, string) (bool, error) { return true, nil }

type nopPublisher struct{}

func (nopPublisher) Publish(context.Context, ...events.Event) error { return nil }

// harness is a Service over fakes.
type harness struct {
	svc    *Service
	store  *fakeStore
	docs   *fakeDocuments
	fetch  *fakeFetcher
	issuer *fakeIssuer
}

const (
	frontURL = "https://docs.example.com/front.png"
	backURL  = "https://docs.example.com/back.pdf"
)

func newHarness(t testing.TB) *harness {
	t.Helper()
	return newHarnessWith(t, func(*Deps) {})
}

// newHarnessWith is newHarness with the service's dependencies changed by
// with before it is built.
func newHarnessWith(t testing.TB, with func(*Deps)) *harness {
	t.Helper()
	h := &harness{
		store: &fakeStore{customers: map[string]Customer{}},
		docs:  &fakeDocuments{objects: map[string][]byte{}},
		fetch: &fakeFetcher{
			answers: map[string]outbound.Response{
				frontURL: {StatusCode: http.StatusOK, Body: pngBytes},
				backURL:  {StatusCode: http.StatusOK, Body: pdfBytes},
			},
			errs:      map[string]error{},
			cancelled: make(chan string, 2),
		},
		issuer: &fakeIssuer{active: true},
	}
	d := Deps{
		Store: h.store, Companies: approvedCompanies{}, Documents: h.docs, Fetcher: h.fetch,
		Verifier: fakeVerifier{}, Issuer: h.issuer, Events: nopPublisher{},
	}
	with(&d)
	svc, err := NewService(d)
	if err != nil {
		t.Fatal(err)
	}
	h.svc = svc
	return h
}

func fields(front, back string) Fields {
	return Fields{
		FirstName: "Amina", LastName: "Njoya", Email: "amina@example.com", Country: "Cameroon",
		Street: "12 Rue de la Joie", City: "Douala", State: "Littoral", PostalCode: "00237",
		CountryISOCode: "CM", CountryPhoneCode: "+237", PhoneNumber: "670000001",
		IdentificationNumber: "CM-0001", IDDocumentType: "NIN", DateOfBirth: "1990-04-12",
		FrontURL: front, BackURL: back,
	}
}

// TestEnrollFailures: each failure after the documents are stored deletes
// them, except a write whose outcome is unknown and may have stored the
// customer.
func TestEnrollFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		setup     func(*harness)
		err       error // nil: enrolled
		documents int   // left in storage
		customers int
		verifier  error // the verifier's answer
	}{
		{"enrolled", func(*harness) {}, nil, 2, 1, nil},
		{"verifier down", func(*harness) {}, ErrVerifierUnavailable, 0, 0, kyc.ErrUnavailable},
		{"document storage down", func(h *harness) { h.docs.putErr = errDown }, errDown, 0, 0, nil},
		{"duplicate at commit", func(h *harness) { h.store.createErr = ErrDuplicate }, ErrDuplicate, 0, 0, nil},
		{"write refused, customer absent", func(h *harness) { h.store.createErr = errDown }, errDown, 0, 0, nil},
		{"answer lost, customer stored", func(h *harness) { h.store.createErr, h.store.lost = errDown, true }, nil, 2, 1, nil},
		{"answer lost, read fails too", func(h *harness) { h.store.createErr, h.store.getErr = errDown, errDown }, errDown, 2, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarnessWith(t, func(d *Deps) { d.Verifier = fakeVerifier{err: tt.verifier} })
			tt.setup(h)
			c, err := h.svc.EnrollFromURLs(context.Background(), "company-1", fields(frontURL, backURL))
			if !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if got := h.docs.count(); got != tt.documents {
				t.Errorf("%d documents stored, want %d", got, tt.documents)
			}
			if got := len(h.store.customers); got != tt.customers {
				t.Errorf("%d customers stored, want %d", got, tt.customers)
			}
			if err == nil && (c.CardholderID != "ch_"+c.ID || c.Front.Reference != frontURL || c.Back.ContentType != "application/pdf") {
				t.Errorf("customer %+v", c)
			}
		})
	}
}

// TestEnrollFetchFailures: which field a failed fetch is reported on, and
// that the first failure stops the other fetch.
func TestEnrollFetchFailures(t *testing.T) {
	t.Parallel()
	const slow, missing, moved, html, refused = "https://docs.example.com/slow.png", "https://docs.example.com/missing.png",
		"https://docs.example.com/moved.png", "https://docs.example.com/page.html", "https://169.254.169.254/x.png"
	tests := []struct {
		name, front, back string
		err               error
		field             string
		cancelled         string // the URL whose fetch the failure cut short
	}{
		{"both fail: the front is reported", missing, refused, ErrDocumentNotFetched, FieldFrontURL, ""},
		{"a 3xx is not followed", frontURL, moved, ErrDocumentNotFetched, FieldBackURL, ""},
		{"a refused address", refused, backURL, ErrDocumentNotFetched, FieldFrontURL, ""},
		{"html is unreadable", html, backURL, ErrDocumentUnreadable, FieldFrontURL, ""},
		{"a failed back stops a slow front", slow, missing, ErrDocumentNotFetched, FieldBackURL, slow},
		{"a failed front stops a slow back", missing, slow, ErrDocumentNotFetched, FieldFrontURL, slow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.fetch.answers[missing] = outbound.Response{StatusCode: http.StatusNotFound}
			h.fetch.answers[moved] = outbound.Response{StatusCode: http.StatusFound}
			h.fetch.answers[html] = outbound.Response{StatusCode: http.StatusOK, Body: []byte("<html><body>x</body></html>")}
			h.fetch.errs[refused] = outbound.ErrRefusedAddress
			_, err := h.svc.EnrollFromURLs(context.Background(), "company-1", fields(tt.front, tt.back))
			var ff *field.Fault
			if !errors.Is(err, tt.err) || !errors.As(err, &ff) || ff.Field != tt.field {
				t.Fatalf("err = %v, want %v on %s", err, tt.err, tt.field)
			}
			if tt.cancelled != "" {
				if got := <-h.fetch.cancelled; got != tt.cancelled {
					t.Errorf("cancelled %s, want %s", got, tt.cancelled)
				}
			}
			if h.docs.count() != 0 || len(h.store.customers) != 0 {
				t.Error("something was stored")
			}
		})
	}
}

// TestEnrollWithTheIssuerDown: the customer is enrolled without a
// cardholder; a sync with the issuer back registers it.
func TestEnrollWithTheIssuerDown(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.issuer.err = issuer.ErrUnavailable
	c, err := h.svc.EnrollFromURLs(context.Background(), "company-1", fields(frontURL, backURL))
	if err != nil || c.CardholderID != "" {
		t.Fatalf("enrol: %+v, %v", c, err)
	}
	page := page.Request{Page: 1, Limit: 10}
	if _, err := h.svc.List(context.Background(), "company-1", page, true); !errors.Is(err, ErrIssuerUnavailable) {
		t.Fatalf("sync with the issuer down: %v", err)
	}
	h.issuer.err = nil
	if _, err := h.svc.List(context.Background(), "company-1", page, true); err != nil {
		t.Fatal(err)
	}
	if got, _ := h.store.Get(context.Background(), "company-1", c.ID); got.CardholderID != "ch_"+c.ID {
		t.Errorf("after the sync, cardholder %q", got.CardholderID)
	}
}

// TestSync: is_active follows the issuer's; an issuer that fails changes
// nothing; customers not verified are not asked about.
func TestSync(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	page := page.Request{Page: 1, Limit: 10}
	h := newHarness(t)
	verified, err := h.svc.EnrollFromURLs(ctx, "company-1", fields(frontURL, backURL))
	if err != nil {
		t.Fatal(err)
	}
	rejected := verified
	rejected.ID, rejected.KYCStatus, rejected.CardholderID = "rejected", kyc.Rejected, ""
	h.store.customers[rejected.ID] = rejected

	h.issuer.active = false
	h.issuer.err = issuer.ErrUnavailable
	if _, err := h.svc.List(ctx, "company-1", page, true); !errors.Is(err, ErrIssuerUnavailable) {
		t.Fatalf("err = %v", err)
	}
	if c, _ := h.store.Get(ctx, "company-1", verified.ID); !c.IsActive {
		t.Fatal("a failed sync changed is_active")
	}
	h.issuer.err = nil
	res, err := h.svc.List(ctx, "company-1", page, true)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(res.Items, func(c Customer) bool { return c.ID == verified.ID })
	if res.Items[i].IsActive {
		t.Error("the answer still shows the customer active")
	}
	if c, _ := h.store.Get(ctx, "company-1", verified.ID); c.IsActive {
		t.Error("the sync was not stored")
	}
	if c, _ := h.store.Get(ctx, "company-1", rejected.ID); !c.IsActive || c.CardholderID != "" {
		t.Errorf("a rejected customer was synced: %+v", c)
	}
}
