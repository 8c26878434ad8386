// Command admin is the Lambda entry of the admin function; it only wires
// the environment's configuration to adminapi.New, reading its secrets
// from Secrets Manager.
package main

import (
	"payments/pkg/function"
	"payments/pkg/function/adminapi"
	"payments/pkg/function/secrets"
)

func main() { function.Start("admin", adminapi.New, secrets.New) }
