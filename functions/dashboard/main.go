// Command dashboard is the Lambda entry of the dashboard function; it only
// wires the environment's configuration to dashboard.New.
package main

import (
	"payments/pkg/function"
	"payments/pkg/function/dashboard"
	"payments/pkg/function/secrets"
)

func main() { function.Start("dashboard", dashboard.New, secrets.New) }
