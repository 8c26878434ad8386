// Command wallets is the Lambda entry of the wallets function; it only wires
// the environment's configuration to walletsapi.New, reading its secrets
// from Secrets Manager.
package main

import (
	"payments/pkg/function"
	"payments/pkg/function/secrets"
	"payments/pkg/function/walletsapi"
)

func main() { function.Start("wallets", walletsapi.New, secrets.New) }
