package store

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
)

func TestDebtRaced(t *testing.T) {
	const failed = "ConditionalCheckFailed"
	tests := []struct {
		name string
		k    cancellation
		want bool
	}{
		{"a debt", cancellation{"wallet": "None", "debt0": failed, "debtmark0": "None"}, true},
		{"a marker", cancellation{"debt1": "None", "debtmark1": failed}, true},
		{"another item", cancellation{"wallet": failed, "debt0": "None", "debtmark0": "None"}, false},
		{"a new debt of the fee code", cancellation{"debt": failed, "debt_pending": failed}, false},
		{"a conflict, not a condition", cancellation{"debt0": "TransactionConflict"}, false},
		{"no debts", cancellation{"wallet": "None"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := debtRaced(tt.k); got != tt.want {
				t.Errorf("debtRaced(%v) = %v, want %v", tt.k, got, tt.want)
			}
		})
	}
}

// TestMaxTransactItems: a DB on DynamoDB Local (a client with an endpoint
// of its own) keeps its transactions to 10 items, one on DynamoDB to 100.
func TestMaxTransactItems(t *testing.T) {
	cfg := aws.Config{Region: "us-east-1"}
	if n := New(NewClient(cfg, ""), "t").MaxTransactItems; n != 100 {
		t.Errorf("DynamoDB: %d items", n)
	}
	if n := New(NewClient(cfg, "http://127.0.0.1:8000"), "t").MaxTransactItems; n != 10 {
		t.Errorf("DynamoDB Local: %d items", n)
	}
}
