package webhooks_test

import (
	"errors"
	"testing"

	"payments/pkg/field"
	"payments/pkg/webhooks"
)

func TestParseType(t *testing.T) {
	tests := []struct {
		in     string
		want   webhooks.EventQuery
		refuse bool
	}{
		{"", webhooks.EventQuery{}, false},
		{"card.created", webhooks.EventQuery{Kind: "card.created"}, false},
		{"payment.payout.status_updated", webhooks.EventQuery{Kind: "payment.payout.status_updated"}, false},
		{"card.*", webhooks.EventQuery{Prefix: "card."}, false},
		{"card.fund.*", webhooks.EventQuery{Prefix: "card.fund."}, false},
		{"transaction.*", webhooks.EventQuery{Prefix: "transaction."}, false},
		{"payment.collect.*", webhooks.EventQuery{Prefix: "payment.collect."}, false},
		{"card", webhooks.EventQuery{}, true},
		{"card.", webhooks.EventQuery{}, true},
		{"card*", webhooks.EventQuery{}, true},
		{"card.created.*", webhooks.EventQuery{}, true},
		{"CARD.*", webhooks.EventQuery{}, true},
		{"*", webhooks.EventQuery{}, true},
		{".*", webhooks.EventQuery{}, true},
		{"car.*", webhooks.EventQuery{}, true},
		{"card.**", webhooks.EventQuery{}, true},
		{"card.funded", webhooks.EventQuery{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := webhooks.ParseType(tt.in)
			var fe *field.Error
			if tt.refuse {
				if !errors.As(err, &fe) || fe.Field != "type" {
					t.Fatalf("ParseType(%q) = %+v, %v; want a field error naming type", tt.in, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseType(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			}
		})
	}
}
