package customershttp

import (
	"net/http"

	"payments/pkg/customers"
	"payments/pkg/field"
	"payments/pkg/httpapi"
	"payments/pkg/timestamp"
)

// ReviewPageSize is the default page size of GET /admin/customers.
const ReviewPageSize = 20

// ReviewRoutes registers the operator console's KYC review routes (the
// router's guard must admit operators only):
//
//	GET  /admin/customers?kyc_status=PENDING_REVIEW   customers of every company waiting for review, oldest first
//	GET  /admin/customers/{id}                        one customer of any company, with links to its documents
//	POST /admin/customers/{id}/kyc                    decide it once, {status, reason}
func ReviewRoutes(rt *httpapi.Router, svc *customers.Review) {
	rt.Handle("GET /admin/customers", func(w http.ResponseWriter, r *http.Request) error {
		if status := r.URL.Query()["kyc_status"]; len(status) != 1 || status[0] != string(customers.PendingReview) {
			return field.Invalid("kyc_status", "must be PENDING_REVIEW: the console lists the customers awaiting review")
		}
		page, total, err := httpapi.ParseCursorPage(r, ReviewPageSize, svc.CountPending)
		if err != nil {
			return err
		}
		cs, next, err := svc.Pending(r.Context(), page.After, page.Limit)
		if err != nil {
			return err
		}
		out := make([]AdminView, len(cs))
		for i, c := range cs {
			out[i] = customerAdminView(c)
		}
		httpapi.RespondList(w, out, httpapi.Pagination(r, page, total, next))
		return nil
	})
	rt.Handle("GET /admin/customers/{id}", func(w http.ResponseWriter, r *http.Request) error {
		c, links, err := svc.Get(r.Context(), r.PathValue("id"))
		if err != nil {
			return err
		}
		httpapi.Respond(w, http.StatusOK, "Customer retrieved successfully", customerAdminDetail(c, links))
		return nil
	})
	rt.Handle("POST /admin/customers/{id}/kyc", func(w http.ResponseWriter, r *http.Request) error {
		var body decisionBody
		if err := httpapi.Decode(r, &body); err != nil {
			return err
		}
		c, links, err := svc.Decide(r.Context(), r.PathValue("id"), customers.Decision{
			Status: customers.KYCStatus(body.Status), Reason: body.Reason, By: httpapi.Operator(r.Context()),
		})
		if err != nil {
			return err
		}
		httpapi.Respond(w, http.StatusOK, "Customer KYC decided", customerAdminDetail(c, links))
		return nil
	})
}

// decisionBody is the body of POST /admin/customers/{id}/kyc.
type decisionBody struct {
	Status string `json:"status"`
	Reason string `json:"reason"`
}

// AdminView is a customer as the operator console lists it: what it needs
// to decide on the identity, and the decision once made.
type AdminView struct {
	ID                   string  `json:"id"`
	CompanyID            string  `json:"company_id"`
	FirstName            string  `json:"first_name"`
	LastName             string  `json:"last_name"`
	DateOfBirth          string  `json:"date_of_birth"`
	Country              string  `json:"country"`
	CountryISOCode       string  `json:"country_iso_code"`
	IdentificationNumber string  `json:"identification_number"`
	DocumentType         string  `json:"document_type"`
	KYCStatus            string  `json:"kyc_status"`
	KYCReason            *string `json:"kyc_reason"`
	ReviewedBy           *string `json:"reviewed_by"`
	ReviewNote           *string `json:"review_note"`
	ReviewedAt           *string `json:"reviewed_at"`
	CreatedAt            string  `json:"created_at"`
	UpdatedAt            string  `json:"updated_at"`
}

// AdminDetail is one customer as the console shows it: AdminView and a
// link to each side of its document.
type AdminDetail struct {
	AdminView
	Documents []LinkView `json:"documents"`
}

// LinkView is a DocumentLink as the console gets it.
type LinkView struct {
	Side      string `json:"side"`
	URL       string `json:"url"`
	ExpiresAt string `json:"expires_at"`
}

// customerAdminView returns c as the console lists it.
func customerAdminView(c customers.Customer) AdminView {
	v := AdminView{
		ID: c.ID, CompanyID: c.CompanyID, FirstName: c.FirstName, LastName: c.LastName,
		DateOfBirth: timestamp.Format(c.DateOfBirth), Country: c.Country, CountryISOCode: c.CountryISOCode,
		IdentificationNumber: c.IdentificationNumber, DocumentType: string(c.DocumentType),
		KYCStatus: string(c.KYCStatus), KYCReason: optional(c.KYCReason),
		CreatedAt: timestamp.Format(c.CreatedAt), UpdatedAt: timestamp.Format(c.UpdatedAt),
	}
	if r := c.Review; r != nil {
		at := timestamp.Format(r.At)
		v.ReviewedBy, v.ReviewNote, v.ReviewedAt = optional(r.By), optional(r.Note), &at
	}
	return v
}

// customerAdminDetail returns c as the console shows it, with links.
func customerAdminDetail(c customers.Customer, links []customers.DocumentLink) AdminDetail {
	out := AdminDetail{AdminView: customerAdminView(c), Documents: make([]LinkView, len(links))}
	for i, l := range links {
		out.Documents[i] = LinkView{Side: l.Side, URL: l.URL, ExpiresAt: timestamp.Format(l.ExpiresAt)}
	}
	return out
}
