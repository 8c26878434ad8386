// Command wallets is the Lambda entry of the wallets function; it only wires the
// environment's configuration to app.NewWallets.
package main

import "payments/pkg/app"

func main() { app.Start("wallets", app.NewWallets) }
