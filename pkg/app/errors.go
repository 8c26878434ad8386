package app

import (
	"payments/pkg/httpapi"
)

// Errors is the one catalogue that maps domain errors to HTTP: status, stable
// code and the message clients see. Every HTTP function writes its errors
// through it.
var Errors = httpapi.Catalogue{
	// companies and auth

	// wallets
}
