package dashboard_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"payments/pkg/activity"
	"payments/pkg/companies"
	"payments/pkg/dashboard"
	"payments/pkg/dashboard/dashboardtest"
	"payments/pkg/events"
	"payments/pkg/page"
	"payments/pkg/vault"
	"payments/pkg/webhooks"
)

// The tests' sessions are of company c1 (signIn); c2 is another company.
const ourCompany, theirCompany = "c1", "c2"

// fakeKeys are the companies' credentials: client_id cli_<company>, and
// each roll a new key sk_<company>_<n>.
type fakeKeys struct {
	mu    sync.Mutex
	rolls map[string]int
}

func (k *fakeKeys) Get(_ context.Context, id string) (companies.Company, error) {
	return companies.Company{ID: id, ClientID: "cli_" + id}, nil
}

func (k *fakeKeys) RotateKey(_ context.Context, id string) (companies.Credentials, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.rolls[id]++
	return companies.Credentials{ClientID: "cli_" + id, ClientKey: fmt.Sprintf("sk_%s_%d", id, k.rolls[id])}, nil
}

func (k *fakeKeys) Rolls(id string) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.rolls[id]
}

// memEndpoints keeps endpoints in memory (webhooks.EndpointStore), under
// the real service.
type memEndpoints struct {
	mu sync.Mutex
	m  map[string]webhooks.Endpoint
}

func (s *memEndpoints) CreateEndpoint(_ context.Context, e webhooks.Endpoint, max int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, o := range s.m {
		if o.CompanyID == e.CompanyID {
			n++
		}
	}
	if n >= max {
		return webhooks.ErrTooManyEndpoints
	}
	s.m[e.ID] = e
	return nil
}

func (s *memEndpoints) Endpoint(_ context.Context, companyID, id string) (webhooks.Endpoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.m[id]; ok && e.CompanyID == companyID {
		return e, nil
	}
	return webhooks.Endpoint{}, webhooks.ErrEndpointNotFound
}

func (s *memEndpoints) Endpoints(_ context.Context, companyID string) ([]webhooks.Endpoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []webhooks.Endpoint
	for _, e := range s.m {
		if e.CompanyID == companyID {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b webhooks.Endpoint) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

func (s *memEndpoints) UpdateEndpoint(ctx context.Context, companyID, id string, change func(*webhooks.Endpoint) error) (webhooks.Endpoint, error) {
	e, err := s.Endpoint(ctx, companyID, id)
	if err != nil {
		return e, err
	}
	if err := change(&e); err != nil {
		return webhooks.Endpoint{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[id] = e
	return e, nil
}

func (s *memEndpoints) DeleteEndpoint(ctx context.Context, companyID, id string) error {
	if _, err := s.Endpoint(ctx, companyID, id); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
	return nil
}

// The events of fakeLog: ours has a delivery and a destination, stranded
// has none; theirs is the other company's.
const (
	ourEvent      = "01900000-0000-7000-8000-000000000001"
	strandedEvent = "01900000-0000-7000-8000-000000000002"
	theirEvent    = "01900000-0000-7000-8000-000000000003"
)

// fakeLog is the delivery log of three events.
type fakeLog struct {
	mu      sync.Mutex
	records []webhooks.Record
	resent  []string
}

func newFakeLog() *fakeLog {
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	ev := func(id, company string, kind events.Kind) events.Event {
		return events.Event{ID: id, CompanyID: company, Kind: kind, CreatedAt: at,
			Body: []byte(`{"event":"` + string(kind) + `","sequence":1,"data":{"id":"w1","amount":1000}}`)}
	}
	return &fakeLog{records: []webhooks.Record{
		{Event: ev(ourEvent, ourCompany, events.WalletTransferCompleted), Dispatched: true, Deliveries: []webhooks.Delivery{{
			ID: ourEvent + "#w", Destination: webhooks.DestinationWebhook, URL: "https://example.com/hooks", Round: 1, Status: webhooks.StatusFailed,
			Attempts: []webhooks.Attempt{{Number: 1, At: at, StatusCode: 500, Duration: 120 * time.Millisecond}},
		}}},
		{Event: ev(strandedEvent, ourCompany, events.CardCreated), Dispatched: true},
		{Event: ev(theirEvent, theirCompany, events.WalletTransferCompleted), Dispatched: true},
	}}
}

func (l *fakeLog) find(companyID, id string) (webhooks.Record, error) {
	for _, r := range l.records {
		if r.Event.ID == id && r.Event.CompanyID == companyID {
			return r, nil
		}
	}
	return webhooks.Record{}, events.ErrNotFound
}

func (l *fakeLog) List(_ context.Context, companyID string, q webhooks.Query, _ page.Request) (page.Result[webhooks.Record], error) {
	var res page.Result[webhooks.Record]
	for _, r := range l.records {
		if r.Event.CompanyID == companyID && (q.Kind == "" || q.Kind == r.Event.Kind) {
			res.Items = append(res.Items, r)
		}
	}
	res.Total = len(res.Items)
	return res, nil
}

func (l *fakeLog) Get(_ context.Context, companyID, id string) (webhooks.Record, error) {
	return l.find(companyID, id)
}

func (l *fakeLog) Resend(_ context.Context, companyID, id, endpointID string) (webhooks.Record, error) {
	r, err := l.find(companyID, id)
	if err != nil {
		return r, err
	}
	if len(r.Deliveries) == 0 {
		return r, webhooks.ErrNoDestination
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.resent = append(l.resent, id+"/"+endpointID)
	return r, nil
}

func (l *fakeLog) Events(ctx context.Context, companyID string, q webhooks.EventQuery, p page.Request) (page.Result[events.Event], error) {
	rs, _ := l.List(ctx, companyID, webhooks.Query{Kind: q.Kind}, p)
	res := page.Result[events.Event]{Total: rs.Total}
	for _, r := range rs.Items {
		res.Items = append(res.Items, r.Event)
	}
	return res, nil
}

func (l *fakeLog) Event(_ context.Context, companyID, id string) (events.Event, error) {
	r, err := l.find(companyID, id)
	return r.Event, err
}

func (l *fakeLog) Resent() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.resent)
}

// developers are the Developers pages' dependencies of a test.
type developers struct {
	keys      *fakeKeys
	endpoints *webhooks.Endpoints
	store     *memEndpoints
	log       *fakeLog
	activity  dashboard.Activity
}

func newDevelopers(t *testing.T) *developers {
	local, err := vault.NewLocal([]byte(strings.Repeat("v", 32)))
	if err != nil {
		t.Fatal(err)
	}
	st := &memEndpoints{m: map[string]webhooks.Endpoint{}}
	return &developers{keys: &fakeKeys{rolls: map[string]int{}}, store: st,
		endpoints: webhooks.NewEndpoints(st, vault.New(local), false, nil), log: newFakeLog()}
}

// withDevelopers gives d the Developers pages' dependencies: fresh fakes.
func withDevelopers(t *testing.T, d *dashboard.Deps) {
	dv := newDevelopers(t)
	d.Keys, d.Endpoints, d.Log = dv.keys, dv.endpoints, dv.log
}

// developersServer is the dashboard over dependencies the test holds.
func developersServer(t *testing.T) (*httptest.Server, *dashboardtest.Pool, *developers) {
	dv := newDevelopers(t)
	srv, pool := serverWith(t, func(d *dashboard.Deps) {
		d.Keys, d.Endpoints, d.Log = dv.keys, dv.endpoints, dv.log
		dv.activity = d.Activity
	})
	return srv, pool, dv
}

// recorded returns the company's activity, oldest first, "action subject"
// each.
func (dv *developers) recorded(t *testing.T) []string {
	t.Helper()
	res, err := dv.activity.List(context.Background(), ourCompany, page.Request{Page: 1, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range slices.Backward(res.Items) {
		out = append(out, e.Action+" "+e.Subject)
	}
	return out
}

// entriesOf returns the company's activity, newest first.
func entriesOf(t *testing.T, a dashboard.Activity) []activity.Entry {
	res, err := a.List(context.Background(), ourCompany, page.Request{Page: 1, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	return res.Items
}
