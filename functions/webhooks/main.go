// Command webhooks is the Lambda entry of the webhooks function; it only wires
// the environment's configuration to webhooksapi.New.
package main

import (
	"payments/pkg/function"
	"payments/pkg/function/webhooksapi"
)

func main() { function.Start("webhooks", webhooksapi.New, nil) }
