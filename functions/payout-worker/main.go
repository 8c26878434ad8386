// Command payout-worker is the Lambda entry of the payout-worker function; it only wires
// the environment's configuration to payoutworker.New.
package main

import (
	"payments/pkg/function"
	"payments/pkg/function/payoutworker"
)

func main() { function.Start("payout-worker", payoutworker.New, nil) }
