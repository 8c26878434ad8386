package fxhttp

import (
	"net/http"

	"payments/pkg/fx"
	"payments/pkg/httpapi"
)

// Errors are the answers to the errors of package fx: the rows of the catalogue
// of every function that links them (function.Catalogue joins them).
var Errors = httpapi.Catalogue{
	{Err: fx.ErrNoRate, Status: http.StatusBadRequest, Code: "NO_EXCHANGE_RATE", Message: "no exchange rate configured for the pair"},
	{Err: fx.ErrRateChanged, Status: http.StatusBadRequest, Code: "RATE_CHANGED", Message: "exchange rate has changed; request a new quote"},
	{Err: fx.ErrChanged, Status: http.StatusConflict, Code: "CONFLICT", Message: "the rate is being changed by another request: retry shortly", RetryAfter: 1},
}
