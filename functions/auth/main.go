// Command auth is the Lambda entry of the auth function; it only wires
// the environment's configuration to authapi.New, reading its secrets
// from Secrets Manager.
package main

import (
	"payments/pkg/function"
	"payments/pkg/function/authapi"
	"payments/pkg/function/secrets"
)

func main() { function.Start("auth", authapi.New, secrets.New) }
