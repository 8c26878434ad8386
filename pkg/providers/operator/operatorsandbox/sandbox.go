// Package operatorsandbox is the simulated mobile-money operator of sandbox
// stages, an operator.Gateway deciding by the recipient's phone number. Its
// state is its own (Store; in DynamoDB, package operatordb), kept apart from
// our payments as a remote operator keeps it.
package operatorsandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"payments/pkg/providers/operator"
)

// Gateway is the simulated operator of sandbox stages. It keeps its orders
// in its own store, apart from our payments, the way a remote operator
// would, and decides each by the last digits of the phone number:
//
//   - 000: fails permanently ("recipient account not found");
//   - 999: stays PROCESSING for ever;
//   - 998: is accepted, then every status query or lookup answers
//     ErrUnavailable (an operator that cannot be reached);
//   - anything else: PROCESSING, then SUCCESS at the first status query.
type Gateway struct {
	orders Store
	// Now returns the current time; tests may replace it.
	Now func() time.Time
}

var _ operator.Gateway = (*Gateway)(nil)

// Order is one request as the sandbox operator keeps it.
type Order struct {
	OrderID     string
	Reference   string // our transaction id
	Kind        operator.Kind
	PhoneNumber string
	Amount      int64
	Currency    string
	Outcome     string // one of the sandbox outcomes, decided at submission
	CreatedAt   time.Time
}

// Store is the sandbox operator's own state (in DynamoDB: package
// operatordb).
type Store interface {
	// PutOrder records o unless an order already has its Reference, and
	// returns the order recorded for the reference: o, or the earlier one.
	PutOrder(ctx context.Context, o Order) (Order, error)
	// Order returns the order with our reference ref; ErrNotFound if none.
	Order(ctx context.Context, ref string) (Order, error)
}

// New returns the sandbox operator keeping its orders in orders.
func New(orders Store) *Gateway {
	return &Gateway{orders: orders, Now: time.Now}
}

// NotFoundReason is the failure reason for numbers ending in 000.
const NotFoundReason = "recipient account not found"

// The sandbox outcomes, kept with each order.
const (
	outcomeSucceed     = "succeed"
	outcomeFail        = "fail"
	outcomeHang        = "hang"
	outcomeUnreachable = "unreachable"
)

// orderPrefix starts every sandbox order id: SBX-<our reference>.
const orderPrefix = "SBX-"

// Submit records the request (once per reference) and accepts it.
func (s *Gateway) Submit(ctx context.Context, r operator.Request) (operator.Result, error) {
	outcome := outcomeSucceed
	switch {
	case strings.HasSuffix(r.PhoneNumber, "000"):
		outcome = outcomeFail
	case strings.HasSuffix(r.PhoneNumber, "999"):
		outcome = outcomeHang
	case strings.HasSuffix(r.PhoneNumber, "998"):
		outcome = outcomeUnreachable
	}
	o, err := s.orders.PutOrder(ctx, Order{
		OrderID: orderPrefix + r.TransactionID, Reference: r.TransactionID, Kind: r.Kind,
		PhoneNumber: r.PhoneNumber, Amount: r.Amount, Currency: r.Currency, Outcome: outcome,
		CreatedAt: s.Now().UTC(),
	})
	if err != nil {
		return operator.Result{}, fmt.Errorf("%w: sandbox: %v", operator.ErrUnavailable, err)
	}
	return sandboxResult(o.OrderID, operator.Processing, "", "submitted"), nil
}

// Status answers for an order made by Submit.
func (s *Gateway) Status(ctx context.Context, k operator.Kind, orderID string) (operator.Result, error) {
	ref, ok := strings.CutPrefix(orderID, orderPrefix)
	if !ok {
		return operator.Result{}, fmt.Errorf("%w: sandbox order %q", operator.ErrNotFound, orderID)
	}
	return s.Lookup(ctx, k, ref)
}

// Lookup answers for the order submitted with our reference ref. The
// sandbox keeps one order per reference whatever its kind, so k is not
// needed to find it.
func (s *Gateway) Lookup(ctx context.Context, _ operator.Kind, ref string) (operator.Result, error) {
	o, err := s.orders.Order(ctx, ref)
	switch {
	case errors.Is(err, operator.ErrNotFound):
		return operator.Result{}, err
	case err != nil:
		return operator.Result{}, fmt.Errorf("%w: sandbox: %v", operator.ErrUnavailable, err)
	}
	switch o.Outcome {
	case outcomeFail:
		return sandboxResult(o.OrderID, operator.Failed, NotFoundReason, "rejected"), nil
	case outcomeHang:
		return sandboxResult(o.OrderID, operator.Processing, "", "pending at operator"), nil
	case outcomeUnreachable:
		return operator.Result{}, fmt.Errorf("%w: sandbox operator unreachable for %s", operator.ErrUnavailable, o.OrderID)
	}
	return sandboxResult(o.OrderID, operator.Succeeded, "", "completed"), nil
}

func sandboxResult(orderID string, s operator.State, reason, message string) operator.Result {
	raw, _ := json.Marshal(map[string]string{
		"provider": "sandbox",
		"order_id": orderID,
		"status":   string(s),
		"message":  message,
		"reason":   reason,
	})
	return operator.Result{OrderID: orderID, State: s, Reason: reason, Raw: raw}
}
