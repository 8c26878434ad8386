package paymentshttp_test

import (
	"net/http/httptest"
	"testing"

	"payments/pkg/field"
	"payments/pkg/payments/paymentshttp"
)

func TestParseQuery(t *testing.T) {
	tests := []struct {
		query string
		field string
	}{
		{"", ""},
		{"status=SUCCESS&type=PAYOUT&external_id=ord&from_date=2025-05-01T00:00:00Z&to_date=2025-05-02", ""},
		{"reconciliation_required=true", ""},
		{"reconciliation_required=yes", "reconciliation_required"},
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
			_, err := paymentshttp.ParseQuery(httptest.NewRequest("GET", "/?"+tt.query, nil))
			if tt.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			fe, ok := err.(*field.Error)
			if !ok || fe.Field != tt.field {
				t.Fatalf("err %v, want a FieldError on %s", err, tt.field)
			}
		})
	}
}
