// Command webhooks is the Lambda entry of the webhooks function; it only wires the
// environment's configuration to app.NewWebhooks.
package main

import "payments/pkg/app"

func main() { app.Start("webhooks", app.NewWebhooks) }
