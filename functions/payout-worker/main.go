// Command payout-worker is the Lambda entry of the payout-worker function; it only wires the
// environment's configuration to app.NewPayoutWorker.
package main

import "payments/pkg/app"

func main() { app.Start("payout-worker", app.NewPayoutWorker) }
