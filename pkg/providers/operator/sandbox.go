package operator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sandbox is the simulated operator of sandbox stages. It keeps its orders
// in its own store, apart from our payments, the way a remote operator
// would, and decides each by the last digits of the phone number:
//
//   - 000: fails permanently ("recipient account not found");
//   - 999: stays PROCESSING for ever;
//   - 998: is accepted, then every status query or lookup answers
//     ErrUnavailable (an operator that cannot be reached);
//   - anything else: PROCESSING, then SUCCESS at the first status query.
type Sandbox struct {
	orders SandboxStore
	// Now returns the current time; tests may replace it.
	Now func() time.Time
}

var _ Gateway = (*Sandbox)(nil)

// SandboxOrder is one request as the sandbox operator keeps it.
type SandboxOrder struct {
	OrderID     string
	Reference   string // our transaction id
	Kind        Kind
	PhoneNumber string
	Amount      int64
	Currency    string
	Outcome     string // one of the sandbox outcomes, decided at submission
	CreatedAt   time.Time
}

// SandboxStore is the sandbox operator's own state (in DynamoDB: package
// operatordb).
type SandboxStore interface {
	// PutOrder records o unless an order already has its Reference, and
	// returns the order recorded for the reference: o, or the earlier one.
	PutOrder(ctx context.Context, o SandboxOrder) (SandboxOrder, error)
	// Order returns the order with our reference ref; ErrNotFound if none.
	Order(ctx context.Context, ref string) (SandboxOrder, error)
}

// NewSandbox returns the sandbox operator keeping its orders in orders.
func NewSandbox(orders SandboxStore) *Sandbox {
	return &Sandbox{orders: orders, Now: time.Now}
}

// SandboxNotFoundReason is the failure reason for numbers ending in 000.
const SandboxNotFoundReason = "recipient account not found"

// Sandbox outcomes, kept with each order.
const (
	outcomeSucceed     = "succeed"
	outcomeFail        = "fail"
	outcomeHang        = "hang"
	outcomeUnreachable = "unreachable"
)

// orderPrefix starts every sandbox order id: SBX-<our reference>.
const orderPrefix = "SBX-"

// Submit records the request (once per reference) and accepts it.
func (s *Sandbox) Submit(ctx context.Context, r Request) (Result, error) {
	outcome := outcomeSucceed
	switch {
	case strings.HasSuffix(r.PhoneNumber, "000"):
		outcome = outcomeFail
	case strings.HasSuffix(r.PhoneNumber, "999"):
		outcome = outcomeHang
	case strings.HasSuffix(r.PhoneNumber, "998"):
		outcome = outcomeUnreachable
	}
	o, err := s.orders.PutOrder(ctx, SandboxOrder{
		OrderID: orderPrefix + r.TransactionID, Reference: r.TransactionID, Kind: r.Kind,
		PhoneNumber: r.PhoneNumber, Amount: r.Amount, Currency: r.Currency, Outcome: outcome,
		CreatedAt: s.Now().UTC(),
	})
	if err != nil {
		return Result{}, fmt.Errorf("%w: sandbox: %v", ErrUnavailable, err)
	}
	return sandboxResult(o.OrderID, Processing, "", "submitted"), nil
}

// Status answers for an order made by Submit.
func (s *Sandbox) Status(ctx context.Context, k Kind, orderID string) (Result, error) {
	ref, ok := strings.CutPrefix(orderID, orderPrefix)
	if !ok {
		return Result{}, fmt.Errorf("%w: sandbox order %q", ErrNotFound, orderID)
	}
	return s.Lookup(ctx, k, ref)
}

// Lookup answers for the order submitted with our reference ref. The
// sandbox keeps one order per reference whatever its kind, so k is not
// needed to find it.
func (s *Sandbox) Lookup(ctx context.Context, _ Kind, ref string) (Result, error) {
	o, err := s.orders.Order(ctx, ref)
	switch {
	case errors.Is(err, ErrNotFound):
		return Result{}, err
	case err != nil:
		return Result{}, fmt.Errorf("%w: sandbox: %v", ErrUnavailable, err)
	}
	switch o.Outcome {
	case outcomeFail:
		return sandboxResult(o.OrderID, Failed, SandboxNotFoundReason, "rejected"), nil
	case outcomeHang:
		return sandboxResult(o.OrderID, Processing, "", "pending at operator"), nil
	case outcomeUnreachable:
		return Result{}, fmt.Errorf("%w: sandbox operator unreachable for %s", ErrUnavailable, o.OrderID)
	}
	return sandboxResult(o.OrderID, Succeeded, "", "completed"), nil
}

func sandboxResult(orderID string, s State, reason, message string) Result {
	raw, _ := json.Marshal(map[string]string{
		"provider": "sandbox",
		"order_id": orderID,
		"status":   string(s),
		"message":  message,
		"reason":   reason,
	})
	return Result{OrderID: orderID, State: s, Reason: reason, Raw: raw}
}
