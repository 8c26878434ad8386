// Command openapi is the Lambda entry of the openapi function; it only wires
// the environment's configuration to openapi.New.
package main

import (
	"payments/pkg/function"
	"payments/pkg/function/openapi"
)

func main() { function.Start("openapi", openapi.New, nil) }
