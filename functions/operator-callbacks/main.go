// Command operator-callbacks is the Lambda entry of the operator-callbacks
// function; it only wires the environment's configuration to
// operatorcallbacks.New. It reads no secret: the aggregator's key that
// verifies callbacks is public.
package main

import (
	"payments/pkg/function"
	"payments/pkg/function/operatorcallbacks"
)

func main() { function.Start("operator-callbacks", operatorcallbacks.New, nil) }
