package authhttp

import (
	"net/http"

	"payments/pkg/auth"
	"payments/pkg/httpapi"
)

// Errors are the answers to the errors of package auth: the rows of the catalogue
// of every function that links them (function.Catalogue joins them).
var Errors = httpapi.Catalogue{
	{Err: auth.ErrInvalidCredentials, Status: http.StatusUnauthorized, Code: "INVALID_CLIENT_CREDENTIALS", Message: "invalid client credentials"},
	{Err: auth.ErrRateLimited, Status: http.StatusTooManyRequests, Code: "RATE_LIMIT_EXCEEDED", Message: "rate limit exceeded"},
}
