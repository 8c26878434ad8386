package debtshttp

import (
	"net/http"

	"payments/pkg/debts"
	"payments/pkg/httpapi"
)

// Errors are the answers to the errors of package debts: the rows of the catalogue
// of every function that links them (function.Catalogue joins them).
var Errors = httpapi.Catalogue{
	{Err: debts.ErrInvalidStatus, Status: http.StatusBadRequest, Code: "INVALID_FIELD", Message: "must be PENDING or RECOVERED"},
}
