package issuerhooks_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"payments/pkg/field"
	"payments/pkg/issuerhooks"
	"payments/pkg/issuerhooks/issuerhookshttp"
	"payments/pkg/webhooks"
)

var secret = []byte("issuer-secret-issuer-secret-issuer-secret")

const notification = `{"id":"evt_1","type":"card.terminated","card_id":"card_1","reference":"c1","reason":"risk block","created_at":"2025-05-01T10:00:00Z"}`

// sent records what a Handler queues, and each message's delay.
type sent struct {
	bodies []string
	delays []time.Duration
}

func (s *sent) Send(_ context.Context, body []byte, delay time.Duration) error {
	s.bodies = append(s.bodies, string(body))
	s.delays = append(s.delays, delay)
	return nil
}

// receive hands body, with header as X-Issuer-Signature when it is not "",
// to h and returns the recorder and Receive's error.
func receive(h *issuerhooks.Handler, header, body string) (*httptest.ResponseRecorder, error) {
	return post(issuerhookshttp.Receive(h), "/api/v1/issuer/webhooks", header, body)
}

// post hands body to path's handler, with header as X-Issuer-Signature
// when it is not "", and returns the recorder and the handler's error.
func post(handle func(http.ResponseWriter, *http.Request) error, path, header, body string) (*httptest.ResponseRecorder, error) {
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	if header != "" {
		r.Header.Set(issuerhooks.Header, header)
	}
	w := httptest.NewRecorder()
	return w, handle(w, r)
}

// TestSign: the header is our webhooks' (spec §6.2), keyed with the
// secret's text, and verifies with their rule.
func TestSign(t *testing.T) {
	now := time.Unix(1746093600, 0)
	got := issuerhooks.Sign(secret, []byte(notification), now)
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("1746093600." + notification))
	if want := "t=1746093600,v1=" + hex.EncodeToString(m.Sum(nil)); got != want {
		t.Fatalf("Sign = %s, want %s", got, want)
	}
	if err := webhooks.Verify(got, []byte(notification), string(secret), issuerhooks.Tolerance, now); err != nil {
		t.Fatal(err)
	}
}

// TestReceive: what a Handler answers and queues, its clock injected.
func TestReceive(t *testing.T) {
	now := time.Unix(1746093600, 0)
	tests := []struct {
		name   string
		secret []byte
		header string
		body   string
		want   error // nil: accepted
	}{
		{"signed", secret, issuerhooks.Sign(secret, []byte(notification), now), notification, nil},
		{"300 s old", secret, issuerhooks.Sign(secret, []byte(notification), now.Add(-300*time.Second)), notification, nil},
		{"301 s old", secret, issuerhooks.Sign(secret, []byte(notification), now.Add(-301*time.Second)), notification, issuerhooks.ErrBadSignature},
		{"301 s ahead", secret, issuerhooks.Sign(secret, []byte(notification), now.Add(301*time.Second)), notification, issuerhooks.ErrBadSignature},
		{"no header", secret, "", notification, issuerhooks.ErrBadSignature},
		{"other secret", secret, issuerhooks.Sign([]byte("other"), []byte(notification), now), notification, issuerhooks.ErrBadSignature},
		{"no secret", nil, issuerhooks.Sign(nil, []byte(notification), now), notification, issuerhooks.ErrBadSignature},
		{"not a notification", secret, issuerhooks.Sign(secret, []byte(`{"id":"evt_1"}`), now), `{"id":"evt_1"}`, &field.Error{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := &sent{}
			h := &issuerhooks.Handler{Secret: tt.secret, Queue: q, Now: func() time.Time { return now }}
			w, err := receive(h, tt.header, tt.body)
			var fe *field.Error
			switch {
			case tt.want == nil && err != nil:
				t.Fatalf("error %v, want accepted", err)
			case tt.want == nil:
				if w.Code != http.StatusAccepted || len(q.bodies) != 1 || q.bodies[0] != tt.body {
					t.Fatalf("%d %s, queued %q", w.Code, w.Body, q.bodies)
				}
				return
			case errors.As(tt.want, &fe):
				if !errors.As(err, &fe) || fe.Field != "body" {
					t.Fatalf("error %v, want a FieldError on body", err)
				}
			case !errors.Is(err, tt.want):
				t.Fatalf("error %v, want %v", err, tt.want)
			}
			if len(q.bodies) != 0 {
				t.Fatalf("queued %q", q.bodies)
			}
		})
	}
}

// FuzzReceive signs any body: it is accepted and queued as sent, or refused
// as a bad body (400 naming it, or 413) with nothing queued.
func FuzzReceive(f *testing.F) {
	f.Add(notification)
	f.Add(`{"id":"e","type":"authorization.advice","decision":"DECLINED","reason":"issuer_timeout","reference":"c","transaction":{"id":"t","kind":"VERIFICATION","amount":0,"currency":"USD","merchant":{"name":"S"}}}`)
	f.Add(`{"id":"e","type":"refund","reference":"c","transaction":{"id":"t","authorization_id":"a","amount":-1,"currency":"USD"}}`)
	now := time.Unix(1746093600, 0)
	f.Fuzz(func(t *testing.T, body string) {
		q := &sent{}
		h := &issuerhooks.Handler{Secret: secret, Queue: q, Now: func() time.Time { return now }}
		w, err := receive(h, issuerhooks.Sign(secret, []byte(body), now), body)
		var fe *field.Error
		var tooLarge *http.MaxBytesError
		switch {
		case err == nil:
			if w.Code != http.StatusAccepted || len(q.bodies) != 1 || q.bodies[0] != body {
				t.Fatalf("%d %s, queued %q", w.Code, w.Body, q.bodies)
			}
		case errors.As(err, &fe) && fe.Field == "body", errors.As(err, &tooLarge):
			if len(q.bodies) != 0 {
				t.Fatalf("refused (%v), yet queued %q", err, q.bodies)
			}
		default:
			t.Fatalf("error %v: neither accepted nor a bad body", err)
		}
	})
}

func ExampleSign() {
	body := []byte(`{"id":"evt_1","type":"card.terminated","card_id":"card_1","reference":"c1","created_at":"2025-05-01T10:00:00Z"}`)
	header := issuerhooks.Sign([]byte("issuer-secret"), body, time.Unix(1746093600, 0))
	fmt.Println(issuerhooks.Header + ": " + header)
	// Output:
	// X-Issuer-Signature: t=1746093600,v1=e4fe43e97026783106e4f0592c9cab49f268451b99230978dd8f62142fac2bde
}

// TestDeliver: what the sandbox card network delivers is signed with the
// issuer's secret and queued as POST /issuer/webhooks queues it; a body
// that is not a notification is refused and queues nothing.
func TestDeliver(t *testing.T) {
	q := &sent{}
	h := &issuerhooks.Handler{Secret: secret, Queue: q}
	if err := h.Deliver(context.Background(), []byte(notification)); err != nil {
		t.Fatal(err)
	}
	if err := h.Deliver(context.Background(), []byte(`{"id":"evt_2"}`)); err == nil {
		t.Error("a body that is not a notification was delivered")
	}
	if len(q.bodies) != 1 || q.bodies[0] != notification {
		t.Errorf("queued %q, want the one notification", q.bodies)
	}
	unsigned := &issuerhooks.Handler{Queue: q}
	if err := unsigned.Deliver(context.Background(), []byte(notification)); !errors.Is(err, issuerhooks.ErrBadSignature) || len(q.bodies) != 1 {
		t.Errorf("a handler without a secret delivered: %v", err)
	}
}
