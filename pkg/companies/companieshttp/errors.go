package companieshttp

import (
	"net/http"

	"payments/pkg/companies"
	"payments/pkg/httpapi"
)

// Errors are the answers to the errors of package companies: the rows of the catalogue
// of every function that links them (function.Catalogue joins them).
var Errors = httpapi.Catalogue{
	{Err: companies.ErrNotFound, Status: http.StatusNotFound, Code: "COMPANY_NOT_FOUND", Message: "company not found"},
	{Err: companies.ErrKYBNotApproved, Status: http.StatusForbidden, Code: "KYB_NOT_APPROVED", Message: "KYB not approved"},
}
