package issuerhooks_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"payments/pkg/field"
	"payments/pkg/issuerhooks"
	"payments/pkg/issuerhooks/issuerhookshttp"
	"payments/pkg/providers/issuer"
)

const authorizationRequest = `{"id":"ntx_1","card_id":"card_1","reference":"c1","kind":"AUTHORIZATION","amount":1250,` +
	`"currency":"USD","merchant":{"name":"Book Shop","city":"Lyon","country":"FR"},"created_at":"2025-05-01T10:00:00Z"}`

// decider records the requests it decides, approving each.
type decider struct{ asked []issuer.AuthorizationRequest }

func (d *decider) Decide(_ context.Context, r issuer.AuthorizationRequest) (issuer.AuthorizationAnswer, error) {
	d.asked = append(d.asked, r)
	id := "tx_" + r.ID
	return issuer.AuthorizationAnswer{Decision: issuer.Approved, TransactionID: &id, AvailableBalance: 100}, nil
}

// decide hands body, with header as X-Issuer-Signature when it is not "",
// to a's POST /issuer/authorizations and returns the recorder and its
// error.
func decide(a *issuerhooks.Authorizations, header, body string) (*httptest.ResponseRecorder, error) {
	return post(issuerhookshttp.ReceiveAuthorizations(a), "/api/v1/issuer/authorizations", header, body)
}

// TestAuthorizations: a request is decided only when its signature
// verifies within the tolerance and its body is an authorization request;
// Ask, the sandbox network's way in, signs as the issuer does.
func TestAuthorizations(t *testing.T) {
	now := time.Unix(1746093600, 0)
	for _, tt := range []struct {
		name, header, body string
		want               error // nil: decided
	}{
		{"signed", issuerhooks.Sign(secret, []byte(authorizationRequest), now), authorizationRequest, nil},
		{"unsigned", "", authorizationRequest, issuerhooks.ErrBadSignature},
		{"stale", issuerhooks.Sign(secret, []byte(authorizationRequest), now.Add(-issuerhooks.Tolerance-time.Second)), authorizationRequest, issuerhooks.ErrBadSignature},
		{"another secret", issuerhooks.Sign([]byte("not the issuer's secret at all, not at all"), []byte(authorizationRequest), now), authorizationRequest, issuerhooks.ErrBadSignature},
		{"another body", issuerhooks.Sign(secret, []byte(notification), now), authorizationRequest, issuerhooks.ErrBadSignature},
		{"a notification", issuerhooks.Sign(secret, []byte(notification), now), notification, &field.Error{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := &decider{}
			a := &issuerhooks.Authorizations{Secret: secret, Decider: d, Now: func() time.Time { return now }}
			w, err := decide(a, tt.header, tt.body)
			var fe *field.Error
			switch {
			case tt.want == nil && err == nil:
				if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"decision":"APPROVED"`) || len(d.asked) != 1 || d.asked[0].ID != "ntx_1" {
					t.Fatalf("%d %s, asked %+v", w.Code, w.Body, d.asked)
				}
				return
			case errors.As(tt.want, &fe):
				if !errors.As(err, &fe) || fe.Field != "body" {
					t.Fatalf("error %v, want a bad body", err)
				}
			case !errors.Is(err, tt.want):
				t.Fatalf("error %v, want %v", err, tt.want)
			}
			if len(d.asked) != 0 {
				t.Fatalf("decided %+v", d.asked)
			}
		})
	}
	d := &decider{}
	a := &issuerhooks.Authorizations{Secret: secret, Decider: d}
	if got, err := a.Ask(context.Background(), []byte(authorizationRequest)); err != nil || got.Decision != issuer.Approved || len(d.asked) != 1 {
		t.Errorf("Ask = %+v, %v", got, err)
	}
	if _, err := (&issuerhooks.Authorizations{Decider: d}).Ask(context.Background(), []byte(authorizationRequest)); !errors.Is(err, issuerhooks.ErrBadSignature) {
		t.Errorf("a handler without a secret decided: %v", err)
	}
}

// FuzzDecide signs any body: it is decided, or refused as a bad body (400
// naming it, or 413) with nothing decided.
func FuzzDecide(f *testing.F) {
	f.Add(authorizationRequest)
	f.Add(`{"id":"n","reference":"c","kind":"VERIFICATION","amount":0,"currency":"USD","merchant":{"name":"S"}}`)
	f.Add(`{"id":"n","reference":"c","kind":"AUTHORIZATION","amount":-1,"currency":"USD","merchant":{"name":"S"}}`)
	now := time.Unix(1746093600, 0)
	f.Fuzz(func(t *testing.T, body string) {
		d := &decider{}
		a := &issuerhooks.Authorizations{Secret: secret, Decider: d, Now: func() time.Time { return now }}
		w, err := decide(a, issuerhooks.Sign(secret, []byte(body), now), body)
		var fe *field.Error
		var tooLarge *http.MaxBytesError
		switch {
		case err == nil:
			if w.Code != http.StatusOK || len(d.asked) != 1 {
				t.Fatalf("%d %s, decided %d", w.Code, w.Body, len(d.asked))
			}
		case errors.As(err, &fe) && fe.Field == "body", errors.As(err, &tooLarge):
			if len(d.asked) != 0 {
				t.Fatalf("refused (%v), yet decided %+v", err, d.asked)
			}
		default:
			t.Fatalf("error %v: neither decided nor a bad body", err)
		}
	})
}
