package operator

import "context"

// Record is a payment as the operator's own records have it: its state,
// and the amount it moved.
type Record struct {
	Result
	// Amount is in minor units of Currency.
	Amount   int64
	Currency string
}

// Balance is what the operator holds in one of its wallets for us: the
// float our payouts are paid from.
type Balance struct {
	// Country is the wallet's country, as the operator names it (pawaPay:
	// ISO 3166-1 alpha-3).
	Country  string
	Currency string
	// Amount is in minor units of Currency.
	Amount int64
}

// Records is an operator whose records can be read, for the
// reconciliation (pkg/reconcile): each payment with its amount, and the
// balances of its wallets. An operator that implements it is reconciled.
type Records interface {
	// Payment returns the request of kind k submitted with our reference,
	// as the operator has it; ErrNotFound when it has none, an error
	// wrapping ErrUnavailable when it cannot say.
	Payment(ctx context.Context, k Kind, reference string) (Record, error)
	// Balances returns the balances of the operator's wallets.
	Balances(ctx context.Context) ([]Balance, error)
}
