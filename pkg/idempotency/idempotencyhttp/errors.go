package idempotencyhttp

import (
	"net/http"

	"payments/pkg/httpapi"
	"payments/pkg/idempotency"
)

// Errors are the answers to the errors of package idempotency: the rows of the catalogue
// of every function that links them (function.Catalogue joins them).
var Errors = httpapi.Catalogue{
	{Err: idempotency.ErrKeyReused, Status: http.StatusUnprocessableEntity, Code: "IDEMPOTENCY_KEY_REUSED", Message: "this Idempotency-Key was used with a different request"},
	{Err: idempotency.ErrKeyInUse, Status: http.StatusConflict, Code: "IDEMPOTENCY_KEY_IN_USE", Message: "a request with this Idempotency-Key is still running: retry shortly", RetryAfter: 1},
	{Err: idempotency.ErrLeaseLost, Status: http.StatusConflict, Code: "IDEMPOTENCY_KEY_IN_USE", Message: "a retry with this Idempotency-Key took the request over: retry shortly for its answer", RetryAfter: 1},
	{Err: idempotency.ErrResponseNotStored, Status: http.StatusInternalServerError, Code: "IDEMPOTENCY_RESPONSE_NOT_STORED", Message: "the request with this Idempotency-Key ran once, but its response was too large to keep: look its result up rather than retrying"},
}
