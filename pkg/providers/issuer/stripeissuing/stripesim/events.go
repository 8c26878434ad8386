package stripesim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/stripe/stripe-go/v85"
	"github.com/stripe/stripe-go/v85/webhook"
)

// eventAuthorizationRequest is the event Stripe asks us with, and waits
// for the answer to.
const eventAuthorizationRequest = "issuing_authorization.request"

// event is an event kept for Deliver.
type event struct {
	id, typ   string
	body      []byte
	delivered bool // or dropped: never sent again
}

// newEvent returns the event of type typ about object, as Stripe renders
// it for this library's API version.
func (s *Sim) newEvent(r *request, typ string, object []byte, prev map[string]any) *stripe.Event {
	e := &stripe.Event{
		ID: newID("evt_"), Object: "event", APIVersion: stripe.APIVersion,
		Created: s.cfg.Now().Unix(), Livemode: false, PendingWebhooks: 1,
		Type: stripe.EventType(typ),
		Data: &stripe.EventData{Raw: object, PreviousAttributes: prev},
	}
	if r != nil {
		e.Request = &stripe.EventRequest{ID: newID("req_"), IdempotencyKey: r.key}
	}
	return e
}

// emit keeps the event of type typ about object for Deliver, or drops it
// (DropNext, then Config.DropEvents and Drop). s.mu is held.
func (s *Sim) emit(r *request, typ string, object []byte, prev map[string]any) {
	e := s.newEvent(r, typ, object, prev)
	b, err := json.Marshal(e)
	if err != nil {
		panic(err) // an Event of raw JSON always marshals
	}
	ev := &event{id: e.ID, typ: typ, body: b}
	if s.dropNext > 0 || s.dropTypes[typ] {
		s.dropNext = max(0, s.dropNext-1)
		ev.delivered = true
		s.dropped = append(s.dropped, typ+" "+e.ID)
	}
	s.events = append(s.events, ev)
}

// Drop drops, from now on, every delivery of the event types given, as
// Config.DropEvents does.
func (s *Sim) Drop(types ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, typ := range types {
		s.dropTypes[typ] = true
	}
}

// DropNext drops the deliveries of the next n events, whatever their type.
func (s *Sim) DropNext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropNext = n
}

// Dropped returns the events dropped, oldest first, each as its type and
// id ("issuing_transaction.created evt_…").
func (s *Sim) Dropped() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.dropped)
}

// changes is an issuing_*.updated event's previous_attributes: the
// top-level fields whose JSON differs between before and after, each with
// its value before.
func changes(before, after []byte) map[string]any {
	var b, a map[string]json.RawMessage
	if json.Unmarshal(before, &b) != nil || json.Unmarshal(after, &a) != nil {
		panic("stripesim: an object that is no JSON object")
	}
	prev := map[string]any{}
	for k, v := range b {
		if !bytes.Equal(v, a[k]) {
			prev[k] = v
		}
	}
	return prev
}

// post sends an event's body to the webhook URL, signed now, with the
// Accept header Stripe sends: application/json for an
// issuing_authorization.request, whose answer it reads.
func (s *Sim) post(ctx context.Context, body []byte, accept string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.cfg.WebhookURL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{
		Payload: body, Secret: s.cfg.WebhookSecret, Timestamp: s.cfg.Now(),
	})
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("Accept", accept)
	req.Header.Set("User-Agent", "Stripe/1.0 (+https://stripe.com/docs/webhooks)")
	req.Header.Set("Stripe-Signature", signed.Header)
	return s.cfg.Client.Do(req)
}

// Deliver sends, in order, every event not yet delivered: a delivery
// answered 2xx is done, any other stays pending and is sent again by the
// next Deliver, as Stripe retries. It returns the failed deliveries'
// errors, joined. Without a WebhookURL it sends nothing.
func (s *Sim) Deliver(ctx context.Context) error {
	if s.cfg.WebhookURL == "" {
		return nil
	}
	s.delivering.Lock()
	defer s.delivering.Unlock()
	s.mu.Lock()
	var todo []*event
	for _, e := range s.events {
		if !e.delivered {
			todo = append(todo, e)
		}
	}
	s.mu.Unlock()
	var errs []error
	for _, e := range todo {
		resp, err := s.post(ctx, e.body, "*/*; q=0.5, application/xml")
		if err != nil {
			errs = append(errs, fmt.Errorf("stripesim: %s %s: %w", e.typ, e.id, err))
			continue
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			errs = append(errs, fmt.Errorf("stripesim: %s %s: answered %s", e.typ, e.id, resp.Status))
			continue
		}
		s.mu.Lock()
		e.delivered = true
		s.mu.Unlock()
	}
	if len(todo) > 0 {
		s.saveOrLog()
	}
	return errors.Join(errs...)
}

// Run delivers the pending events every interval until ctx ends, for
// local runs.
func (s *Sim) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_ = s.Deliver(ctx)
		}
	}
}

// decision is the answer to an issuing_authorization.request event.
type decision struct {
	approved bool
	amount   int64 // 0: the requested amount
	metadata map[string]string
	reason   stripe.IssuingAuthorizationRequestHistoryReason
}

// ask sends the issuing_authorization.request event about a, pending, and
// waits up to DecisionTimeout for the decision in the answer's body:
// Stripe's real-time authorization. An answer late, failed, or off the
// documented format (a violation when answered 200) is decided by
// Config.StandIn, with the reason webhook_timeout or webhook_error.
func (s *Sim) ask(ctx context.Context, r *request, a []byte, controllable bool, requested int64) decision {
	e := s.newEvent(r, eventAuthorizationRequest, a, nil)
	body, err := json.Marshal(e)
	if err != nil {
		panic(err)
	}
	declined := func(reason stripe.IssuingAuthorizationRequestHistoryReason) decision {
		return decision{approved: s.cfg.StandIn == StandInApprove, reason: reason}
	}
	if s.cfg.WebhookURL == "" {
		return declined(stripe.IssuingAuthorizationRequestHistoryReasonWebhookError)
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.DecisionTimeout)
	defer cancel()
	resp, err := s.post(ctx, body, "application/json")
	var answer []byte
	if err == nil {
		answer, err = io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
	}
	switch {
	case err != nil && ctx.Err() != nil:
		return declined(stripe.IssuingAuthorizationRequestHistoryReasonWebhookTimeout)
	case err != nil || resp.StatusCode != http.StatusOK:
		return declined(stripe.IssuingAuthorizationRequestHistoryReasonWebhookError)
	}
	d, problem := parseDecision(resp.Header, answer, controllable, requested)
	if problem != "" {
		s.violation("%s %s: the answer %s: %s", eventAuthorizationRequest, e.ID, problem, bytes.TrimSpace(answer))
		return declined(stripe.IssuingAuthorizationRequestHistoryReasonWebhookError)
	}
	return d
}

// parseDecision reads the answer to an issuing_authorization.request as
// https://docs.stripe.com/issuing/controls/real-time-authorizations
// documents it ("Webhook response"): a Stripe-Version header, an optional
// Content-Type of application/json, and the body {"approved": bool,
// "amount"?: int, "metadata"?: {...}}, amount only when the request's
// amount is controllable, positive. problem says what is off.
func parseDecision(h http.Header, body []byte, controllable bool, requested int64) (d decision, problem string) {
	if h.Get("Stripe-Version") == "" {
		return d, "lacks the Stripe-Version header"
	}
	if ct := h.Get("Content-Type"); ct != "" && !bytes.HasPrefix([]byte(ct), []byte("application/json")) {
		return d, "has Content-Type " + ct + ", not application/json"
	}
	var v struct {
		Approved *bool             `json:"approved"`
		Amount   *int64            `json:"amount"`
		Metadata map[string]string `json:"metadata"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return d, "is not the documented JSON (" + err.Error() + ")"
	}
	if v.Approved == nil {
		return d, "lacks approved"
	}
	d.approved, d.metadata = *v.Approved, v.Metadata
	d.reason = stripe.IssuingAuthorizationRequestHistoryReasonWebhookDeclined
	if d.approved {
		d.reason = stripe.IssuingAuthorizationRequestHistoryReasonWebhookApproved
	}
	if v.Amount != nil && d.approved {
		switch {
		case !controllable:
			return d, "sets amount, but the request's amount is not controllable"
		case *v.Amount <= 0 || *v.Amount > requested:
			return d, fmt.Sprintf("sets amount %d, not between 1 and the requested %d", *v.Amount, requested)
		}
		d.amount = *v.Amount
	}
	return d, ""
}
