package events_test

import (
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"payments/pkg/apidoc/apitest"
	"payments/pkg/events"
	"payments/pkg/timestamp/timestamptest"
)

// specKinds is every event name of the spec (§6.3–§6.5), typed from it, and
// the two status-update names of ours.
var specKinds = []string{
	// §6.3, §6.4
	"payment.collect", "card.created", "card.fund", "card.withdraw", "card.withdraw.failed",
	"card.terminated", "card.verification.completed",
	// §6.5
	"transaction.authorization.created", "transaction.authorization.declined",
	"transaction.preauthorization.created", "transaction.settlement.completed",
	"transaction.reversal.completed", "transaction.refund.completed",
	"transaction.funding.completed", "transaction.withdrawal.completed",
	"transaction.crossborder.charged", "transaction.terminated",
	"fee.payment_failure.charged", "fee.crossborder.charged",
	"debt.recovery.pending", "customer.created",
}

var ourKinds = []string{"payment.payout.status_updated", "payment.collect.status_updated", "card.fund.failed", "debt.recovered", "customer.kyc.updated",
	"wallet.transfer.completed", "wallet.fund.completed", "wallet.fund.failed",
	"wallet.conversion.completed", "wallet.deposit.completed", "payment.bulk.completed",
	"card.dispute.created", "card.dispute.updated"}

// shownKeys are the data keys the spec shows (§6.3, §6.4), typed from it;
// nested objects as "parent.child". Keyed by kind, or kind/form.
var shownKeys = map[string][]string{
	"payment.collect": {"transaction_id", "external_id", "status", "amount", "currency", "country", "operator",
		"phone_number", "initiated_at"},
	"card.created": {"card", "card.id", "card.customer_id", "card.brand", "card.masked_number", "card.balance",
		"card.currency", "card_issuance", "card_issuance.status", "card_issuance.transaction_id", "card_issuance.amount",
		"card_issuance.description", "card_fund", "card_fund.status", "card_fund.transaction_id", "card_fund.amount",
		"card_fund.description"},
	"card.fund":                   {"transaction_id", "card_id", "amount", "currency", "fee_amount"},
	"card.withdraw":               {"transaction_id", "card_id", "amount", "currency", "fee_amount"},
	"card.withdraw.failed":        {"transaction_id", "card_id", "amount", "error"},
	"card.verification.completed": {"cardId", "status", "message", "merchant", "merchant.name", "reference"},
	"card.terminated/company": {"cardId", "cardNumber", "status", "terminatedAt", "refundAmount", "refundProcessed",
		"reason"},
	"card.terminated/provider": {"cardId", "status", "reason", "previousBalance"},
}

func entryName(e events.Entry) string {
	if e.Form != "" {
		return string(e.Kind) + "/" + e.Form
	}
	return string(e.Kind)
}

// keyPaths returns the keys of a JSON object, nested objects' keys as
// "parent.child", sorted.
func keyPaths(t *testing.T, v any) []string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("payload %s is not an object: %v", raw, err)
	}
	var out []string
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			out = append(out, prefix+k)
			if sub, ok := v.(map[string]any); ok {
				walk(prefix+k+".", sub)
			}
		}
	}
	walk("", m)
	sort.Strings(out)
	return out
}

func TestCatalogueHasEveryKind(t *testing.T) {
	if len(specKinds) != 21 {
		t.Fatalf("the spec lists 21 kinds, the test %d", len(specKinds))
	}
	got := map[string]bool{}
	for _, k := range events.Kinds() {
		got[string(k)] = true
	}
	for _, k := range append(slices.Clone(specKinds), ourKinds...) {
		if !got[k] {
			t.Errorf("kind %s is not in the catalogue", k)
		}
		if !events.Kind(k).Known() {
			t.Errorf("Kind(%q).Known() = false", k)
		}
		delete(got, k)
	}
	for k := range got {
		t.Errorf("the catalogue has %s, which neither the spec nor the test names", k)
	}
	if events.Kind("card.funded").Known() {
		t.Error("an unknown kind is Known")
	}
	if n := len(events.Lookup(events.CardTerminated)); n != 2 {
		t.Errorf("card.terminated has %d forms, want 2", n)
	}
}

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

func TestCataloguePayloads(t *testing.T) {
	for _, e := range events.Catalogue {
		t.Run(entryName(e), func(t *testing.T) {
			if e.Sample == nil || e.Meaning == "" || len(e.IDs) == 0 {
				t.Fatalf("entry incomplete: %+v", e)
			}
			p := e.Sample()
			if p.EventKind() != e.Kind {
				t.Fatalf("sample payload is of kind %s", p.EventKind())
			}
			keys := keyPaths(t, p)
			if want, shown := shownKeys[entryName(e)]; shown || e.Shown {
				if !shown || !e.Shown {
					t.Fatalf("Shown = %v, but the spec shows this payload: %v", e.Shown, shown)
				}
				sort.Strings(want)
				if !slices.Equal(keys, want) {
					t.Fatalf("keys\n got %v\nwant %v", keys, want)
				}
			} else {
				for _, k := range keys {
					for _, part := range strings.Split(k, ".") {
						if !snakeCase.MatchString(part) {
							t.Errorf("key %q of a not-shown payload is not snake_case", k)
						}
					}
				}
			}
			for _, id := range e.IDs {
				if !slices.Contains(keys, id) {
					t.Errorf("identifier %s is not a key of the payload %v", id, keys)
				}
			}
			ev, err := events.Build("co-1", p, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			var body struct {
				Event string          `json:"event"`
				Data  json.RawMessage `json:"data"`
			}
			if err := json.Unmarshal(ev.Body, &body); err != nil {
				t.Fatal(err)
			}
			want, _ := json.Marshal(p)
			if body.Event != string(e.Kind) || ev.Kind != e.Kind || string(body.Data) != string(want) {
				t.Fatalf("Build body %s", ev.Body)
			}
			var top map[string]json.RawMessage
			json.Unmarshal(ev.Body, &top)
			if len(top) != 2 {
				t.Fatalf("body has keys other than event and data: %s", ev.Body)
			}
			if !slices.Contains(keys, e.Object) {
				t.Fatalf("object key %q is not a key of the payload %v", e.Object, keys)
			}
			if got := valueAt(t, p, e.Object); got != p.EventObject() || ev.Object != p.EventObject() || ev.Object == "" {
				t.Errorf("object: payload's %s = %q, EventObject %q, Build's Object %q", e.Object, got, p.EventObject(), ev.Object)
			}
		})
	}
}

// valueAt returns the string at key path ("parent.child") of v as JSON.
func valueAt(t *testing.T, v any, path string) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range strings.Split(path, ".") {
		obj, _ := m.(map[string]any)
		m = obj[k]
	}
	s, _ := m.(string)
	return s
}

// TestPayloadTimestamps: every timestamp of every payload, as its builder
// makes it, is written by timestamp.Format, with three decimals in UTC,
// whatever the instant's precision.
func TestPayloadTimestamps(t *testing.T) {
	for _, e := range events.Catalogue {
		ev, err := events.Build("co-1", e.Sample(), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		timestamptest.Check(t, entryName(e), ev.Body)
	}
}

// TestPaymentBuildersMatchTheCatalogue builds the payment events with their
// own constructors (payments.go) and checks their data is the catalogue's.
func TestPaymentBuildersMatchTheCatalogue(t *testing.T) {
	now := time.Now()
	for _, e := range events.Catalogue {
		var ev events.Event
		var err error
		switch e.Kind {
		case events.PaymentCollect:
			p := e.Sample()
			var d events.PaymentCollectData
			remarshal(t, p, &d)
			ev, err = events.NewPaymentCollect("co-1", d, now)
		case events.PayoutStatusUpdated, events.CollectionStatusUpdated:
			var d events.PaymentStatusData
			remarshal(t, e.Sample(), &d)
			ev, err = events.NewPaymentStatusUpdated("co-1", e.Kind, d, "https://merchant.example/notify", now)
			if ev.NotifyURL != "https://merchant.example/notify" {
				t.Errorf("%s: notify_url %q", e.Kind, ev.NotifyURL)
			}
		default:
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		want, _ := events.Build("co-1", e.Sample(), now)
		if string(ev.Body) != string(want.Body) || ev.Kind != e.Kind || ev.Object != want.Object {
			t.Errorf("%s: constructor body %s about %q, catalogue %s about %q", e.Kind, ev.Body, ev.Object, want.Body, want.Object)
		}
	}
}

func remarshal(t *testing.T, from, to any) {
	t.Helper()
	b, err := json.Marshal(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, to); err != nil {
		t.Fatal(err)
	}
}

// TestDocsDescribeEveryKind checks that docs/events.md has a section per
// kind that names every key of its payload, and that its summary names the
// object of every kind.
func TestDocsDescribeEveryKind(t *testing.T) {
	raw, err := os.ReadFile("../../docs/events.md")
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]string{}
	for _, part := range strings.Split(string(raw), "\n### ")[1:] {
		title, body, _ := strings.Cut(part, "\n")
		name := strings.Trim(strings.Fields(title)[0], "`")
		sections[name] += body
	}
	objects := summaryObjects(string(raw))
	for _, e := range events.Catalogue {
		if objects[string(e.Kind)] != e.Object {
			t.Errorf("docs/events.md, summary: the object of %s is %q, the catalogue's %q", e.Kind, objects[string(e.Kind)], e.Object)
		}
		doc, ok := sections[string(e.Kind)]
		if !ok {
			t.Errorf("docs/events.md has no section ### `%s`", e.Kind)
			continue
		}
		for _, k := range keyPaths(t, e.Sample()) {
			leaf := k[strings.LastIndex(k, ".")+1:]
			if !strings.Contains(doc, "`"+leaf+"`") && !strings.Contains(doc, `"`+leaf+`"`) {
				t.Errorf("docs/events.md, %s: key %s is not described", entryName(e), k)
			}
		}
	}
}

// summaryObjects reads the object column of the summary table of
// docs/events.md, by kind.
func summaryObjects(doc string) map[string]string {
	out := map[string]string{}
	_, table, _ := strings.Cut(doc, "\n## Summary\n")
	table, _, _ = strings.Cut(table, "\n## ")
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 7 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		kind := strings.Trim(strings.TrimSpace(cells[1]), "`")
		out[kind] = strings.Trim(strings.TrimSpace(cells[5]), "`")
	}
	return out
}

// TestDocsExamples checks every JSON example of docs/events.md: it parses,
// names a kind of the catalogue, and its data has the keys of one of that
// kind's payload forms.
func TestDocsExamples(t *testing.T) {
	raw, err := os.ReadFile("../../docs/events.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(raw), "```json\n")[1:]
	if len(blocks) < 10 {
		t.Fatalf("only %d examples", len(blocks))
	}
	for _, b := range blocks {
		example, _, _ := strings.Cut(b, "```")
		var body struct {
			Event events.Kind     `json:"event"`
			Data  json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal([]byte(example), &body); err != nil || body.Data == nil {
			if strings.Contains(example, "…") {
				continue // the envelope illustration
			}
			t.Errorf("example %q: %v", example, err)
			continue
		}
		var data map[string]any
		if err := json.Unmarshal(body.Data, &data); err != nil {
			t.Fatal(err)
		}
		timestamptest.Check(t, "the example of "+string(body.Event), []byte(example))
		got := keyPaths(t, data)
		matched := false
		for _, e := range events.Lookup(body.Event) {
			if slices.Equal(got, keyPaths(t, e.Sample())) {
				matched = true
			}
		}
		if !matched {
			t.Errorf("example of %s has keys %v, which no payload form of the catalogue has", body.Event, got)
		}
	}
}

// TestPayloadsMatchTheContract builds every kind's sample payload, as its
// builder makes it, and validates the delivery body against the kind's
// webhook in docs/openapi.yaml.
func TestPayloadsMatchTheContract(t *testing.T) {
	contract := apitest.Default(t)
	for _, e := range events.Catalogue {
		t.Run(entryName(e), func(t *testing.T) {
			ev, err := events.Build("co-1", e.Sample(), time.Now())
			if err == nil {
				ev, err = ev.WithSequence(1) // as the store writes it
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := contract.CheckWebhook(string(e.Kind), ev.Body); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestVerifySequences(t *testing.T) {
	ev := func(object string, n int64) events.Event { return events.Event{Object: object, Sequence: n} }
	tests := []struct {
		name string
		evs  []events.Event
		ok   bool
	}{
		{"none", nil, true},
		{"in any order", []events.Event{ev("a", 2), ev("b", 1), ev("a", 1), ev("a", 3)}, true},
		{"before sequences", []events.Event{ev("a", 0), ev("a", 1)}, true},
		{"a gap", []events.Event{ev("a", 1), ev("a", 3)}, false},
		{"twice", []events.Event{ev("a", 1), ev("a", 1)}, false},
		{"not from 1", []events.Event{ev("b", 2)}, false},
	}
	for _, tt := range tests {
		if err := events.VerifySequences(tt.evs); (err == nil) != tt.ok || (err != nil && !errors.Is(err, events.ErrSequenceBroken)) {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
}
