// Command webhook-worker is the Lambda entry of the webhook-worker function; it only wires the
// environment's configuration to app.NewWebhookWorker.
package main

import "payments/pkg/app"

func main() { app.Start("webhook-worker", app.NewWebhookWorker) }
