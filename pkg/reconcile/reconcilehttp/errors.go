package reconcilehttp

import (
	"net/http"

	"payments/pkg/httpapi"
	"payments/pkg/reconcile"
)

// Errors are the answers to the errors of package reconcile: the rows of the catalogue
// of every function that links them (function.Catalogue joins them).
var Errors = httpapi.Catalogue{
	{Err: reconcile.ErrNotFound, Status: http.StatusNotFound, Code: "RECONCILIATION_NOT_FOUND", Message: "reconciliation not found"},
	{Err: reconcile.ErrRunning, Status: http.StatusConflict, Code: "RECONCILIATION_RUNNING", Message: "a reconciliation of this provider is running: see GET /admin/reconciliations"},
	{Err: reconcile.ErrNotReconciled, Status: http.StatusConflict, Code: "PROVIDER_NOT_RECONCILED", Message: "this provider's records cannot be read by this deployment: none is configured, or its adapter lists none"},
}
