// Command customers is the Lambda entry of the customers function; it only wires
// the environment's configuration to customersapi.New, reading its secrets
// from Secrets Manager.
package main

import (
	"payments/pkg/function"
	"payments/pkg/function/customersapi"
	"payments/pkg/function/secrets"
)

func main() { function.Start("customers", customersapi.New, secrets.New) }
