// Command fund-worker is the Lambda entry of the fund-worker function; it only wires the
// environment's configuration to app.NewFundWorker.
package main

import "payments/pkg/app"

func main() { app.Start("fund-worker", app.NewFundWorker) }
