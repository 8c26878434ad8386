package bulkhttp

import (
	"net/http"

	"payments/pkg/bulk"
	"payments/pkg/httpapi"
)

// Errors are the answers to the errors of package bulk: the rows of the catalogue
// of every function that links them (function.Catalogue joins them).
var Errors = httpapi.Catalogue{
	{Err: bulk.ErrNotFound, Status: http.StatusNotFound, Code: "BULK_BATCH_NOT_FOUND", Message: "bulk payout batch not found"},
}
