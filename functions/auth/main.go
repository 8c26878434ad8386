// Command auth is the Lambda entry of the auth function; it only wires the
// environment's configuration to app.NewAuth.
package main

import "payments/pkg/app"

func main() { app.Start("auth", app.NewAuth) }
