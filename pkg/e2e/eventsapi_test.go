package e2e_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"payments/pkg/app/apptest"
	"payments/pkg/events"
	"payments/pkg/timestamp"
	"payments/pkg/waittest"
	"payments/pkg/webhooks"
)

// apiEvent is an event as the Events API answers it, its body kept as the
// bytes of the answer.
type apiEvent struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	CreatedAt string          `json:"created_at"`
	Body      json.RawMessage `json:"body"`
}

// eventsAnswer is an answer of the Events API: a page or one event.
type eventsAnswer struct {
	status int
	raw    string
	Data   json.RawMessage `json:"data"`
	Field  string          `json:"field"`
	Code   string          `json:"code"`
	Meta   struct {
		Total      int     `json:"total"`
		NextCursor *string `json:"next_cursor"`
	} `json:"meta"`
}

func (e *hookEnv) events(t *testing.T, token, target string) eventsAnswer {
	t.Helper()
	res := apptest.AuthTestCall(t, e.log, apptest.AuthTestEvent("GET", "/api/v1"+target, "192.0.2.7", map[string]string{"authorization": "Bearer " + token}, ""))
	a := eventsAnswer{status: res.StatusCode, raw: res.Body}
	if err := json.Unmarshal([]byte(res.Body), &a); err != nil {
		t.Fatalf("GET %s: %q", target, res.Body)
	}
	return a
}

func (a eventsAnswer) items(t *testing.T) []apiEvent {
	t.Helper()
	var out []apiEvent
	if err := json.Unmarshal(a.Data, &out); err != nil {
		t.Fatalf("data: %s", a.raw)
	}
	return out
}

// walk follows next_cursor from the first page of GET /events?query and
// returns every event it listed.
func (e *hookEnv) walk(t *testing.T, token, query string) []apiEvent {
	t.Helper()
	var all []apiEvent
	cursor := ""
	for pages := 0; ; pages++ {
		target := "/events?" + query
		if cursor != "" {
			target += "&cursor=" + url.QueryEscape(cursor)
		}
		a := e.events(t, token, target)
		if a.status != http.StatusOK || pages > 100 {
			t.Fatalf("GET %s: %d %s", target, a.status, a.raw)
		}
		all = append(all, a.items(t)...)
		if a.Meta.NextCursor == nil {
			return all
		}
		cursor = *a.Meta.NextCursor
	}
}

// TestEventsAPI is the acceptance test of GET /events and GET /events/{id}:
// a walk with a small limit lists every event of the company once, newest
// first, delivered or not; the type and time filters; every body equal,
// byte for byte, to the body the webhook receiver got; another company's
// event is 404 and absent from its list; bad parameters are 400s naming
// them.
func TestEventsAPI(t *testing.T) {
	rcv := newReceiver(t, map[string][]int{"/hook": {200}})
	e := newHookEnv(t, rcv.client())
	e.setWebhook(t, rcv.URL+"/hook", false)

	// One event a minute, of kinds from three families; the last is
	// committed but never published, so never delivered.
	base := time.Now().UTC().Add(-time.Hour).Truncate(time.Millisecond)
	kinds := []events.Kind{
		events.CardCreated, events.PaymentCollect, events.CustomerCreated, events.CardFund,
		events.PayoutStatusUpdated, events.CardFundFailed, events.CustomerCreated,
	}
	var made []events.Event     // oldest first, numbered as committed
	about := map[string]int64{} // the events about each object so far (samples share their ids)
	for i, k := range kinds {
		ev, err := events.Build(e.company, events.Lookup(k)[0].Sample(), base.Add(time.Duration(i)*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if err := e.store.Commit(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
		about[ev.Object]++
		if ev, err = ev.WithSequence(about[ev.Object]); err != nil {
			t.Fatal(err)
		}
		if i < len(kinds)-1 {
			if err := e.publisher.Publish(context.Background(), ev); err != nil {
				t.Fatal(err)
			}
		}
		made = append(made, ev)
	}
	undelivered := made[len(made)-1]
	delivered := map[string][]byte{}
	waittest.Until(t, 30*time.Second, "every published event is delivered", func() bool {
		e.drain(t)
		for _, r := range rcv.requests("/hook") {
			delivered[r.header.Get(webhooks.EventIDHeader)] = r.body
		}
		return len(delivered) == len(made)-1
	})
	newest := func(evs ...events.Event) []string {
		var out []string
		for _, ev := range evs {
			out = append(out, ev.ID)
		}
		slices.Reverse(out)
		return out
	}
	ids := func(items []apiEvent) []string {
		var out []string
		for _, it := range items {
			out = append(out, it.ID)
		}
		return out
	}
	byID := map[string]events.Event{}
	for _, ev := range made {
		byID[ev.ID] = ev
	}

	// The walk: every event once, newest first, each as delivered.
	all := e.walk(t, e.token, "limit=2")
	if got, want := ids(all), newest(made...); !slices.Equal(got, want) {
		t.Fatalf("walk: got %v, want %v", got, want)
	}
	for _, it := range all {
		ev := byID[it.ID]
		if string(it.Body) != string(ev.Body) || it.Type != string(ev.Kind) || it.CreatedAt != timestamp.Format(ev.CreatedAt) {
			t.Errorf("event %s: %s %s %s, want %s", it.ID, it.Type, it.CreatedAt, it.Body, ev.Body)
		}
		if got, ok := delivered[it.ID]; ok && string(it.Body) != string(got) {
			t.Errorf("event %s: body %s, the receiver got %s", it.ID, it.Body, got)
		} else if !ok && it.ID != undelivered.ID {
			t.Errorf("event %s was never delivered", it.ID)
		}
		one := e.events(t, e.token, "/events/"+it.ID)
		var got apiEvent
		if one.status != http.StatusOK || json.Unmarshal(one.Data, &got) != nil || string(got.Body) != string(ev.Body) || got.ID != it.ID {
			t.Errorf("GET /events/%s: %d %s", it.ID, one.status, one.raw)
		}
	}

	at := func(i int) string {
		return url.QueryEscape(base.Add(time.Duration(i) * time.Minute).Format(time.RFC3339Nano))
	}
	tests := []struct {
		query string
		want  []string
	}{
		{"type=customer.created", newest(made[2], made[6])},
		{"type=card.*", newest(made[0], made[3], made[5])},
		{"type=card.fund.*", newest(made[5])},
		{"type=payment.*", newest(made[1], made[4])},
		{"type=payment.collect", newest(made[1])},
		{"type=debt.recovered", nil},
		{"created_gte=" + at(2) + "&created_lt=" + at(4), newest(made[2], made[3])},
		{"created_gte=" + at(5), newest(made[5], made[6])},
		{"created_lt=" + at(1), newest(made[0])},
		{"type=card.*&created_gte=" + at(1), newest(made[3], made[5])},
		{"type=customer.created&created_lt=" + at(6), newest(made[2])},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			for _, limit := range []string{"1", "100"} {
				if got := ids(e.walk(t, e.token, tt.query+"&limit="+limit)); !slices.Equal(got, tt.want) {
					t.Fatalf("limit %s: got %v, want %v", limit, got, tt.want)
				}
			}
			if first := e.events(t, e.token, "/events?limit=1&"+tt.query); first.Meta.Total != len(tt.want) {
				t.Fatalf("total %d, want %d", first.Meta.Total, len(tt.want))
			}
		})
	}

	// Another company: its list is empty, each of these events a 404.
	_, otherID, otherKey := e.CreateCompany(t, "Other Co")
	other := e.MustToken(t, otherID, otherKey)
	if got := e.walk(t, other, "limit=100"); len(got) != 0 {
		t.Errorf("another company lists %v", ids(got))
	}
	for _, id := range append(newest(made...), "not-a-uuid", "0196897a-5f0c-7d3e-9a41-1c2b3d4e5f60") {
		if a := e.events(t, other, "/events/"+id); a.status != http.StatusNotFound || a.Code != "EVENT_NOT_FOUND" {
			t.Errorf("GET /events/%s as another company: %d %s", id, a.status, a.raw)
		}
	}
	if a := e.events(t, "not-a-token", "/events"); a.status != http.StatusUnauthorized {
		t.Errorf("without a token: %d", a.status)
	}

	// Bad parameters: a 400 naming each.
	first := e.events(t, e.token, "/events?limit=2")
	bad := []struct{ query, field string }{
		{"type=card", "type"},
		{"type=CARD.CREATED", "type"},
		{"type=card.created.*", "type"},
		{"type=*", "type"},
		{"type=.*", "type"},
		{"type=card*", "type"},
		{"type=nothing.*", "type"},
		{"created_gte=yesterday", "created_gte"},
		{"created_lt=2025-13-01", "created_lt"},
		{"created_gte=" + at(3) + "&created_lt=" + at(2), "created_lt"},
		{"limit=0", "limit"},
		{"limit=101", "limit"},
		{"page=0", "page"},
		{"cursor=not-ours", "cursor"},
		{"limit=2&type=card.*&cursor=" + url.QueryEscape(*first.Meta.NextCursor), "cursor"},
	}
	for _, tt := range bad {
		t.Run("bad "+tt.query, func(t *testing.T) {
			a := e.events(t, e.token, "/events?"+tt.query)
			if a.status != http.StatusBadRequest || a.Field != tt.field || !strings.Contains(a.raw, tt.field) {
				t.Fatalf("%d %s, want a 400 naming %s", a.status, a.raw, tt.field)
			}
		})
	}
}
