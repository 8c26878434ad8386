// Command openapi is the Lambda entry of the openapi function; it only wires
// the environment's configuration to app.NewOpenAPI.
package main

import "payments/pkg/app"

func main() { app.Start("openapi", app.NewOpenAPI) }
