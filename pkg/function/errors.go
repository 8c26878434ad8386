package function

import (
	"net/http"
	"slices"

	"payments/pkg/contention"
	"payments/pkg/httpapi"
)

// CommonErrors are the answers of every function, whatever it links:
// writes that kept losing races with other writes (the store's), and the
// domain's records changed by another request first
// (payments.ErrStatusChanged, cards.ErrChanged), which wrap it; then a
// dependency (DynamoDB, SQS) slow or throttling, after the SDK's retries.
// Catalogue puts them last, so that a domain error wrapping one keeps its
// own answer.
var CommonErrors = httpapi.Catalogue{
	{Err: contention.ErrConflict, Status: http.StatusConflict, Code: "CONFLICT", Message: "the record is being changed by other requests: retry shortly", RetryAfter: 1},
	{Is: Unavailable, Status: http.StatusServiceUnavailable, Code: "TEMPORARILY_UNAVAILABLE", Message: "the service is slow to answer: retry shortly (with the same Idempotency-Key, a request that moves money is safe to retry)", RetryAfter: 2},
}

// Catalogue returns a function's error catalogue, which maps the errors it
// may meet to HTTP: the rows of parts, the catalogues (Errors) of the
// domains' HTTP packages for the packages the function links, then
// CommonErrors. Each function joins its own; a test holds every
// function's to the packages it links (pkg/app).
func Catalogue(parts ...httpapi.Catalogue) httpapi.Catalogue {
	return slices.Concat(append(parts, CommonErrors)...)
}
