// Command deploy-check is the Lambda entry of the deploy-check function,
// CodeDeploy's BeforeAllowTraffic hook; it only wires the environment's
// configuration to deploycheck.New.
package main

import (
	"payments/pkg/function"
	"payments/pkg/function/deploycheck"
)

func main() { function.Start("deploy-check", deploycheck.New, nil) }
