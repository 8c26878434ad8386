// Command payments is the Lambda entry of the payments function; it only wires the
// environment's configuration to app.NewPayments.
package main

import "payments/pkg/app"

func main() { app.Start("payments", app.NewPayments) }
