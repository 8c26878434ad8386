// Command payout-worker is the Lambda entry of the payout-worker function; it only wires
// the environment's configuration to payoutworker.New, reading its secret (the
// aggregator's token, in production mode) from Secrets Manager.
package main

import (
	"payments/pkg/function"
	"payments/pkg/function/payoutworker"
	"payments/pkg/function/secrets"
)

func main() { function.Start("payout-worker", payoutworker.New, secrets.New) }
