// Command payments is the Lambda entry of the payments function; it only wires
// the environment's configuration to paymentsapi.New, reading its secrets
// from Secrets Manager.
package main

import (
	"payments/pkg/function"
	"payments/pkg/function/paymentsapi"
	"payments/pkg/function/secrets"
)

func main() { function.Start("payments", paymentsapi.New, secrets.New) }
