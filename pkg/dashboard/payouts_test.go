package dashboard_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"payments/pkg/bulk"
	"payments/pkg/field"
	"payments/pkg/guideline"
	"payments/pkg/httpapi"
	"payments/pkg/identity"
	"payments/pkg/page"
	"payments/pkg/payments"
)

// fakePayouts keeps company c1's payouts, as payments.Service would: an
// amount of 0 is refused naming the field.
type fakePayouts struct {
	mu   sync.Mutex
	made []payments.Payment
}

func newFakePayouts() *fakePayouts { return &fakePayouts{} }

func (f *fakePayouts) Payout(_ context.Context, companyID string, r payments.Request) (payments.Payment, error) {
	if r.Amount == "0" {
		return payments.Payment{}, field.Invalid("amount", "must be at least 1")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	p := payments.Payment{ID: "0190c000-0000-7000-8000-00000000000" + string(rune('1'+len(f.made))), CompanyID: companyID,
		Type: payments.TypePayout, Status: payments.StatusPending, Amount: 5000, Fee: 75, Currency: r.Currency,
		Country: r.Country, Operator: r.Operator, PhoneNumber: r.PhoneNumber, CreatedAt: time.Now()}
	f.made = append(f.made, p)
	return p, nil
}

func (f *fakePayouts) Get(_ context.Context, companyID, id string) (payments.Payment, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.made {
		if p.ID == id && p.CompanyID == companyID {
			return p, nil
		}
	}
	return payments.Payment{}, payments.ErrNotFound
}

// List counts the payments of the company that q selects (the chart
// asks only for totals).
func (f *fakePayouts) List(_ context.Context, companyID string, q payments.Query, _ page.Request) (page.Result[payments.Payment], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var res page.Result[payments.Payment]
	for _, p := range f.made {
		if p.CompanyID == companyID && (q.Type == "" || q.Type == p.Type) && !p.CreatedAt.Before(q.From) && p.CreatedAt.Before(q.To) {
			res.Total++
		}
	}
	return res, nil
}

func (f *fakePayouts) Guideline() *guideline.Guideline { return guideline.Default() }

func (f *fakePayouts) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.made)
}

// fakeBatches has no batches, and previews every batch as all rejected.
type fakeBatches struct{}

func (fakeBatches) Preview(_ context.Context, _ string, req bulk.Request) (bulk.Preview, error) {
	p := bulk.Preview{ItemCount: len(req.Items), RejectedCount: len(req.Items)}
	for _, in := range req.Items {
		p.Rejected = append(p.Rejected, bulk.Row{Input: in, Rejection: &bulk.Rejection{Field: "phone_number", Message: "phone_number is wrong"}})
	}
	return p, nil
}

func (fakeBatches) Submit(context.Context, string, bulk.Request) (bulk.Acceptance, error) {
	return bulk.Acceptance{}, errors.New("not in this test")
}

func (fakeBatches) Get(context.Context, string, string) (bulk.Batch, error) {
	return bulk.Batch{}, bulk.ErrNotFound
}

func (fakeBatches) List(context.Context, string, page.Request) (page.Result[bulk.Batch], error) {
	return page.Result[bulk.Batch]{}, nil
}

func (fakeBatches) Report(context.Context, string, string, func(bulk.Item) error) error {
	return bulk.ErrNotFound
}

// fakeErrors answers a field error as the API does (400 naming it).
type fakeErrors struct{}

func (fakeErrors) Body(err error) (httpapi.ErrorBody, bool) {
	var fe *field.Error
	if errors.As(err, &fe) {
		return httpapi.ErrorBody{StatusCode: 400, Field: fe.Field, Message: fe.Error()}, true
	}
	return httpapi.ErrorBody{}, false
}

// TestPayoutForm: the form of a country lists the guideline's operators;
// a payout made redirects to its page, and the same form sent again
// makes no second payout; a refused amount is shown, naming the field;
// a viewer's direct POST is refused on the server.
func TestPayoutForm(t *testing.T) {
	ts := newServer(t, nil, nil)
	srv, pool := ts.Server, ts.pool
	c := client(t, srv)
	signIn(t, c, srv, pool, "fin@example.com", identity.Finance)
	_, body := get(t, c, srv, "/dashboard/payouts?country=CM")
	for _, want := range []string{"<h1>Payouts</h1>", `<option value="mtn"`, `<option value="XAF"`, "start with its code 237"} {
		if !strings.Contains(body, want) {
			t.Errorf("the CM form lacks %q", want)
		}
	}
	key := between(body, `name="form_key" value="`, `"`)
	form := url.Values{"form_key": {key}, "country": {"CM"}, "operator": {"mtn"}, "currency": {"XAF"}, "phone_number": {"237670000001"}, "amount": {"5000"}}
	res, body := post(t, c, srv, "/dashboard/payouts", form)
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Request.URL.Path, "/dashboard/payments/") || !strings.Contains(body, "PENDING") {
		t.Fatalf("payout: %d %s %s", res.StatusCode, res.Request.URL.Path, body)
	}
	first := res.Request.URL.Path
	if res, _ = post(t, c, srv, "/dashboard/payouts", form); res.Request.URL.Path != first {
		t.Errorf("the form sent again went to %s, want %s", res.Request.URL.Path, first)
	}
	if n := ts.payouts.count(); n != 1 {
		t.Errorf("%d payouts made by one form sent twice, want 1", n)
	}
	form.Set("form_key", "another-form")
	form.Set("amount", "0")
	res, body = post(t, c, srv, "/dashboard/payouts", form)
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, "amount: must be at least 1") ||
		!strings.Contains(body, `name="amount" inputmode="decimal" autocomplete="off" required value="0" aria-invalid="true"`) {
		t.Errorf("a refused amount: %d %s", res.StatusCode, body)
	}
	viewer := client(t, srv)
	signIn(t, viewer, srv, pool, "viewer@example.com", identity.Viewer)
	form.Set("amount", "5000")
	form.Set("form_key", "viewer-form")
	if res, _ = post(t, viewer, srv, "/dashboard/payouts", form); res.StatusCode != http.StatusForbidden {
		t.Errorf("a viewer's payout: %d, want 403", res.StatusCode)
	}
	if n := ts.payouts.count(); n != 1 {
		t.Errorf("%d payouts after the refusals, want 1", n)
	}
}

// TestPaymentOfAnotherCompany: a payment id that is not the company's is
// the page not found.
func TestPaymentOfAnotherCompany(t *testing.T) {
	ts := newServer(t, nil, nil)
	srv, pool := ts.Server, ts.pool
	c := client(t, srv)
	signIn(t, c, srv, pool, "fin@example.com", identity.Finance)
	ts.payouts.Payout(context.Background(), "c2", payments.Request{Amount: "1", Currency: "XAF"})
	res, body := get(t, c, srv, "/dashboard/payments/"+ts.payouts.made[0].ID)
	if res.StatusCode != http.StatusNotFound || !strings.Contains(body, "Page not found") {
		t.Errorf("another company's payment: %d %s", res.StatusCode, body)
	}
}

// between returns what s holds between the first before and the after
// that follows it.
func between(s, before, after string) string {
	_, rest, ok := strings.Cut(s, before)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, after)
	return v
}

// TestHomeChart: Home's chart counts the day's payouts, and says its
// numbers in words (the SVG's title) and in a table.
func TestHomeChart(t *testing.T) {
	ts := newServer(t, nil, nil)
	c := client(t, ts.Server)
	signIn(t, c, ts.Server, ts.pool, "fin@example.com", identity.Finance)
	for range 2 {
		ts.payouts.Payout(context.Background(), "c1", payments.Request{Amount: "1", Currency: "XAF"})
	}
	ts.payouts.Payout(context.Background(), "c2", payments.Request{Amount: "1", Currency: "XAF"})
	_, body := get(t, c, ts.Server, "/dashboard")
	today := time.Now().UTC().Format(time.DateOnly)
	for _, want := range []string{"2 payouts and 0 collections in all, at most 2 in a day", "<td>" + today + `</td><td class="num">2</td><td class="num">0</td>`,
		`<rect class="payout" x="580" y="10" width="9" height="130">`} {
		if !strings.Contains(body, want) {
			t.Errorf("Home's chart lacks %q", want)
		}
	}
}
