package feeshttp

import (
	"net/http"

	"payments/pkg/fees"
	"payments/pkg/httpapi"
)

// Errors are the answers to the errors of package fees: the rows of the catalogue
// of every function that links them (function.Catalogue joins them).
var Errors = httpapi.Catalogue{
	{Err: fees.ErrOperatorUnavailable, Status: http.StatusBadRequest, Code: "OPERATOR_UNAVAILABLE", Message: "operator not available for this country and currency"},
	{Err: fees.ErrNoRule, Status: http.StatusBadRequest, Code: "NO_FEE_RULE", Message: "no fee rule of the company applies to this payment"},
}
