// Command stripe-webhooks is the Lambda entry of the stripe-webhooks
// function; it only wires the environment's configuration to
// stripewebhooks.New, reading its secrets from Secrets Manager.
package main

import (
	"payments/pkg/function"
	"payments/pkg/function/secrets"
	"payments/pkg/function/stripewebhooks"
)

func main() {
	function.Start("stripe-webhooks", stripewebhooks.New, secrets.New)
}
