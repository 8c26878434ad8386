// Command issuer-authorizations is the Lambda entry of the
// issuer-authorizations function; it only wires the environment's
// configuration to issuerauthorizations.New, reading its secrets from
// Secrets Manager.
package main

import (
	"payments/pkg/function"
	"payments/pkg/function/issuerauthorizations"
	"payments/pkg/function/secrets"
)

func main() {
	function.Start("issuer-authorizations", issuerauthorizations.New, secrets.New)
}
