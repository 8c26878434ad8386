// Command fund-worker is the Lambda entry of the fund-worker function; it only wires
// the environment's configuration to fundworker.New.
package main

import (
	"payments/pkg/function"
	"payments/pkg/function/fundworker"
)

func main() { function.Start("fund-worker", fundworker.New, nil) }
