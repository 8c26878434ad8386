// Command issuer-webhooks is the Lambda entry of the issuer-webhooks
// function; it only wires the environment's configuration to
// app.NewIssuerWebhooks.
package main

import "payments/pkg/app"

func main() { app.Start("issuer-webhooks", app.NewIssuerWebhooks) }
