package operatorhookshttp

import (
	"net/http"

	"payments/pkg/httpapi"
	"payments/pkg/providers/operator"
)

// Errors are the answers to the errors of package operator: the rows of the catalogue
// of every function that links them (function.Catalogue joins them).
var Errors = httpapi.Catalogue{
	{Err: operator.ErrCallbackSignature, Status: http.StatusUnauthorized, Code: "INVALID_SIGNATURE", Message: "missing, malformed, stale or forged callback signature (Signature, Signature-Input, Content-Digest)"},
	{Err: operator.ErrCallbackMalformed, Status: http.StatusBadRequest, Code: "INVALID_CALLBACK", Message: "the callback is not a status of a payout or a deposit"},
}
