// Command auth is the Lambda entry of the auth function; it only wires
// the environment's configuration to authapi.New.
package main

import (
	"payments/pkg/function"
	"payments/pkg/function/authapi"
)

func main() { function.Start("auth", authapi.New, nil) }
