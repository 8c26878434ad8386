// Command sweeper is the Lambda entry of the sweeper function; it only wires
// the environment's configuration to sweeper.New, reading its secret (the
// issuer's, with which the sandbox card network signs what it delivers
// again) from Secrets Manager.
package main

import (
	"payments/pkg/function"
	"payments/pkg/function/secrets"
	"payments/pkg/function/sweeper"
)

func main() { function.Start("sweeper", sweeper.New, secrets.New) }
