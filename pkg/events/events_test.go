package events_test

import (
	"strings"
	"testing"
	"time"

	"payments/pkg/events"
)

// TestWithSequence: the store's numbering adds "sequence" between "event"
// and "data", keeps the data bytes and the rest of the event, and refuses a
// number below 1.
func TestWithSequence(t *testing.T) {
	ev, err := events.Build("co-1", events.CardFundData{TransactionID: "tx-1", CardID: "card-1", Amount: "25", Currency: "USD", FeeAmount: "0.5"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	const data = `{"transaction_id":"tx-1","card_id":"card-1","amount":25,"currency":"USD","fee_amount":0.5}`
	if want := `{"event":"card.fund","data":` + data + `}`; string(ev.Body) != want || ev.Sequence != 0 {
		t.Fatalf("unsequenced body %s (sequence %d), want %s", ev.Body, ev.Sequence, want)
	}
	tests := []struct {
		n       int64
		want    string
		wantErr bool
	}{
		{n: 1, want: `{"event":"card.fund","sequence":1,"data":` + data + `}`},
		{n: 42, want: `{"event":"card.fund","sequence":42,"data":` + data + `}`},
		{n: 0, wantErr: true},
		{n: -1, wantErr: true},
	}
	for _, tt := range tests {
		got, err := ev.WithSequence(tt.n)
		if tt.wantErr {
			if err == nil {
				t.Errorf("WithSequence(%d) = %s, want an error", tt.n, got.Body)
			}
			continue
		}
		if err != nil || string(got.Body) != tt.want || got.Sequence != tt.n {
			t.Errorf("WithSequence(%d) = %s (sequence %d), %v; want %s", tt.n, got.Body, got.Sequence, err, tt.want)
		}
		if got.ID != ev.ID || got.Object != "card-1" || got.Kind != ev.Kind || !got.CreatedAt.Equal(ev.CreatedAt) {
			t.Errorf("WithSequence(%d) changed the event: %+v", tt.n, got)
		}
		again, err := got.WithSequence(tt.n + 1)
		if err != nil || strings.Count(string(again.Body), `"sequence"`) != 1 {
			t.Errorf("renumbered body %s, %v", again.Body, err)
		}
	}
	if string(ev.Body) != `{"event":"card.fund","data":`+data+`}` {
		t.Errorf("WithSequence changed the original body: %s", ev.Body)
	}
}
