// Command admin is the Lambda entry of the admin function; it only wires the
// environment's configuration to app.NewAdmin.
package main

import "payments/pkg/app"

func main() { app.Start("admin", app.NewAdmin) }
