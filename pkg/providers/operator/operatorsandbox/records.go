package operatorsandbox

import (
	"context"
	"fmt"

	"payments/pkg/providers/operator"
)

var _ operator.Records = (*Gateway)(nil)

// Payment answers for the order submitted with our reference ref, as
// Lookup does, with the amount and currency it was submitted with.
func (s *Gateway) Payment(ctx context.Context, k operator.Kind, ref string) (operator.Record, error) {
	res, err := s.Lookup(ctx, k, ref)
	if err != nil {
		return operator.Record{}, err
	}
	o, err := s.orders.Order(ctx, ref)
	if err != nil {
		return operator.Record{}, fmt.Errorf("%w: sandbox: %v", operator.ErrUnavailable, err)
	}
	return operator.Record{Result: res, Amount: o.Amount, Currency: o.Currency}, nil
}

// Balances returns no wallet: the sandbox operator pays from no float.
func (s *Gateway) Balances(context.Context) ([]operator.Balance, error) { return nil, nil }
