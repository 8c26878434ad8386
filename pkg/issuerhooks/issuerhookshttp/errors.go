package issuerhookshttp

import (
	"net/http"

	"payments/pkg/httpapi"
	"payments/pkg/issuerhooks"
)

// Errors are the answers to the errors of package issuerhooks: the rows of the catalogue
// of every function that links them (function.Catalogue joins them).
var Errors = httpapi.Catalogue{
	{Err: issuerhooks.ErrBadSignature, Status: http.StatusUnauthorized, Code: "INVALID_SIGNATURE", Message: "missing, malformed, stale or forged X-Issuer-Signature"},
	{Err: issuerhooks.ErrBadStripeSignature, Status: http.StatusUnauthorized, Code: "INVALID_SIGNATURE", Message: "missing, malformed, stale or forged Stripe-Signature"},
}
