// Command cards is the Lambda entry of the cards function; it only wires
// the environment's configuration to cardsapi.New, reading its secrets
// from Secrets Manager.
package main

import (
	"payments/pkg/function"
	"payments/pkg/function/cardsapi"
	"payments/pkg/function/secrets"
)

func main() { function.Start("cards", cardsapi.New, secrets.New) }
