package operator

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Sandbox is the simulated operator. It keeps no state: the outcome is
// decided by the phone number and carried in the order id, so any instance
// answers the same for the same order.
//
//   - a phone number ending in 000 fails permanently ("recipient account not found");
//   - a phone number ending in 999 stays PROCESSING for ever (the time-out path);
//   - any other number is accepted as PROCESSING and succeeds on the first status query.
type Sandbox struct{}

var _ Gateway = Sandbox{}

// SandboxNotFoundReason is the failure reason for numbers ending in 000.
const SandboxNotFoundReason = "recipient account not found"

// sandbox order ids look like SBX-<outcome>-<transaction id>.
const (
	outcomeSucceed = "S"
	outcomeFail    = "F"
	outcomeHang    = "H"
)

// Submit accepts the request; the order id encodes its eventual outcome.
func (Sandbox) Submit(_ context.Context, r Request) (Result, error) {
	outcome := outcomeSucceed
	switch {
	case strings.HasSuffix(r.PhoneNumber, "000"):
		outcome = outcomeFail
	case strings.HasSuffix(r.PhoneNumber, "999"):
		outcome = outcomeHang
	}
	id := "SBX-" + outcome + "-" + r.TransactionID
	return sandboxResult(id, Processing, "", "submitted"), nil
}

// Status answers for an order made by Submit.
func (Sandbox) Status(_ context.Context, orderID string) (Result, error) {
	parts := strings.SplitN(orderID, "-", 3)
	if len(parts) != 3 || parts[0] != "SBX" {
		return Result{}, fmt.Errorf("operator: sandbox: unknown order %q", orderID)
	}
	switch parts[1] {
	case outcomeFail:
		return sandboxResult(orderID, Failed, SandboxNotFoundReason, "rejected"), nil
	case outcomeHang:
		return sandboxResult(orderID, Processing, "", "pending at operator"), nil
	default:
		return sandboxResult(orderID, Succeeded, "", "completed"), nil
	}
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
