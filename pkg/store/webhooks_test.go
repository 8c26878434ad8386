package store_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"payments/pkg/companies"
	"payments/pkg/events"
	"payments/pkg/page"
	"payments/pkg/store"
	"payments/pkg/store/schema"
	"payments/pkg/store/storetest"
	"payments/pkg/vault"
	"payments/pkg/webhooks"
)

func newWebhookCompany(t *testing.T, db *store.DB) string {
	t.Helper()
	id := uuid.NewString()
	now := time.Now().UTC()
	err := store.NewCompanies(db).Create(context.Background(), companies.Company{
		ID: id, Name: "Acme", KYBStatus: companies.KYBApproved, IsActive: true, ClientID: "cli_" + id,
		KeyHash: []byte("h"), KeyVersion: 1, CardSlots: 5, CreatedAt: now, UpdatedAt: now,
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// testVault returns a vault under a fresh local master key.
func testVault(t *testing.T) *vault.Vault {
	t.Helper()
	key := make([]byte, vault.DataKeySize)
	rand.Read(key)
	local, err := vault.NewLocal(key)
	if err != nil {
		t.Fatal(err)
	}
	return vault.New(local)
}

// sealConsole returns secret sealed for the console endpoint of co.
func sealConsole(t *testing.T, v *vault.Vault, co, secret string) vault.Sealed {
	t.Helper()
	sealed, err := v.Seal(context.Background(), []byte(secret), vault.WebhookSecret(co, co))
	if err != nil {
		t.Fatal(err)
	}
	return sealed
}

// consoleSecret returns the secret of the company's console endpoint,
// opened with v, "" when it has none.
func consoleSecret(t *testing.T, s *store.Webhooks, v *vault.Vault, co string) string {
	t.Helper()
	eps, err := s.Endpoints(context.Background(), co)
	if err != nil {
		t.Fatal(err)
	}
	if len(eps) == 0 || !eps[0].Console {
		return ""
	}
	if eps[0].Secret != "" {
		t.Fatalf("the console's secret read in clear: %q", eps[0].Secret)
	}
	e, err := webhooks.OpenSecrets(context.Background(), v, eps[0], time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return e.Secret
}

func TestWebhookSecrets(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	s := store.NewWebhooks(db)
	co := newWebhookCompany(t, db)
	v := testVault(t)

	if got := consoleSecret(t, s, v, co); got != "" {
		t.Fatalf("new company's secret %q", got)
	}
	for _, secret := range []string{"first", "second"} {
		if err := s.PutSecret(ctx, co, sealConsole(t, v, co, secret), time.Now()); err != nil {
			t.Fatal(err)
		}
		if got := consoleSecret(t, s, v, co); got != secret {
			t.Fatalf("secret %q; want %q", got, secret)
		}
	}
	if err := s.DeleteSecret(ctx, co); err != nil {
		t.Fatal(err)
	}
	if got := consoleSecret(t, s, v, co); got != "" {
		t.Fatalf("after delete: %q", got)
	}
	if err := s.DeleteSecret(ctx, co); err != nil {
		t.Fatalf("second delete: %v", err)
	}
	unknown := uuid.NewString()
	if err := s.PutSecret(ctx, unknown, sealConsole(t, v, unknown, "x"), time.Now()); !errors.Is(err, companies.ErrNotFound) {
		t.Fatalf("put for an unknown company: %v", err)
	}
	if err := s.DeleteSecret(ctx, unknown); !errors.Is(err, companies.ErrNotFound) {
		t.Fatalf("delete for an unknown company: %v", err)
	}
	// The company record never carries the secret.
	if err := s.PutSecret(ctx, co, sealConsole(t, v, co, "third"), time.Now()); err != nil {
		t.Fatal(err)
	}
	c, err := store.NewCompanies(db).Get(ctx, co)
	if err != nil || c.ID != co {
		t.Fatalf("company %+v, %v", c, err)
	}
}

func TestWebhookDeliveries(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	s := store.NewWebhooks(db)
	co := newWebhookCompany(t, db)
	now := time.Now().UTC().Truncate(time.Millisecond)

	ev, _ := events.Build(co, events.CardFundData{TransactionID: "t1", CardID: "c1", Amount: "1", Currency: "USD", FeeAmount: "0"}, now)
	ev.NotifyURL = "https://merchant.example/notify"
	if err := s.Commit(ctx, ev); err != nil {
		t.Fatal(err)
	}
	want, _ := ev.WithSequence(1) // the card's first event
	if got, err := s.Event(ctx, co, ev.ID); err != nil || string(got.Body) != string(want.Body) || got.NotifyURL != ev.NotifyURL {
		t.Fatalf("Event = %+v, %v", got, err)
	}
	if _, err := s.Event(ctx, uuid.NewString(), ev.ID); !errors.Is(err, events.ErrNotFound) {
		t.Fatalf("another company's event: %v", err)
	}

	d := webhooks.Delivery{
		ID: webhooks.DeliveryID(ev.ID, webhooks.DestinationWebhook, "ep-1", 0), CompanyID: co, EventID: ev.ID,
		Destination: webhooks.DestinationWebhook, URL: "https://hooks.example/x", Signature: "t=1,v1=ab",
		Status: webhooks.StatusPending, CreatedAt: now, UpdatedAt: now, ExpiresAt: ev.CreatedAt.Add(events.Retention),
	}
	if err := s.CreateDelivery(ctx, d); err != nil {
		t.Fatal(err)
	}
	// The delivery goes with its event: the same TTL.
	raw, err := db.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(db.Table), Key: store.DeliveryKeyForTest(co, d.ID)})
	if err != nil {
		t.Fatal(err)
	}
	if exp, ok := raw.Item[schema.AttrExpiresAt].(*types.AttributeValueMemberN); !ok || exp.Value != fmt.Sprint(ev.CreatedAt.Add(events.Retention).Unix()) {
		t.Fatalf("delivery %s = %v, want its event's end", schema.AttrExpiresAt, raw.Item[schema.AttrExpiresAt])
	}
	if err := s.CreateDelivery(ctx, d); !errors.Is(err, webhooks.ErrDeliveryExists) {
		t.Fatalf("second create: %v", err)
	}
	nd := d
	nd.ID, nd.Destination, nd.Signature = webhooks.DeliveryID(ev.ID, webhooks.DestinationNotifyURL, "", 0), webhooks.DestinationNotifyURL, ""
	if err := s.CreateDelivery(ctx, nd); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delivery(ctx, co, ev.ID+"#webhook#r9"); !errors.Is(err, webhooks.ErrDeliveryNotFound) {
		t.Fatalf("unknown delivery: %v", err)
	}
	if _, err := s.Delivery(ctx, uuid.NewString(), d.ID); !errors.Is(err, webhooks.ErrDeliveryNotFound) {
		t.Fatalf("another company's delivery: %v", err)
	}

	// Two copies record attempt 1 at once: exactly one wins.
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			errs[i] = s.RecordAttempt(ctx, d, webhooks.Attempt{Number: 1, At: now, StatusCode: 500, Duration: 12 * time.Millisecond}, webhooks.StatusPending, now)
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, webhooks.ErrAttemptTaken):
			t.Fatal(err)
		}
	}
	if won != 1 {
		t.Fatalf("%d copies recorded attempt 1", won)
	}
	if err := s.RecordAttempt(ctx, d, webhooks.Attempt{Number: 3, At: now, Error: "x"}, webhooks.StatusPending, now); !errors.Is(err, webhooks.ErrAttemptTaken) {
		t.Fatalf("attempt 3 before 2: %v", err)
	}
	if err := s.RecordAttempt(ctx, d, webhooks.Attempt{Number: 2, At: now, Error: "timeout"}, webhooks.StatusFailed, now); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordAttempt(ctx, d, webhooks.Attempt{Number: 3, At: now, StatusCode: 200}, webhooks.StatusDelivered, now); !errors.Is(err, webhooks.ErrAttemptTaken) {
		t.Fatalf("attempt after FAILED: %v", err)
	}
	for _, n := range []int{2, 1} {
		if err := s.MarkQueued(ctx, co, d.ID, n); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Delivery(ctx, co, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != webhooks.StatusFailed || got.Queued != 2 || got.Signature != d.Signature || got.URL != d.URL ||
		len(got.Attempts) != 2 || got.Attempts[0].StatusCode != 500 || got.Attempts[0].Duration != 12*time.Millisecond ||
		got.Attempts[1].Error != "timeout" || !got.Attempts[0].At.Equal(now) {
		t.Fatalf("delivery %+v", got)
	}

	// The log reads the event with both deliveries, webhook first.
	if err := s.MarkDispatched(ctx, co, ev.ID, now); err != nil {
		t.Fatal(err)
	}
	r, err := s.Record(ctx, co, ev.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Event.ID != ev.ID || !r.Dispatched || len(r.Deliveries) != 2 ||
		r.Deliveries[0].Destination != webhooks.DestinationWebhook || r.Deliveries[1].Destination != webhooks.DestinationNotifyURL {
		t.Fatalf("record %+v", r)
	}
	if _, err := s.Record(ctx, uuid.NewString(), ev.ID); !errors.Is(err, events.ErrNotFound) {
		t.Fatalf("another company's record: %v", err)
	}
	if err := s.MarkDispatched(ctx, co, uuid.NewString(), now); !errors.Is(err, events.ErrNotFound) {
		t.Fatalf("dispatch of an unknown event: %v", err)
	}

	// The event the worker took left the outbox's indexes, and its
	// deliveries never were in them.
	ob := store.NewOutbox(db)
	for name, read := range map[string]func(context.Context, time.Time, int) ([]events.Event, error){
		"unpublished": ob.Unpublished, "undispatched": ob.Undispatched,
	} {
		if evs, err := read(ctx, now.Add(time.Hour), 100); err != nil || len(evs) != 0 {
			t.Fatalf("%s %+v, %v", name, evs, err)
		}
	}
}

func TestWebhookRecordsByDate(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	s := store.NewWebhooks(db)
	co := newWebhookCompany(t, db)
	// Three events a second apart, an hour ago: the clock is the caller's.
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	var ids []string
	for i := range 3 {
		ev, _ := events.Build(co, events.CustomerCreatedData{CustomerID: uuid.NewString()}, base.Add(time.Duration(i)*time.Second))
		if err := s.Commit(ctx, ev); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ev.ID)
	}
	other := newWebhookCompany(t, db)
	ev, _ := events.Build(other, events.CustomerCreatedData{CustomerID: uuid.NewString()}, time.Now())
	if err := s.Commit(ctx, ev); err != nil {
		t.Fatal(err)
	}
	midTime := base.Add(time.Second)
	tests := []struct {
		name     string
		from, to time.Time
		want     []string
	}{
		{"all, newest first", time.Time{}, time.Time{}, []string{ids[2], ids[1], ids[0]}},
		{"from the second", midTime, time.Time{}, []string{ids[2], ids[1]}},
		{"before the second", time.Time{}, midTime, []string{ids[0]}},
		{"from the second to the third", midTime, base.Add(2 * time.Second), []string{ids[1]}},
		{"after the third", base.Add(3 * time.Second), time.Time{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs, err := s.Records(ctx, co, webhooks.Query{From: tt.from, To: tt.to}, page.Request{Page: 1, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range rs.Items {
				got = append(got, r.Event.ID)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
			}
		})
	}
}

// TestWebhookRecordsPages pages the delivery log with and without a status
// filter: each event comes with its own deliveries even when a page of
// DynamoDB ends between an event and its deliveries.
func TestWebhookRecordsPages(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	s := store.NewWebhooks(db)
	co := newWebhookCompany(t, db)
	now := time.Now().UTC().Truncate(time.Millisecond)
	// Event i: SKIPPED when i%4 == 0, DELIVERED (webhook) when 1, FAILED
	// (webhook failed, notify_url delivered) when 2, PENDING when 3.
	status := []webhooks.Status{webhooks.StatusSkipped, webhooks.StatusDelivered, webhooks.StatusFailed, webhooks.StatusPending}
	var all []string // newest first
	byStatus := map[webhooks.Status][]string{}
	deliveries := map[string]int{}
	for i := range 14 {
		ev, err := events.Build(co, events.CustomerCreatedData{CustomerID: uuid.NewString()}, now.Add(time.Duration(i)*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Commit(ctx, ev); err != nil {
			t.Fatal(err)
		}
		deliver := func(dest webhooks.Destination, final webhooks.Status) {
			d := webhooks.Delivery{ID: webhooks.DeliveryID(ev.ID, dest, "ep-1", 0), CompanyID: co, EventID: ev.ID, Destination: dest,
				URL: "https://example.com/" + string(dest), Status: webhooks.StatusPending, CreatedAt: now, UpdatedAt: now}
			if err := s.CreateDelivery(ctx, d); err != nil {
				t.Fatal(err)
			}
			if err := s.RecordAttempt(ctx, d, webhooks.Attempt{Number: 1, At: now, StatusCode: 200}, final, now); err != nil {
				t.Fatal(err)
			}
			deliveries[ev.ID]++
		}
		switch status[i%4] {
		case webhooks.StatusDelivered:
			deliver(webhooks.DestinationWebhook, webhooks.StatusDelivered)
		case webhooks.StatusFailed:
			deliver(webhooks.DestinationWebhook, webhooks.StatusFailed)
			deliver(webhooks.DestinationNotifyURL, webhooks.StatusDelivered)
		}
		if status[i%4] != webhooks.StatusPending {
			if err := s.MarkDispatched(ctx, co, ev.ID, now); err != nil {
				t.Fatal(err)
			}
		}
		all = append([]string{ev.ID}, all...)
		byStatus[status[i%4]] = append([]string{ev.ID}, byStatus[status[i%4]]...)
	}
	tests := []struct {
		name string
		q    webhooks.Query
		want []string
	}{
		{"all", webhooks.Query{}, all},
		{"kind", webhooks.Query{Kind: events.CustomerCreated}, all},
		{"other kind", webhooks.Query{Kind: events.PayoutStatusUpdated}, nil},
		{"delivered", webhooks.Query{Status: webhooks.StatusDelivered}, byStatus[webhooks.StatusDelivered]},
		{"failed", webhooks.Query{Status: webhooks.StatusFailed}, byStatus[webhooks.StatusFailed]},
		{"skipped", webhooks.Query{Status: webhooks.StatusSkipped}, byStatus[webhooks.StatusSkipped]},
		{"pending", webhooks.Query{Status: webhooks.StatusPending}, byStatus[webhooks.StatusPending]},
	}
	for _, tt := range tests {
		for _, limit := range []int{1, 2, 5, 100} {
			t.Run(fmt.Sprintf("%s, limit %d", tt.name, limit), func(t *testing.T) {
				var got []string
				for p := (page.Request{Page: 1, Limit: limit}); ; {
					res, err := s.Records(ctx, co, tt.q, p)
					if err != nil {
						t.Fatal(err)
					}
					if res.Total != len(tt.want) || len(res.Items) > limit {
						t.Fatalf("page %d: %d items, total %d; want total %d", p.Page, len(res.Items), res.Total, len(tt.want))
					}
					for _, r := range res.Items {
						if len(r.Deliveries) != deliveries[r.Event.ID] {
							t.Fatalf("event %s with %d deliveries, want %d", r.Event.ID, len(r.Deliveries), deliveries[r.Event.ID])
						}
						if tt.q.Status != "" && r.Status() != tt.q.Status {
							t.Fatalf("event %s is %s", r.Event.ID, r.Status())
						}
						got = append(got, r.Event.ID)
					}
					if res.Next == "" {
						break
					}
					p = p.Following(res.Next, res.Total)
				}
				if !slices.Equal(got, tt.want) {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
			})
		}
		t.Run(tt.name+", page 2 by number", func(t *testing.T) {
			res, err := s.Records(ctx, co, tt.q, page.Request{Page: 2, Limit: 2})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range res.Items {
				got = append(got, r.Event.ID)
			}
			if want := tt.want[min(2, len(tt.want)):min(4, len(tt.want))]; !slices.Equal(got, want) || res.Total != len(tt.want) {
				t.Fatalf("got %v (total %d), want %v", got, res.Total, want)
			}
		})
	}
}

// TestWebhookEndpointsConcurrently: concurrent creates never pass the
// limit, and concurrent changes of one endpoint are each applied once,
// none lost.
func TestWebhookEndpointsConcurrently(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	s := store.NewWebhooks(db)
	co := newWebhookCompany(t, db)
	now := time.Now().UTC().Truncate(time.Millisecond)
	v := testVault(t)

	const tries = webhooks.MaxEndpoints + 6
	errs := make([]error, tries)
	var wg sync.WaitGroup
	for i := range tries {
		wg.Go(func() {
			e := webhooks.Endpoint{
				ID: uuid.NewString(), CompanyID: co, URL: "https://hooks.example.com/" + fmt.Sprint(i),
				EnabledEvents: []string{webhooks.AllEvents}, Status: webhooks.EndpointEnabled, Secret: "whsec_x", CreatedAt: now, UpdatedAt: now,
			}
			if _, errs[i] = webhooks.SealSecrets(ctx, v, &e); errs[i] == nil {
				errs[i] = s.CreateEndpoint(ctx, e, webhooks.MaxEndpoints)
			}
		})
	}
	wg.Wait()
	var made, refused int
	for _, err := range errs {
		switch {
		case err == nil:
			made++
		case errors.Is(err, webhooks.ErrTooManyEndpoints):
			refused++
		default:
			t.Fatal(err)
		}
	}
	eps, err := s.Endpoints(ctx, co)
	if err != nil || made != webhooks.MaxEndpoints || refused != tries-made || len(eps) != made {
		t.Fatalf("%d made, %d refused, %d listed (%v)", made, refused, len(eps), err)
	}

	// Eight concurrent changes of one endpoint each add a kind: all eight
	// are there at the end.
	id := eps[0].ID
	kinds := []string{"card.fund", "card.withdraw", "card.created", "card.terminated", "customer.created", "debt.recovered", "payment.collect", "transaction.refund.completed"}
	if _, err := s.UpdateEndpoint(ctx, co, id, func(e *webhooks.Endpoint) error { e.EnabledEvents = nil; return nil }); err != nil {
		t.Fatal(err)
	}
	for _, k := range kinds {
		wg.Go(func() {
			if _, err := s.UpdateEndpoint(ctx, co, id, func(e *webhooks.Endpoint) error {
				e.EnabledEvents = append(e.EnabledEvents, k)
				return nil
			}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got, err := s.Endpoint(ctx, co, id)
	slices.Sort(got.EnabledEvents)
	slices.Sort(kinds)
	if err != nil || !slices.Equal(got.EnabledEvents, kinds) {
		t.Fatalf("enabled_events %v, want %v (%v)", got.EnabledEvents, kinds, err)
	}
	if _, err := s.UpdateEndpoint(ctx, uuid.NewString(), id, func(*webhooks.Endpoint) error { return nil }); !errors.Is(err, webhooks.ErrEndpointNotFound) {
		t.Fatalf("another company's endpoint: %v", err)
	}
}
