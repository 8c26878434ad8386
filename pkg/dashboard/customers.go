package dashboard

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"payments/pkg/cards"
	"payments/pkg/customers"
	"payments/pkg/httpapi"
	"payments/pkg/page"
	"payments/pkg/sessions"
)

// Customers is what the dashboard reads of a company's customers
// (customers.Directory: the API's GET /customers without its sync, and
// GET /customers/{id}).
type Customers interface {
	List(ctx context.Context, companyID string, p page.Request) (page.Result[customers.Customer], error)
	Get(ctx context.Context, companyID, id string) (customers.Customer, error)
}

// customerRow is one customer of the list.
type customerRow struct {
	ID, Name, Email, Phone, KYC, Created string
}

// customersData is the customers list's.
type customersData struct {
	Customers []customerRow
	Total     int
	Next      string
}

// customerData is a customer's page: their fields and their cards.
type customerData struct {
	Customer customerRow
	Fields   []fieldRow
	Cards    []cardRow
}

// fieldRow is one term of a definition list.
type fieldRow struct{ Term, Value string }

// customersRoutes are the Customers pages: read only, so every role's.
func (h *Handler) customersRoutes() []route {
	return []route{
		{"GET /dashboard/customers", ReadMoney, h.customersList},
		{"GET /dashboard/customers/{id}", ReadMoney, h.customer},
	}
}

// customersList shows a page of the company's customers, newest first.
func (h *Handler) customersList(w http.ResponseWriter, r *http.Request, s sessions.Session) {
	p, ok := h.listPage(w, r, s, customers.PageSize)
	if !ok {
		return
	}
	res, err := h.deps.Customers.List(r.Context(), s.CompanyID, p)
	if errors.Is(err, page.ErrBadCursor) {
		h.badPageLink(w, r)
		return
	}
	if err != nil {
		h.failed(w, r, err)
		return
	}
	d := customersData{Total: res.Total, Next: nextLink(r, s, p, res.Total, res.Next)}
	for _, c := range res.Items {
		d.Customers = append(d.Customers, customerRowOf(c))
	}
	h.render(w, r, http.StatusOK, "customers", view{Title: "Customers", Nav: "customers", Data: d})
}

// customer shows a customer of the company and their cards; another
// company's customer is not found.
func (h *Handler) customer(w http.ResponseWriter, r *http.Request, s sessions.Session) {
	c, err := h.deps.Customers.Get(r.Context(), s.CompanyID, r.PathValue("id"))
	if errors.Is(err, customers.ErrNotFound) {
		h.notFound(w, r)
		return
	}
	if err != nil {
		h.failed(w, r, err)
		return
	}
	cs, err := h.deps.Cards.CustomerCards(r.Context(), s.CompanyID, c.ID)
	if err != nil && !errors.Is(err, cards.ErrNoCards) {
		h.failed(w, r, err)
		return
	}
	row := customerRowOf(c)
	d := customerData{Customer: row, Fields: []fieldRow{
		{"Email", c.Email}, {"Phone", row.Phone}, {"KYC status", row.KYC},
		{"Address", strings.Join(nonEmpty(c.Street, c.City, c.State, c.PostalCode, c.Country), ", ")},
		{"Date of birth", c.DateOfBirth.UTC().Format("2006-01-02")},
		{"Identity document", strings.TrimSpace(string(c.DocumentType) + " " + c.IdentificationNumber)},
		{"Active", yesNo(c.IsActive)}, {"Created", row.Created},
	}}
	if c.KYCReason != "" {
		d.Fields = append(d.Fields, fieldRow{"KYC reason", c.KYCReason})
	}
	for _, cd := range cs {
		d.Cards = append(d.Cards, cardRowOf(cd, row.Name))
	}
	h.render(w, r, http.StatusOK, "customer", view{Title: row.Name, Nav: "customers", Data: d})
}

// customerRowOf returns c as the list shows them.
func customerRowOf(c customers.Customer) customerRow {
	return customerRow{
		ID: c.ID, Name: strings.TrimSpace(c.FirstName + " " + c.LastName), Email: c.Email,
		Phone: strings.TrimSpace(c.PhoneCountryCode + " " + c.PhoneNumber), KYC: string(c.KYCStatus),
		Created: c.CreatedAt.UTC().Format("2006-01-02 15:04 UTC"),
	}
}

// listPage reads the page a list's link asks for (?cursor=, as the API's
// next_cursor: httpapi.ParsePage, for the session's company); a link that
// is not one of the list's is a 400 page.
func (h *Handler) listPage(w http.ResponseWriter, r *http.Request, s sessions.Session, limit int) (page.Request, bool) {
	p, err := httpapi.ParsePage(r.WithContext(httpapi.WithCompany(r.Context(), s.CompanyID)), limit)
	if err != nil {
		h.badPageLink(w, r)
		return page.Request{}, false
	}
	return p, true
}

// nextLink returns the link to the page after p, whose last item is at
// next, of a list of total items: "" on the last page.
func nextLink(r *http.Request, s sessions.Session, p page.Request, total int, next string) string {
	cur := httpapi.NextCursor(r.WithContext(httpapi.WithCompany(r.Context(), s.CompanyID)), p, total, next)
	if cur == nil {
		return ""
	}
	q := r.URL.Query()
	q.Del("page")
	q.Set("cursor", *cur)
	return (&url.URL{Path: r.URL.Path, RawQuery: q.Encode()}).String()
}

// badPageLink answers a page link that is not one of the list's.
func (h *Handler) badPageLink(w http.ResponseWriter, r *http.Request) {
	h.message(w, r, http.StatusBadRequest, "Page link not valid", "This link to a page of the list is not valid. Start again from the list's first page.")
}

// nonEmpty returns the values that are not blank.
func nonEmpty(vs ...string) []string {
	var out []string
	for _, v := range vs {
		if strings.TrimSpace(v) != "" {
			out = append(out, v)
		}
	}
	return out
}

// yesNo says b in a word.
func yesNo(b bool) string {
	if b {
		return "Yes"
	}
	return "No"
}
