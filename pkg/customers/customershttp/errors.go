package customershttp

import (
	"net/http"

	"payments/pkg/customers"
	"payments/pkg/httpapi"
)

// Errors are the answers to the errors of package customers: the rows of the catalogue
// of every function that links them (function.Catalogue joins them).
var Errors = httpapi.Catalogue{
	{Err: customers.ErrNotFound, Status: http.StatusNotFound, Code: "CUSTOMER_NOT_FOUND", Message: "customer not found"},
	{Err: customers.ErrDuplicate, Status: http.StatusConflict, Code: "DUPLICATE_CUSTOMER", Message: "customer with this email or ID already exists"},
	{Err: customers.ErrDocumentNotFetched, Status: http.StatusUnprocessableEntity, Code: "DOCUMENT_NOT_FETCHED", Message: "could not fetch a document URL"},
	{Err: customers.ErrDocumentUnreadable, Status: http.StatusUnprocessableEntity, Code: "DOCUMENT_UNREADABLE", Message: "KYC document unreadable"},
	{Err: customers.ErrFileTooLarge, Status: http.StatusRequestEntityTooLarge, Code: "FILE_TOO_LARGE", Message: "file larger than 2 MB"},
	{Err: customers.ErrNotMultipart, Status: http.StatusUnsupportedMediaType, Code: "UNSUPPORTED_MEDIA_TYPE", Message: "Content-Type must be multipart/form-data"},
	{Err: customers.ErrNoProviders, Status: http.StatusServiceUnavailable, Code: "NO_KYC_PROVIDER", Message: "customer sync is not available: no card issuer is configured"},
	{Err: customers.ErrKYCDecided, Status: http.StatusConflict, Code: "KYC_ALREADY_DECIDED", Message: "the customer's identity is already decided (VERIFIED or REJECTED): it cannot be decided again"},
	{Err: customers.ErrVerifierUnavailable, Status: http.StatusServiceUnavailable, Code: "KYC_UNAVAILABLE", Message: "identity verification temporarily unavailable: nothing was stored, retry shortly", RetryAfter: 5},
	{Err: customers.ErrIssuerUnavailable, Status: http.StatusServiceUnavailable, Code: "ISSUER_UNAVAILABLE", Message: "card issuer temporarily unavailable: retry shortly", RetryAfter: 5},
}
