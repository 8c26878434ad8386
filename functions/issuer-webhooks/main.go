// Command issuer-webhooks is the Lambda entry of the issuer-webhooks function; it only wires
// the environment's configuration to issuerwebhooks.New, reading its secrets
// from Secrets Manager.
package main

import (
	"payments/pkg/function"
	"payments/pkg/function/issuerwebhooks"
	"payments/pkg/function/secrets"
)

func main() { function.Start("issuer-webhooks", issuerwebhooks.New, secrets.New) }
