// Command card-network is the Lambda entry of the card-network function;
// it only wires the environment's configuration to cardnetwork.New,
// reading its secrets from Secrets Manager.
package main

import (
	"payments/pkg/function"
	"payments/pkg/function/cardnetwork"
	"payments/pkg/function/secrets"
)

func main() { function.Start("card-network", cardnetwork.New, secrets.New) }
