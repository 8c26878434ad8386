package webhookshttp_test

import (
	"encoding/json"
	"testing"
	"time"

	"payments/pkg/events"
	"payments/pkg/timestamp/timestamptest"
	"payments/pkg/webhooks"
	"payments/pkg/webhooks/webhookshttp"
)

// TestViewTimestamps: the delivery log writes every time, of the event,
// its deliveries and their attempts, as timestamp.Format does, whatever
// the instant's precision: exactly three decimals, in UTC.
func TestViewTimestamps(t *testing.T) {
	at := time.Date(2026, 11, 23, 16, 11, 18, 0, time.UTC)
	wat := time.FixedZone("WAT", 3600)
	tests := []struct {
		name string
		at   time.Time
		want string
	}{
		{"a whole second", at, "2026-11-23T16:11:18.000Z"},
		{"a trailing zero", at.Add(120 * time.Millisecond), "2026-11-23T16:11:18.120Z"},
		{"nanoseconds", at.Add(123456789), "2026-11-23T16:11:18.123Z"},
		{"another zone", at.In(wat), "2026-11-23T16:11:18.000Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := events.Build("co-1", events.DebtRecoveryPendingData{DebtID: "d-1", CreatedAt: "2026-11-23T16:11:18.120Z"}, tt.at)
			if err != nil {
				t.Fatal(err)
			}
			ev.CreatedAt = tt.at
			rec := webhooks.Record{Event: ev, Dispatched: true, Deliveries: []webhooks.Delivery{{
				ID: webhooks.DeliveryID(ev.ID, webhooks.DestinationWebhook, "ep-1", 0), EventID: ev.ID,
				Destination: webhooks.DestinationWebhook, Status: webhooks.StatusFailed, CreatedAt: tt.at,
				Attempts: []webhooks.Attempt{{Number: 1, At: tt.at, StatusCode: 500, Duration: time.Second}},
			}}}
			v, err := webhookshttp.View(rec)
			if err != nil {
				t.Fatal(err)
			}
			body, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			timestamptest.Check(t, "the delivery log", body)
			var got struct {
				CreatedAt  string `json:"created_at"`
				Deliveries []struct {
					CreatedAt string `json:"created_at"`
					Attempts  []struct {
						At string `json:"at"`
					} `json:"attempts"`
				} `json:"deliveries"`
			}
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatal(err)
			}
			if d := got.Deliveries[0]; got.CreatedAt != tt.want || d.CreatedAt != tt.want || d.Attempts[0].At != tt.want {
				t.Fatalf("times %s, %s, %s; want %s", got.CreatedAt, d.CreatedAt, d.Attempts[0].At, tt.want)
			}
		})
	}
}
