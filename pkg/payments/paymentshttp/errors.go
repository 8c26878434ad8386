package paymentshttp

import (
	"net/http"

	"payments/pkg/httpapi"
	"payments/pkg/payments"
)

// Errors are the answers to the errors of package payments: the rows of the catalogue
// of every function that links them (function.Catalogue joins them).
var Errors = httpapi.Catalogue{
	{Err: payments.ErrNotFound, Status: http.StatusNotFound, Code: "PAYMENT_NOT_FOUND", Message: "transaction not found"},
	{Err: payments.ErrDuplicateExternalID, Status: http.StatusBadRequest, Code: "DUPLICATE_EXTERNAL_ID", Message: "duplicate external_id"},
	{Err: payments.ErrNoWallet, Status: http.StatusBadRequest, Code: "NO_WALLET", Message: "no wallet for this country and currency"},
	{Err: payments.ErrNoOperator, Status: http.StatusServiceUnavailable, Code: "NO_OPERATOR", Message: "payouts and collections are not available: no operator is configured"},
	{Err: payments.ErrFinal, Status: http.StatusConflict, Code: "PAYMENT_FINAL", Message: "transaction is already final: it cannot be resolved again"},
	{Err: payments.ErrNotFlagged, Status: http.StatusConflict, Code: "PAYMENT_NOT_FLAGGED", Message: "transaction does not require reconciliation: the worker is still handling it"},
}
