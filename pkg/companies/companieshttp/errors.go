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
	{Err: companies.ErrOwnerExists, Status: http.StatusConflict, Code: "OWNER_EXISTS", Message: "the owner's email has a dashboard user already"},
	{Err: companies.ErrOwnerNotCreated, Status: http.StatusBadGateway, Code: "OWNER_NOT_CREATED",
		Message: "the owner was not created in the dashboard's user pool: add them with POST /admin/companies/{id}/owner"},
}
