package operatordb_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"

	"payments/pkg/providers/operator"
	"payments/pkg/providers/operator/operatordb"
	"payments/pkg/providers/operator/operatorsandbox"
	"payments/pkg/store/storetest"
)

// TestSandboxOperatorKeepsItsOwnOrders: the simulated operator's orders
// live in DynamoDB under its own keys, once per reference, and answer
// lookups by our reference and status queries by order id.
func TestSandboxOperatorKeepsItsOwnOrders(t *testing.T) {
	ctx := context.Background()
	sb := operatorsandbox.New(operatordb.New(storetest.NewDB(t).DB))
	tests := []struct {
		phone string
		state operator.State
		err   error
	}{
		{"237670000001", operator.Succeeded, nil},
		{"237670000000", operator.Failed, nil},
		{"237670000999", operator.Processing, nil},
		{"237670000998", "", operator.ErrUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.phone, func(t *testing.T) {
			ref := uuid.NewString()
			req := operator.Request{Kind: operator.Payout, TransactionID: ref, PhoneNumber: tt.phone, Amount: 100, Currency: "XAF"}
			first, err := sb.Submit(ctx, req)
			if err != nil || first.State != operator.Processing {
				t.Fatalf("Submit = %+v, %v", first, err)
			}
			req.PhoneNumber = "237670000000" // a retried submission does not change the order
			again, err := sb.Submit(ctx, req)
			if err != nil || again.OrderID != first.OrderID {
				t.Fatalf("second Submit = %+v, %v", again, err)
			}
			byRef, err := sb.Lookup(ctx, operator.Payout, ref)
			byOrder, err2 := sb.Status(ctx, operator.Payout, first.OrderID)
			if !errors.Is(err, tt.err) || !errors.Is(err2, tt.err) || byRef.State != tt.state || byOrder.State != tt.state {
				t.Fatalf("Lookup = %+v, %v; Status = %+v, %v; want %s, %v", byRef, err, byOrder, err2, tt.state, tt.err)
			}
		})
	}
	if _, err := sb.Lookup(ctx, operator.Payout, uuid.NewString()); !errors.Is(err, operator.ErrNotFound) {
		t.Fatalf("Lookup of an unknown reference = %v", err)
	}
	if _, err := sb.Status(ctx, operator.Payout, "nope"); !errors.Is(err, operator.ErrNotFound) {
		t.Fatalf("Status of an unknown order = %v", err)
	}
}
