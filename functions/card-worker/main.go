// Command card-worker is the Lambda entry of the card-worker function; it
// only wires the environment's configuration to app.NewCardWorker.
package main

import "payments/pkg/app"

func main() { app.Start("card-worker", app.NewCardWorker) }
