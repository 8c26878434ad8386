// Command card-worker is the Lambda entry of the card-worker function; it only wires
// the environment's configuration to cardworker.New.
package main

import (
	"payments/pkg/function"
	"payments/pkg/function/cardworker"
)

func main() { function.Start("card-worker", cardworker.New, nil) }
