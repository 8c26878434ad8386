package audit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"payments/pkg/audit"
	"payments/pkg/field"
	"payments/pkg/page"
)

func TestWithhold(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"empty", "", ""},
		{"no secret", `{"amount":1000,"reference":"x"}`, `{"amount":1000,"reference":"x"}`},
		{"the answer's client secret", `{"data":{"client_id":"c","client_secret":"s3cr3t"}}`, `{"data":{"client_id":"c","client_secret":"[withheld]"}}`},
		{"an owner's password", `{"owner":{"email":"a@b.c","temporary_password":"Pw-123456"}}`, `{"owner":{"email":"a@b.c","temporary_password":"[withheld]"}}`},
		{"in a list", `[{"secret":"x"},{"api_key":"y","key":"z"}]`, `[{"secret":"[withheld]"},{"api_key":"[withheld]","key":"[withheld]"}]`},
		{"a card's number and cvc", `{"number":"4242424242424242","cvc":"123","last4":"4242"}`, `{"cvc":"[withheld]","last4":"4242","number":"[withheld]"}`},
		{"a token", `{"access_token":"t","token_type":"Bearer"}`, `{"access_token":"[withheld]","token_type":"[withheld]"}`},
		{"not JSON", `amount=5`, `"amount=5"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(audit.Withhold([]byte(tt.doc))); got != tt.want {
				t.Errorf("Withhold(%s) = %s, want %s", tt.doc, got, tt.want)
			}
		})
	}
}

// memoryStore keeps records in order.
type memoryStore struct {
	records []audit.Record
	fail    error
}

func (m *memoryStore) PutRecord(_ context.Context, r audit.Record) error {
	if m.fail != nil {
		return m.fail
	}
	m.records = append(m.records, r)
	return nil
}

func (m *memoryStore) Records(context.Context, audit.Filter, page.Request) (page.Result[audit.Record], error) {
	return page.Result[audit.Record]{Items: m.records, Total: len(m.records)}, nil
}

func TestTrail(t *testing.T) {
	if _, err := audit.NewTrail(nil, nil); !errors.Is(err, audit.ErrNoStore) {
		t.Fatalf("NewTrail(nil): %v", err)
	}
	at := time.Date(2026, 12, 7, 10, 0, 0, 0, time.FixedZone("WAT", 3600))
	store := &memoryStore{}
	trail, err := audit.NewTrail(store, func() time.Time { return at })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := trail.Record(ctx, audit.Record{Phase: audit.Requested, Action: "POST /admin/companies"}); err != nil {
		t.Fatal(err)
	}
	got := store.records[0]
	if !got.At.Equal(at) || got.At.Location() != time.UTC || len(got.ID) != 36 {
		t.Errorf("recorded %+v: want stamped %v in UTC with a UUID", got, at)
	}
	store.fail = errors.New("injected: throttled")
	if err := trail.Record(ctx, audit.Record{Phase: audit.Answered}); !errors.Is(err, audit.ErrUnavailable) {
		t.Errorf("a failed write: %v, want ErrUnavailable", err)
	}
	_, err = trail.List(ctx, audit.Filter{From: at, To: at.Add(-time.Second)}, page.Request{Page: 1, Limit: 10})
	var fe *field.Error
	if !errors.As(err, &fe) || fe.Field != "to" {
		t.Errorf("to before from: %v, want a field error naming to", err)
	}
}
