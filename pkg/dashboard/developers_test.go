package dashboard_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"payments/pkg/identity"
	"payments/pkg/webhooks"
)

// TestDevelopersRoles: the Developers pages, reading included, are the
// owner's and the developer's; finance and viewer get 403 and roll
// nothing.
func TestDevelopersRoles(t *testing.T) {
	srv, pool, dv := developersServer(t)
	for _, tt := range []struct {
		role identity.Role
		want int
	}{{identity.Owner, http.StatusOK}, {identity.Developer, http.StatusOK}, {identity.Finance, http.StatusForbidden}, {identity.Viewer, http.StatusForbidden}} {
		t.Run(string(tt.role), func(t *testing.T) {
			c := client(t, srv)
			signIn(t, c, srv, pool, string(tt.role)+"@example.com", tt.role)
			before := dv.keys.Rolls(ourCompany)
			for _, path := range []string{"/dashboard/developers", "/dashboard/developers/webhooks", "/dashboard/developers/deliveries", "/dashboard/developers/events"} {
				if res, _ := get(t, c, srv, path); res.StatusCode != tt.want {
					t.Errorf("GET %s: %d, want %d", path, res.StatusCode, tt.want)
				}
			}
			res, body := post(t, c, srv, "/dashboard/developers/roll-key", url.Values{"confirm": {"yes"}})
			if res.StatusCode != tt.want {
				t.Errorf("POST roll-key: %d, want %d", res.StatusCode, tt.want)
			}
			rolled := dv.keys.Rolls(ourCompany) - before
			if tt.want == http.StatusForbidden && (rolled != 0 || !strings.Contains(body, "does not allow this")) {
				t.Errorf("a refused roll rolled %d keys: %s", rolled, body)
			}
			if tt.want == http.StatusOK && rolled != 1 {
				t.Errorf("a roll rolled %d keys", rolled)
			}
			res, _ = post(t, c, srv, "/dashboard/developers/webhooks", url.Values{"url": {"https://example.com/h"}, "events": {"*"}})
			if res.StatusCode != tt.want {
				t.Errorf("POST webhooks: %d, want %d", res.StatusCode, tt.want)
			}
		})
	}
}

// TestRollKey: the key page shows the client_id; rolling asks to confirm
// and says what happens to the old key; the confirmed POST answers the new
// key itself, once, in the field named Client key (no redirect, nothing in
// a URL, not stored by caches), and records it.
func TestRollKey(t *testing.T) {
	srv, pool, dv := developersServer(t)
	c := client(t, srv)
	signIn(t, c, srv, pool, "ada@example.com", identity.Developer)
	_, body := get(t, c, srv, "/dashboard/developers")
	for _, want := range []string{"<h1>API keys</h1>", "cli_c1", ">Roll key</button>", `aria-current="page">API keys`} {
		if !strings.Contains(body, want) {
			t.Errorf("the keys page lacks %q", want)
		}
	}
	_, body = get(t, c, srv, "/dashboard/developers/roll-key")
	for _, want := range []string{"<h1>Roll the client key</h1>", "stops working", "tokens already made with it are refused", ">Yes, roll the key</button>"} {
		if !strings.Contains(body, want) {
			t.Errorf("the confirmation lacks %q", want)
		}
	}
	if strings.Contains(body, "sk_") || dv.keys.Rolls(ourCompany) != 0 {
		t.Fatal("the confirmation page rolled the key")
	}

	res, body := post(t, c, srv, "/dashboard/developers/roll-key", nil)
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(body, "Confirm that you want to roll the key.") || dv.keys.Rolls(ourCompany) != 0 {
		t.Errorf("an unconfirmed roll: %d, %d rolls: %s", res.StatusCode, dv.keys.Rolls(ourCompany), body)
	}

	noRedirect := &http.Client{Jar: c.Jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, body = post(t, noRedirect, srv, "/dashboard/developers/roll-key", url.Values{"confirm": {"yes"}})
	if res.StatusCode != http.StatusOK || res.Header.Get("Location") != "" {
		t.Fatalf("the roll: %d, Location %q", res.StatusCode, res.Header.Get("Location"))
	}
	if got := res.Header.Get("Cache-Control"); got != "no-store" {
		t.Errorf("Cache-Control %q", got)
	}
	for _, want := range []string{`<label for="client-key">Client key</label>`, `id="client-key" type="text" readonly value="sk_c1_1"`,
		`data-copy="client-key">Copy</button>`, "not shown again"} {
		if !strings.Contains(body, want) {
			t.Errorf("the new key page lacks %q: %s", want, body)
		}
	}
	if got, want := dv.recorded(t), []string{"Client key rolled cli_c1"}; !slices.Equal(got, want) {
		t.Errorf("recorded %q, want %q", got, want)
	}
	if e := entriesOf(t, dv.activity); len(e) != 1 || e[0].Actor != "ada@example.com" {
		t.Errorf("the roll's entry: %+v", e)
	}
	// The keys page afterwards shows no key.
	if _, body = get(t, c, srv, "/dashboard/developers"); strings.Contains(body, "sk_c1") {
		t.Error("the keys page shows the key after the roll")
	}
}

// TestWebhookEndpoints: a create refused names its field; a create shows
// the secret once; the list and the detail show the endpoint; a rotation
// with overlap shows the new secret and when the old one stops; disable
// and delete; each change recorded.
func TestWebhookEndpoints(t *testing.T) {
	srv, pool, dv := developersServer(t)
	c := client(t, srv)
	signIn(t, c, srv, pool, "ada@example.com", identity.Owner)
	for _, tt := range []struct {
		form url.Values
		want string
	}{
		{url.Values{"url": {"http://example.com/h"}, "events": {"*"}}, "Endpoint URL must be an absolute https URL with a host."},
		{url.Values{"url": {"https://10.0.0.1/h"}, "events": {"*"}}, "Endpoint URL must not be"},
		{url.Values{"url": {"https://example.com/h"}}, "Events: choose All events or at least one event."},
		{url.Values{"url": {"https://example.com/h"}, "events": {"*", "card.created"}}, "Events: All events takes every event; leave the others unchecked."},
	} {
		res, body := post(t, c, srv, "/dashboard/developers/webhooks", tt.form)
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(body, tt.want) {
			t.Errorf("%v: %d, want 400 saying %q", tt.form, res.StatusCode, tt.want)
		}
		if !strings.Contains(body, `value="`+tt.form.Get("url")+`"`) {
			t.Errorf("%v: the form lost the URL", tt.form)
		}
	}

	res, body := post(t, c, srv, "/dashboard/developers/webhooks", url.Values{"url": {"https://example.com/hooks"}, "description": {"Orders"},
		"events": {"wallet.transfer.completed", "card.created"}})
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `<label for="signing-secret">Signing secret</label>`) || !strings.Contains(body, `value="whsec_`) {
		t.Fatalf("create: %d %s", res.StatusCode, body)
	}
	es, _ := dv.endpoints.List(context.Background(), ourCompany)
	if len(es) != 1 || es[0].URL != "https://example.com/hooks" || !slices.Equal(es[0].EnabledEvents, []string{"wallet.transfer.completed", "card.created"}) {
		t.Fatalf("endpoints %+v", es)
	}
	id := es[0].ID
	_, body = get(t, c, srv, "/dashboard/developers/webhooks")
	for _, want := range []string{"https://example.com/hooks", "wallet.transfer.completed, card.created", "enabled", "Orders"} {
		if !strings.Contains(body, want) {
			t.Errorf("the list lacks %q", want)
		}
	}
	if strings.Contains(body, "whsec_") {
		t.Error("the list shows a secret")
	}

	res, body = post(t, c, srv, "/dashboard/developers/webhooks/"+id+"/rotate", url.Values{"overlap": {"5"}})
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(body, "Old secret keeps signing: choose") {
		t.Errorf("rotate with an overlap not offered: %d", res.StatusCode)
	}
	res, body = post(t, c, srv, "/dashboard/developers/webhooks/"+id+"/rotate", url.Values{"overlap": {"24"}})
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `value="whsec_`) || !strings.Contains(body, "keeps signing beside it until") {
		t.Errorf("rotate: %d %s", res.StatusCode, body)
	}
	if _, body = get(t, c, srv, "/dashboard/developers/webhooks/"+id); !strings.Contains(body, "<dt>Old secret signs until</dt><dd>20") {
		t.Errorf("the detail does not show the overlap: %s", body)
	}

	res, body = post(t, c, srv, "/dashboard/developers/webhooks/"+id+"/status", url.Values{"status": {"disabled"}})
	if res.Request.URL.Path != "/dashboard/developers/webhooks/"+id || !strings.Contains(body, "The endpoint is disabled") || !strings.Contains(body, ">Enable endpoint</button>") {
		t.Errorf("disable: %s %s", res.Request.URL, body)
	}
	if e, _ := dv.endpoints.Get(context.Background(), ourCompany, id); e.Status != webhooks.EndpointDisabled {
		t.Errorf("status %s after disable", e.Status)
	}
	res, body = post(t, c, srv, "/dashboard/developers/webhooks/"+id+"/delete", nil)
	if res.Request.URL.Path != "/dashboard/developers/webhooks" || !strings.Contains(body, "The endpoint is deleted.") || strings.Contains(body, "example.com/hooks") {
		t.Errorf("delete: %s %s", res.Request.URL, body)
	}
	want := []string{"Webhook endpoint created " + id, "Webhook endpoint secret rotated " + id, "Webhook endpoint disabled " + id, "Webhook endpoint deleted " + id}
	if got := dv.recorded(t); !slices.Equal(got, want) {
		t.Errorf("recorded %q, want %q", got, want)
	}
}

// TestDevelopersTenancy: another company's endpoint or event in the URL is
// the 404 page, as an unknown id, and changes nothing.
func TestDevelopersTenancy(t *testing.T) {
	srv, pool, dv := developersServer(t)
	theirs, err := dv.endpoints.Create(context.Background(), theirCompany, webhooks.EndpointInput{URL: ptr("https://example.org/h"), EnabledEvents: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	c := client(t, srv)
	signIn(t, c, srv, pool, "ada@example.com", identity.Owner)
	for _, id := range []string{theirs.ID, "01900000-0000-7000-8000-0000000000ff", "not-an-id"} {
		for _, req := range []struct{ method, path string }{
			{"GET", "/dashboard/developers/webhooks/" + id},
			{"POST", "/dashboard/developers/webhooks/" + id + "/rotate?overlap=24"},
			{"POST", "/dashboard/developers/webhooks/" + id + "/status"},
			{"POST", "/dashboard/developers/webhooks/" + id + "/delete"},
		} {
			check404(t, c, srv, req.method, req.path)
		}
	}
	for _, id := range []string{theirEvent, "01900000-0000-7000-8000-0000000000ff"} {
		for _, req := range []struct{ method, path string }{
			{"GET", "/dashboard/developers/deliveries/" + id},
			{"POST", "/dashboard/developers/deliveries/" + id + "/resend"},
			{"GET", "/dashboard/developers/events/" + id},
		} {
			check404(t, c, srv, req.method, req.path)
		}
	}
	if e, err := dv.endpoints.Get(context.Background(), theirCompany, theirs.ID); err != nil || e.Status != webhooks.EndpointEnabled || e.PreviousExpiresAt != (time.Time{}) {
		t.Errorf("their endpoint changed: %+v %v", e, err)
	}
	if r := dv.log.Resent(); len(r) != 0 {
		t.Errorf("resent %q", r)
	}
	if got := dv.recorded(t); len(got) != 0 {
		t.Errorf("recorded %q", got)
	}
	_, body := get(t, c, srv, "/dashboard/developers/deliveries")
	if strings.Contains(body, theirEvent) || !strings.Contains(body, ourEvent) {
		t.Errorf("the delivery log shows another company's event or not ours: %s", body)
	}
}

func check404(t *testing.T, c *http.Client, srv *httptest.Server, method, path string) {
	t.Helper()
	var res *http.Response
	var body string
	if method == "GET" {
		res, body = get(t, c, srv, path)
	} else {
		p, q, _ := strings.Cut(path, "?")
		form, _ := url.ParseQuery(q)
		res, body = post(t, c, srv, p, form)
	}
	if res.StatusCode != http.StatusNotFound || !strings.Contains(body, "<h1>Page not found</h1>") {
		t.Errorf("%s %s: %d, want the 404 page", method, path, res.StatusCode)
	}
}

func ptr[T any](v T) *T { return &v }

// TestDeliveryLogAndEvents: the delivery log lists the company's events
// with their status, an event's deliveries and attempts, its resend
// (recorded) or the reason it cannot be; the events list, its filter,
// and an event's body indented.
func TestDeliveryLogAndEvents(t *testing.T) {
	srv, pool, dv := developersServer(t)
	c := client(t, srv)
	signIn(t, c, srv, pool, "ada@example.com", identity.Developer)
	_, body := get(t, c, srv, "/dashboard/developers/deliveries")
	for _, want := range []string{"wallet.transfer.completed", "FAILED", "card.created", "SKIPPED"} {
		if !strings.Contains(body, want) {
			t.Errorf("the delivery log lacks %q", want)
		}
	}
	_, body = get(t, c, srv, "/dashboard/developers/deliveries?event=card.created")
	if strings.Contains(body, ourEvent) || !strings.Contains(body, strandedEvent) {
		t.Error("the filter by event type does not filter")
	}
	for _, q := range []string{"event=no.such", "page=0", "page=x"} {
		if res, _ := get(t, c, srv, "/dashboard/developers/deliveries?"+q); res.StatusCode != http.StatusBadRequest {
			t.Errorf("?%s: %d, want 400", q, res.StatusCode)
		}
	}
	_, body = get(t, c, srv, "/dashboard/developers/deliveries/"+ourEvent)
	for _, want := range []string{"https://example.com/hooks", "HTTP 500", "120 ms", ">Resend</button>"} {
		if !strings.Contains(body, want) {
			t.Errorf("the event's deliveries lack %q", want)
		}
	}
	res, body := post(t, c, srv, "/dashboard/developers/deliveries/"+ourEvent+"/resend", nil)
	if res.Request.URL.Path != "/dashboard/developers/deliveries/"+ourEvent || !strings.Contains(body, "queued for delivery again") {
		t.Errorf("resend: %s %s", res.Request.URL, body)
	}
	res, body = post(t, c, srv, "/dashboard/developers/deliveries/"+strandedEvent+"/resend", nil)
	if res.StatusCode != http.StatusConflict || !strings.Contains(body, "This event has nowhere to go") {
		t.Errorf("a resend with no destination: %d %s", res.StatusCode, body)
	}
	if got, want := dv.log.Resent(), []string{ourEvent + "/"}; !slices.Equal(got, want) {
		t.Errorf("resent %q, want %q", got, want)
	}
	if got, want := dv.recorded(t), []string{"Webhook delivery resent " + ourEvent}; !slices.Equal(got, want) {
		t.Errorf("recorded %q, want %q", got, want)
	}

	_, body = get(t, c, srv, "/dashboard/developers/events")
	if !strings.Contains(body, ourEvent) || !strings.Contains(body, strandedEvent) || strings.Contains(body, theirEvent) {
		t.Errorf("the events: %s", body)
	}
	_, body = get(t, c, srv, "/dashboard/developers/events/"+ourEvent)
	if !strings.Contains(body, "<h1>Event wallet.transfer.completed</h1>") || !strings.Contains(body, "{\n  &#34;event&#34;: &#34;wallet.transfer.completed&#34;,\n  &#34;sequence&#34;: 1,") {
		t.Errorf("the event's body is not shown indented: %s", body)
	}
}
