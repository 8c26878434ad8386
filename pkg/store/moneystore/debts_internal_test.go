package moneystore

import (
	"testing"

	"payments/pkg/store/dynamo"
)

func TestDebtRaced(t *testing.T) {
	const failed = "ConditionalCheckFailed"
	tests := []struct {
		name string
		k    dynamo.Cancellation
		want bool
	}{
		{"a debt", dynamo.Cancellation{"wallet": "None", "debt0": failed, "debtmark0": "None"}, true},
		{"a marker", dynamo.Cancellation{"debt1": "None", "debtmark1": failed}, true},
		{"another item", dynamo.Cancellation{"wallet": failed, "debt0": "None", "debtmark0": "None"}, false},
		{"a new debt of the fee code", dynamo.Cancellation{"debt": failed, "debt_pending": failed}, false},
		{"a conflict, not a condition", dynamo.Cancellation{"debt0": "TransactionConflict"}, false},
		{"no debts", dynamo.Cancellation{"wallet": "None"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := debtRaced(tt.k); got != tt.want {
				t.Errorf("debtRaced(%v) = %v, want %v", tt.k, got, tt.want)
			}
		})
	}
}
