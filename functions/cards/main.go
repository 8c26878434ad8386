// Command cards is the Lambda entry of the cards function; it only wires
// the environment's configuration to app.NewCards.
package main

import "payments/pkg/app"

func main() { app.Start("cards", app.NewCards) }
