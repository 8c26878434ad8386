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

	"payments/pkg/activity"
	"payments/pkg/cards"
	"payments/pkg/customers"
	"payments/pkg/dashboard"
	"payments/pkg/identity"
	"payments/pkg/page"
	"payments/pkg/providers/kyc"
)

// fakeCustomers are company c1's customer cu1 and company c2's cu2.
type fakeCustomers struct{}

var testCustomers = map[string]customers.Customer{
	"cu1": {ID: "cu1", CompanyID: "c1", FirstName: "Amina", LastName: "Njoya", Email: "amina@example.com",
		PhoneCountryCode: "+237", PhoneNumber: "670000001", KYCStatus: kyc.Verified, Country: "Cameroon", City: "Douala",
		DocumentType: customers.NIN, IdentificationNumber: "NIN-1", IsActive: true,
		CreatedAt: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)},
	"cu2": {ID: "cu2", CompanyID: "c2", FirstName: "Other", LastName: "Person", KYCStatus: kyc.Pending},
}

func (fakeCustomers) List(_ context.Context, companyID string, p page.Request) (page.Result[customers.Customer], error) {
	var out page.Result[customers.Customer]
	for _, c := range testCustomers {
		if c.CompanyID == companyID {
			out.Items = append(out.Items, c)
		}
	}
	out.Total = len(out.Items)
	if p.Limit == 1 {
		out.Next = "more" // as if a second page followed
	}
	return out, nil
}

func (fakeCustomers) Get(_ context.Context, companyID, id string) (customers.Customer, error) {
	if c, ok := testCustomers[id]; ok && c.CompanyID == companyID {
		return c, nil
	}
	return customers.Customer{}, customers.ErrNotFound
}

// fakeCards are company c1's card1 (of cu1) and company c2's card2, which
// freeze and unfreeze as the service does, or fail with err when set.
type fakeCards struct {
	mu    sync.Mutex
	cards map[string]cards.Card
	err   error
}

func newFakeCards() *fakeCards {
	return &fakeCards{cards: map[string]cards.Card{
		"card1": {ID: "card1", CompanyID: "c1", CustomerID: "cu1", Brand: cards.Visa, Status: cards.Active, Balance: 1234,
			Last4: "4242", ExpiryMonth: 4, ExpiryYear: 2029, CreatedAt: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)},
		"card2": {ID: "card2", CompanyID: "c2", CustomerID: "cu2", Brand: cards.Visa, Status: cards.Active, Last4: "1111"},
	}}
}

func (f *fakeCards) List(_ context.Context, companyID string, _ cards.ListQuery) ([]cards.Card, cards.Statistics, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := cards.Statistics{AvailableSlots: 9}
	var out []cards.Card
	for _, c := range f.cards {
		if c.CompanyID == companyID {
			out = append(out, c)
			st.Total++
			st.Active++
			st.TotalBalance += c.Balance
		}
	}
	return out, st, nil
}

func (f *fakeCards) Card(_ context.Context, companyID, id string) (cards.Card, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c, ok := f.cards[id]; ok && c.CompanyID == companyID {
		return c, nil
	}
	return cards.Card{}, cards.ErrNotFound
}

func (f *fakeCards) CustomerCards(_ context.Context, companyID, customerID string) ([]cards.Card, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []cards.Card
	for _, c := range f.cards {
		if c.CompanyID == companyID && c.CustomerID == customerID {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil, cards.ErrNoCards
	}
	return out, nil
}

func (f *fakeCards) ListTransactions(ctx context.Context, companyID, id string, _ cards.TxQuery) (page.Result[cards.TxView], error) {
	c, err := f.Card(ctx, companyID, id)
	if err != nil {
		return page.Result[cards.TxView]{}, err
	}
	tx := cards.Transaction{ID: "tx1", CardID: c.ID, Type: cards.TxFunding, Status: cards.TxSuccess, Amount: 5000, Fee: 25,
		Description: "Card funding", CreatedAt: time.Date(2026, 3, 3, 9, 0, 0, 0, time.UTC)}
	return page.Result[cards.TxView]{Items: []cards.TxView{{Tx: tx, Card: c}}, Total: 1}, nil
}

func (f *fakeCards) Freeze(ctx context.Context, companyID, id string, lock bool) (cards.Card, error) {
	if lock {
		return cards.Card{}, errors.New("the dashboard locks no card")
	}
	return f.set(ctx, companyID, id, cards.Active, cards.Frozen, cards.ErrAlreadyFrozen)
}

func (f *fakeCards) Unfreeze(ctx context.Context, companyID, id string, unlock bool) (cards.Card, error) {
	if unlock {
		return cards.Card{}, errors.New("the dashboard lifts no lock")
	}
	return f.set(ctx, companyID, id, cards.Frozen, cards.Active, cards.ErrNotFrozen)
}

func (f *fakeCards) set(ctx context.Context, companyID, id string, from, to cards.Status, refusal error) (cards.Card, error) {
	c, err := f.Card(ctx, companyID, id)
	if err != nil {
		return c, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.err != nil:
		return cards.Card{}, f.err
	case c.Status != from:
		return cards.Card{}, refusal
	}
	c.Status = to
	f.cards[id] = c
	return c, nil
}

// TestCustomersPages: the list with the KYC status and a next page's link,
// the detail with the customer's card linked; another company's customer
// and an unknown one are not found.
func TestCustomersPages(t *testing.T) {
	srv, pool := server(t)
	c := client(t, srv)
	signIn(t, c, srv, pool, "vic@example.com", identity.Viewer)
	res, body := get(t, c, srv, "/dashboard/customers")
	for _, want := range []string{"<h1>Customers</h1>", `href="/dashboard/customers/cu1"`, "Amina Njoya", "amina@example.com", "&#43;237 670000001", "VERIFIED", "2026-03-01 09:00 UTC"} {
		if res.StatusCode != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("the customers list (%d) lacks %q", res.StatusCode, want)
		}
	}
	if strings.Contains(body, "Other Person") {
		t.Error("the list shows another company's customer")
	}
	if _, body = get(t, c, srv, "/dashboard/customers?limit=1"); !strings.Contains(body, `rel="next"`) || !strings.Contains(body, "cursor=") {
		t.Errorf("a page followed by another has no next link: %s", body)
	}
	if res, body = get(t, c, srv, "/dashboard/customers?cursor=forged"); res.StatusCode != http.StatusBadRequest || !strings.Contains(body, "Page link not valid") {
		t.Errorf("a forged cursor: %d %s", res.StatusCode, body)
	}
	res, body = get(t, c, srv, "/dashboard/customers/cu1")
	for _, want := range []string{"<h1>Amina Njoya</h1>", "KYC status", "VERIFIED", "NIN NIN-1", `href="/dashboard/cards/card1"`, "Card •••• 4242"} {
		if res.StatusCode != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("the customer's page (%d) lacks %q", res.StatusCode, want)
		}
	}
	for _, id := range []string{"cu2", "nobody"} {
		if res, body = get(t, c, srv, "/dashboard/customers/"+id); res.StatusCode != http.StatusNotFound || !strings.Contains(body, "Page not found") {
			t.Errorf("customer %s: %d, want the 404 page", id, res.StatusCode)
		}
	}
}

// TestCardsPages: the list with its statistics and the masked number, the
// card's page with its transactions; a viewer sees no Freeze button.
func TestCardsPages(t *testing.T) {
	srv, pool := server(t)
	c := client(t, srv)
	signIn(t, c, srv, pool, "vic@example.com", identity.Viewer)
	res, body := get(t, c, srv, "/dashboard/cards")
	for _, want := range []string{"<h1>Cards</h1>", "<dt>Card slots left</dt><dd>9</dd>", "<dt>Total balance</dt><dd>12.34 USD</dd>",
		"Card •••• 4242", "Amina Njoya", "ACTIVE", "2026-03-02 09:00 UTC"} {
		if res.StatusCode != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("the cards list (%d) lacks %q", res.StatusCode, want)
		}
	}
	if strings.Contains(body, "1111") {
		t.Error("the list shows another company's card")
	}
	res, body = get(t, c, srv, "/dashboard/cards/card1")
	for _, want := range []string{"<h1>Card •••• 4242</h1>", "04/2029", "Card funding", "50.00 USD", "0.25 USD", `href="/dashboard/customers/cu1"`} {
		if res.StatusCode != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("the card's page (%d) lacks %q", res.StatusCode, want)
		}
	}
	if strings.Contains(body, ">Freeze</button>") {
		t.Error("a viewer is shown the Freeze button")
	}
}

// TestFreezeRoles: owner and finance freeze (and the change is recorded);
// developer and viewer are refused on the server, and the card is
// unchanged.
func TestFreezeRoles(t *testing.T) {
	for _, tt := range []struct {
		role identity.Role
		want int
	}{{identity.Viewer, http.StatusForbidden}, {identity.Developer, http.StatusForbidden}, {identity.Finance, http.StatusOK}, {identity.Owner, http.StatusOK}} {
		t.Run(string(tt.role), func(t *testing.T) {
			fc, log := newFakeCards(), &fakeActivity{}
			srv, pool := serverWith(t, func(d *dashboard.Deps) { d.Cards, d.Activity = fc, log })
			c := client(t, srv)
			email := string(tt.role) + "@example.com"
			signIn(t, c, srv, pool, email, tt.role)
			res, body := post(t, c, srv, "/dashboard/cards/card1/freeze", nil)
			if res.StatusCode != tt.want {
				t.Fatalf("freeze: %d, want %d: %s", res.StatusCode, tt.want, body)
			}
			got, _ := fc.Card(context.Background(), "c1", "card1")
			if tt.want == http.StatusForbidden {
				if got.Status != cards.Active || !strings.Contains(body, "does not allow this") || len(log.entries) != 0 {
					t.Errorf("refused, yet the card is %s, recorded %v: %s", got.Status, log.entries, body)
				}
				return
			}
			if got.Status != cards.Frozen || res.Request.URL.Path != "/dashboard/cards/card1" || !strings.Contains(body, "Card frozen.") ||
				!strings.Contains(body, ">Unfreeze</button>") {
				t.Errorf("after the freeze: %s at %s: %s", got.Status, res.Request.URL, body)
			}
			res, body = post(t, c, srv, "/dashboard/cards/card1/unfreeze", nil)
			if got, _ = fc.Card(context.Background(), "c1", "card1"); got.Status != cards.Active || !strings.Contains(body, "Card unfrozen.") {
				t.Errorf("after the unfreeze: %d %s: %s", res.StatusCode, got.Status, body)
			}
			want := []string{email + " Card frozen card1", email + " Card unfrozen card1"}
			if strings.Join(log.entries, "|") != strings.Join(want, "|") {
				t.Errorf("recorded %q, want %q", log.entries, want)
			}
		})
	}
}

// TestCardTenancy: another company's card, or an unknown one, is the 404
// page, to read and to freeze, and nothing changes.
func TestCardTenancy(t *testing.T) {
	fc := newFakeCards()
	srv, pool := serverWith(t, func(d *dashboard.Deps) { d.Cards = fc })
	c := client(t, srv)
	signIn(t, c, srv, pool, "owner@example.com", identity.Owner)
	for _, id := range []string{"card2", "nope"} {
		if res, body := get(t, c, srv, "/dashboard/cards/"+id); res.StatusCode != http.StatusNotFound || !strings.Contains(body, "Page not found") {
			t.Errorf("GET card %s: %d, want the 404 page", id, res.StatusCode)
		}
		for _, action := range []string{"freeze", "unfreeze"} {
			if res, body := post(t, c, srv, "/dashboard/cards/"+id+"/"+action, nil); res.StatusCode != http.StatusNotFound || !strings.Contains(body, "Page not found") {
				t.Errorf("%s card %s: %d, want the 404 page", action, id, res.StatusCode)
			}
		}
	}
	if got, _ := fc.Card(context.Background(), "c2", "card2"); got.Status != cards.Active {
		t.Errorf("the other company's card is %s", got.Status)
	}
}

// TestFreezeRefusals: each refusal of the service is said in words on the
// card's page, nothing recorded; a failure is the unavailable page, with
// none of its text.
func TestFreezeRefusals(t *testing.T) {
	for _, tt := range []struct {
		err    error
		status int
		want   string
	}{
		{cards.ErrAlreadyFrozen, http.StatusConflict, "already frozen"},
		{cards.ErrNotActive, http.StatusConflict, "Only an active card can be frozen."},
		{cards.ErrTerminated, http.StatusConflict, "This card is terminated"},
		{cards.ErrLocked, http.StatusConflict, "only the API can unfreeze it"},
		{cards.ErrNoIssuer, http.StatusServiceUnavailable, "no card issuer is configured"},
		{cards.ErrIssuerUnavailable, http.StatusBadGateway, "the card was left as it was"},
		{cards.ErrChanged, http.StatusConflict, "being changed by another request"},
		{errors.New("dynamodb: secret internals"), http.StatusServiceUnavailable, "Temporarily unavailable"},
	} {
		fc, log := newFakeCards(), &fakeActivity{}
		fc.err = tt.err
		srv, pool := serverWith(t, func(d *dashboard.Deps) { d.Cards, d.Activity = fc, log })
		c := client(t, srv)
		signIn(t, c, srv, pool, "owner@example.com", identity.Owner)
		res, body := post(t, c, srv, "/dashboard/cards/card1/freeze", nil)
		if res.StatusCode != tt.status || !strings.Contains(body, tt.want) || strings.Contains(body, "internals") || len(log.entries) != 0 {
			t.Errorf("%v: %d (want %d), recorded %v: %s", tt.err, res.StatusCode, tt.status, log.entries, body)
		}
	}
}

// TestCrossSiteFreezeRefused: a freeze posted from another site is
// refused before the session is read.
func TestCrossSiteFreezeRefused(t *testing.T) {
	srv, pool := server(t)
	c := client(t, srv)
	signIn(t, c, srv, pool, "owner@example.com", identity.Owner)
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/dashboard/cards/card1/freeze", strings.NewReader(url.Values{}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	if res, _ := do(t, c, req); res.StatusCode != http.StatusForbidden {
		t.Errorf("cross-site freeze: %d, want 403", res.StatusCode)
	}
}

// fakeActivity keeps what is recorded, "actor action subject".
type fakeActivity struct {
	mu      sync.Mutex
	entries []string
}

func (f *fakeActivity) Record(_ context.Context, _, actor, action, subject string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.entries = append(f.entries, actor+" "+action+" "+subject)
	return nil
}

func (f *fakeActivity) List(context.Context, string, page.Request) (page.Result[activity.Entry], error) {
	return page.Result[activity.Entry]{}, nil
}
