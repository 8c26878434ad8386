// Command customers is the Lambda entry of the customers function; it only
// wires the environment's configuration to app.NewCustomers.
package main

import "payments/pkg/app"

func main() { app.Start("customers", app.NewCustomers) }
