package payments_test

import (
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"payments/pkg/httpapi"
	"payments/pkg/payments"
)

func TestNextPollDelay(t *testing.T) {
	s := time.Second
	tests := []struct {
		elapsed  time.Duration
		step     int
		want     time.Duration
		wantStep int
	}{
		{0, 0, 5 * s, 0},
		{29 * s, 0, 5 * s, 0},
		{30 * s, 0, 10 * s, 1},
		{40 * s, 1, 20 * s, 2},
		{60 * s, 2, 40 * s, 3},
		{100 * s, 3, 80 * s, 4},
		{180 * s, 4, 160 * s, 5},
		{340 * s, 5, 320 * s, 6},
		{660 * s, 6, 240 * s, 7}, // 640 s would pass the deadline
		{200 * s, 7, 700 * s, 8}, // capped at 900 s, then by the deadline
		{10 * s, 40, 5 * s, 40},
		{60 * s, 40, 840 * s, 41},
		{899 * s, 9, s, 10},
		{20 * time.Minute, 9, s, 10},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%v step %d", tt.elapsed, tt.step), func(t *testing.T) {
			created := time.Date(2025, 5, 1, 10, 0, 0, 0, time.UTC)
			got, step := payments.NextPollDelay(created, created.Add(tt.elapsed), tt.step)
			if got != tt.want || step != tt.wantStep {
				t.Fatalf("NextPollDelay = %v, %d; want %v, %d", got, step, tt.want, tt.wantStep)
			}
		})
	}
}

// TestPollScheduleEndsAtTheDeadline follows the schedule from acceptance:
// it never waits more than 900 s and reaches the 15-minute deadline.
func TestPollScheduleEndsAtTheDeadline(t *testing.T) {
	created := time.Date(2025, 5, 1, 10, 0, 0, 0, time.UTC)
	now, step, polls := created.Add(payments.PollInterval), 0, 1
	for now.Before(created.Add(payments.Timeout)) {
		d, next := payments.NextPollDelay(created, now, step)
		if d > payments.MaxPollDelay || d < time.Second {
			t.Fatalf("delay %v", d)
		}
		now, step, polls = now.Add(d), next, polls+1
	}
	if !now.Equal(created.Add(payments.Timeout)) || polls > 20 {
		t.Fatalf("last poll at %v after %d polls", now.Sub(created), polls)
	}
}

func TestParseJob(t *testing.T) {
	const id = "0196a0c2-7b3e-7d41-9c55-2f1e8a9b0c1d"
	tests := []struct {
		body string
		ok   bool
	}{
		{`{"kind":"submit","company_id":"c1","transaction_id":"` + id + `"}`, true},
		{`{"kind":"poll","company_id":"c1","transaction_id":"` + id + `","step":3}`, true},
		{`{"kind":"refund","company_id":"c1","transaction_id":"` + id + `"}`, false},
		{`{"kind":"poll","transaction_id":"` + id + `"}`, false},
		{`{"kind":"poll","company_id":"c1","transaction_id":"x"}`, false},
		{`{"kind":"poll","company_id":"c1","transaction_id":"` + id + `","step":-1}`, false},
		{`not json`, false},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			_, err := payments.ParseJob([]byte(tt.body))
			if (err == nil) != tt.ok {
				t.Fatalf("ParseJob: %v", err)
			}
		})
	}
}

func TestParseQuery(t *testing.T) {
	tests := []struct {
		query string
		field string
	}{
		{"", ""},
		{"status=SUCCESS&type=PAYOUT&external_id=ord&from_date=2025-05-01T00:00:00Z&to_date=2025-05-02", ""},
		{"from_date=2025-05-01T10:00:00%2B01:00", ""},
		{"status=success", "status"},
		{"status=DONE", "status"},
		{"type=payout", "type"},
		{"type=REFUND", "type"},
		{"from_date=yesterday", "from_date"},
		{"to_date=2025-13-01", "to_date"},
		{"from_date=2025-05-02&to_date=2025-05-01", "to_date"},
		{"from_date=2025-05-01&to_date=2025-05-01", "to_date"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			_, err := payments.ParseQuery(httptest.NewRequest("GET", "/?"+tt.query, nil))
			if tt.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			fe, ok := err.(*httpapi.FieldError)
			if !ok || fe.Field != tt.field {
				t.Fatalf("err %v, want a FieldError on %s", err, tt.field)
			}
		})
	}
}
