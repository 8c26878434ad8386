// Command sweeper is the Lambda entry of the sweeper function; it only wires
// the environment's configuration to sweeper.New.
package main

import (
	"payments/pkg/function"
	"payments/pkg/function/sweeper"
)

func main() { function.Start("sweeper", sweeper.New, nil) }
