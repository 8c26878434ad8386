package payments_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"payments/pkg/events"
	"payments/pkg/payments"
	"payments/pkg/wallets"
)

// TestAcceptanceSendsOneMessage: a payout's or a collection's acceptance
// sends one message, which names the payment and carries its event; the
// acceptance publishes nothing itself. The worker publishes the event when
// it takes the message, before the events of the transitions that follow,
// and a stale copy of the message publishes nothing again.
func TestAcceptanceSendsOneMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		accept func(h *harness) (payments.Payment, error)
		first  string
	}{
		{"payout", func(h *harness) (payments.Payment, error) {
			return h.svc.Payout(h.ctx, h.company, request("237670000001", "100"))
		}, "payment.payout.status_updated:PENDING"},
		{"collection", func(h *harness) (payments.Payment, error) {
			r := request("237690000002", "1000")
			r.Operator = "orange"
			return h.svc.Collect(h.ctx, h.company, r)
		}, "payment.collect:PENDING"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.fund(wallets.Payout, "1000")
			p, err := tt.accept(h)
			if err != nil {
				t.Fatal(err)
			}
			sent := h.jobs.all()
			if len(sent) != 1 {
				t.Fatalf("%d messages sent", len(sent))
			}
			j, err := payments.ParseJob(sent[0].body)
			if err != nil {
				t.Fatal(err)
			}
			if j.CompanyID != h.company || j.TransactionID != p.ID || len(j.Events) != 1 || sent[0].delay != 0 {
				t.Fatalf("message %s, delay %s", sent[0].body, sent[0].delay)
			}
			if got := h.events.statuses(t, p.ID); len(got) != 0 {
				t.Fatalf("the acceptance published %v itself", got)
			}
			submit, _ := h.jobs.take()
			if err := h.svc.HandleJob(h.ctx, submit.body); err != nil {
				t.Fatal(err)
			}
			got := h.events.statuses(t, p.ID)
			if len(got) < 2 || got[0] != tt.first || slices.Contains(got[1:], tt.first) {
				t.Fatalf("events %v: the acceptance's first, once", got)
			}
			if err := h.svc.HandleJob(h.ctx, submit.body); err != nil { // a late copy
				t.Fatal(err)
			}
			if again := h.events.statuses(t, p.ID); len(again) != len(got) {
				t.Fatalf("a stale copy published: %v", again)
			}
		})
	}
}

// TestRelay: the events the payments function hands to the worker travel in
// one message per company, which the worker publishes; a message that has
// only events is not a payment's.
func TestRelay(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fund(wallets.Payout, "1000")
	h.jobs.setFail(true) // the acceptance's own message is lost
	p, err := h.svc.Payout(h.ctx, h.company, request("237670000001", "100"))
	if err != nil {
		t.Fatal(err)
	}
	h.jobs.setFail(false)
	ev := events.Event{ID: eventOf(t, h, p.ID), CompanyID: h.company}
	if err := payments.Relay(h.jobs).Publish(h.ctx, ev); err != nil {
		t.Fatal(err)
	}
	sent := h.jobs.all()
	if len(sent) != 1 {
		t.Fatalf("%d messages", len(sent))
	}
	var body map[string]any
	if err := json.Unmarshal(sent[0].body, &body); err != nil {
		t.Fatal(err)
	}
	if len(body) != 2 || body["company_id"] != h.company {
		t.Fatalf("message %s: company_id and events only", sent[0].body)
	}
	j, _ := h.jobs.take()
	if err := h.svc.HandleJob(h.ctx, j.body); err != nil {
		t.Fatal(err)
	}
	if got := h.events.statuses(t, p.ID); !slices.Equal(got, []string{"payment.payout.status_updated:PENDING"}) {
		t.Fatalf("events %v", got)
	}
	if got := h.get(p.ID); got.Status != payments.StatusPending || len(h.jobs.all()) != 0 || h.gateway.submits != 0 {
		t.Fatalf("an events-only message handled the payment: %+v", got)
	}
}

// eventOf returns the id of the acceptance event of payment id, still
// unpublished in the outbox.
func eventOf(t *testing.T, h *harness, id string) string {
	t.Helper()
	evs, err := h.events.outbox.Unpublished(h.ctx, h.clock.Now().Add(time.Hour), 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		var body struct {
			Data struct {
				TransactionID string `json:"transaction_id"`
			} `json:"data"`
		}
		json.Unmarshal(e.Body, &body)
		if body.Data.TransactionID == id {
			return e.ID
		}
	}
	t.Fatalf("no unpublished event of %s in %v", id, evs)
	return ""
}
