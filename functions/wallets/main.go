// Command wallets is the Lambda entry of the wallets function; it only wires
// the environment's configuration to walletsapi.New.
package main

import (
	"payments/pkg/function"
	"payments/pkg/function/walletsapi"
)

func main() { function.Start("wallets", walletsapi.New, nil) }
