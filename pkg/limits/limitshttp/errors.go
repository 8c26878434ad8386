package limitshttp

import (
	"net/http"

	"payments/pkg/httpapi"
	"payments/pkg/limits"
)

// Errors are the answers to the errors of package limits: the rows of the catalogue
// of every function that links them (function.Catalogue joins them).
var Errors = httpapi.Catalogue{
	{Err: limits.ErrRateLimited, Status: http.StatusTooManyRequests, Code: "RATE_LIMITED", Message: "the company's requests of this kind exceed its rate limit: retry after Retry-After seconds"},
}
