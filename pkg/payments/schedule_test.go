package payments_test

import (
	"fmt"
	"testing"
	"time"

	"payments/pkg/payments"
)

func TestNextPollDelay(t *testing.T) {
	t.Parallel()
	s := time.Second
	deadline := 15 * time.Minute
	tests := []struct {
		elapsed time.Duration
		want    time.Duration
	}{
		{0, 5 * s},
		{29 * s, 5 * s},
		{30 * s, 15 * s},
		{10 * s, 5 * s},
		{40 * s, 20 * s},
		{100 * s, 50 * s},
		{800 * s, 100 * s}, // 400 s would pass the deadline
		{899 * s, s},       // lands on the deadline
		{900 * s, 900 * s}, // after it, SQS's longest delay
		{72 * time.Hour, 900 * s},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.elapsed), func(t *testing.T) {
			created := time.Date(2025, 5, 1, 10, 0, 0, 0, time.UTC)
			if got := payments.NextPollDelay(created, created.Add(tt.elapsed), deadline); got != tt.want {
				t.Fatalf("NextPollDelay = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestPollScheduleReachesTheDeadline follows the schedule from acceptance,
// for the default deadline and a short one: it never waits more than 900 s,
// lands on the deadline, and polls a bounded number of times.
func TestPollScheduleReachesTheDeadline(t *testing.T) {
	t.Parallel()
	for _, deadline := range []time.Duration{payments.DefaultDeadline, 20 * time.Second} {
		t.Run(fmt.Sprint(deadline), func(t *testing.T) {
			created := time.Date(2025, 5, 1, 10, 0, 0, 0, time.UTC)
			now, polls := created, 0
			for now.Before(created.Add(deadline)) {
				d := payments.NextPollDelay(created, now, deadline)
				if d > payments.MaxPollDelay || d < time.Second {
					t.Fatalf("delay %v", d)
				}
				now, polls = now.Add(d), polls+1
			}
			if !now.Equal(created.Add(deadline)) || polls > 20 {
				t.Fatalf("last poll at %v after %d polls", now.Sub(created), polls)
			}
		})
	}
}

func TestParseJob(t *testing.T) {
	t.Parallel()
	const id = "0196a0c2-7b3e-7d41-9c55-2f1e8a9b0c1d"
	tests := []struct {
		body string
		ok   bool
	}{
		{`{"company_id":"` + id + `","transaction_id":"` + id + `","due":"2026-11-23T16:11:18.120Z"}`, true},
		{`{"company_id":"` + id + `","transaction_id":"` + id + `"}`, false},
		{`{"company_id":"` + id + `","transaction_id":"` + id + `","due":"tomorrow"}`, false},
		{`{"transaction_id":"` + id + `","due":"2026-11-23T16:11:18.120Z"}`, false},
		{`{"company_id":"c1","transaction_id":"` + id + `","due":"2026-11-23T16:11:18.120Z"}`, false},
		{`{"company_id":"` + id + `","transaction_id":"x","due":"2026-11-23T16:11:18.120Z"}`, false},
		{`{"company_id":"` + id + `","transaction_id":"` + id + `","due":"2026-11-23T16:11:18.120Z","events":["` + id + `"]}`, true},
		{`{"company_id":"` + id + `","events":["` + id + `"]}`, true}, // events only
		{`{"company_id":"` + id + `","events":[]}`, false},
		{`{"company_id":"` + id + `","events":["x"]}`, false},
		{`{"company_id":"` + id + `","transaction_id":"` + id + `","due":"2026-11-23T16:11:18.120Z","events":["x"]}`, false},
		{`{"company_id":"` + id + `","due":"2026-11-23T16:11:18.120Z","events":["` + id + `"]}`, false},
		{`{"company_id":"c1","events":["` + id + `"]}`, false},
		{`not json`, false},
		// operator updates: a final state of a known kind, no schedule
		{`{"company_id":"` + id + `","transaction_id":"` + id + `","update":{"kind":"PAYOUT","state":"SUCCESS"}}`, true},
		{`{"company_id":"` + id + `","transaction_id":"` + id + `","update":{"kind":"COLLECTION","state":"FAILED","reason":"payer not found"}}`, true},
		{`{"company_id":"` + id + `","transaction_id":"` + id + `","update":{"kind":"PAYOUT","state":"PROCESSING"}}`, false},
		{`{"company_id":"` + id + `","transaction_id":"` + id + `","update":{"kind":"REFUND","state":"SUCCESS"}}`, false},
		{`{"company_id":"` + id + `","update":{"kind":"PAYOUT","state":"SUCCESS"}}`, false},
		{`{"company_id":"` + id + `","transaction_id":"` + id + `","due":"2026-11-23T16:11:18.120Z","update":{"kind":"PAYOUT","state":"SUCCESS"}}`, false},
		{`{"company_id":"` + id + `","transaction_id":"` + id + `","events":["` + id + `"],"update":{"kind":"PAYOUT","state":"SUCCESS"}}`, false},
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
