// Command webhook-worker is the Lambda entry of the webhook-worker function; it only wires
// the environment's configuration to webhookworker.New.
package main

import (
	"payments/pkg/function"
	"payments/pkg/function/webhookworker"
)

func main() { function.Start("webhook-worker", webhookworker.New, nil) }
