// Command sweeper is the Lambda entry of the sweeper function; it only wires the
// environment's configuration to app.NewSweeper.
package main

import "payments/pkg/app"

func main() { app.Start("sweeper", app.NewSweeper) }
