// Package customershttp is the HTTP layer of pkg/customers: its routes, which read the
// request, call the service and answer, and the wire types its answers are
// made of, converted from the domain's.
package customershttp

import (
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"unicode"

	"payments/pkg/customers"
	"payments/pkg/field"
	"payments/pkg/httpapi"
	"payments/pkg/timestamp"
)

// maxFormBytes caps a multipart enrolment. API Gateway hands the body to
// Lambda base64-encoded inside the event, and Lambda takes at most 6 MB of
// event: 4.25 MiB of form is 5.7 MB of base64, with room for the rest of
// the event. Two files of MaxUploadBytes and the fields fit.
const maxFormBytes = 4<<20 + 256<<10

// maxFormValue caps one text field of a multipart enrolment, in bytes;
// the longest field allows 255 characters of up to 4 bytes each.
const maxFormValue = 1020

// Routes registers the customers function's routes.
func Routes(rt *httpapi.Router, svc *customers.Service) {
	h := handlers{svc}
	rt.Handle("POST /customers/enroll", h.enroll)
	rt.Handle("POST /customers", h.upload)
	rt.Handle("GET /customers", h.list)
	rt.Handle("GET /customers/{id}", h.get)
}

type handlers struct{ svc *customers.Service }

func (h handlers) enroll(w http.ResponseWriter, r *http.Request) error {
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	var in customers.Fields
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	c, err := h.svc.EnrollFromURLs(r.Context(), cid, in)
	if err != nil {
		return err
	}
	httpapi.Respond(w, http.StatusCreated, "Customer enrolled successfully", customerResponse(c))
	return nil
}

func (h handlers) upload(w http.ResponseWriter, r *http.Request) error {
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	f, front, back, err := readForm(r)
	if err != nil {
		return err
	}
	c, err := h.svc.EnrollWithFiles(r.Context(), cid, f, front, back)
	if err != nil {
		return err
	}
	httpapi.Respond(w, http.StatusCreated, "Customer enrolled successfully", customerResponse(c))
	return nil
}

func (h handlers) list(w http.ResponseWriter, r *http.Request) error {
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	sync, err := httpapi.ParseBool(r, "sync", false)
	if err != nil {
		return err
	}
	page, err := httpapi.ParsePage(r, customers.PageSize)
	if err != nil {
		return err
	}
	res, err := h.svc.List(r.Context(), cid, page, sync)
	if err != nil {
		return err
	}
	items := make([]ListItem, len(res.Items))
	for i, c := range res.Items {
		items[i] = customerListItem(c)
	}
	httpapi.RespondList(w, items, httpapi.Pagination(r, page, res.Total, res.Next))
	return nil
}

func (h handlers) get(w http.ResponseWriter, r *http.Request) error {
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	c, err := h.svc.Get(r.Context(), cid, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpapi.Respond(w, http.StatusOK, "Customer retrieved successfully", customerResponse(c))
	return nil
}

// readForm reads the multipart body of POST /customers: the fields of
// Fields and the two files, each given once. An unknown or repeated field
// is a 400 naming it, a file over MaxUploadBytes ErrFileTooLarge on its
// field, a body over 6 MB a 413.
func readForm(r *http.Request) (customers.Fields, customers.File, customers.File, error) {
	var f customers.Fields
	front, back := customers.File{Field: customers.FieldFrontFile}, customers.File{Field: customers.FieldBackFile}
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return f, front, back, customers.ErrNotMultipart
	}
	mr := multipart.NewReader(http.MaxBytesReader(nil, r.Body, maxFormBytes), params["boundary"])
	seen := map[string]bool{}
	for {
		part, err := mr.NextPart()
		// io.EOF itself is the closing delimiter; the io.EOF of a body
		// cut short comes wrapped, and is a 400 on body.
		if err == io.EOF {
			break
		}
		if err != nil {
			return f, front, back, formError(err)
		}
		name := part.FormName()
		if !printableName(name) {
			return f, front, back, field.Invalid("body", "has a form field without a readable name")
		}
		if seen[name] {
			return f, front, back, field.Invalid(name, "is given more than once")
		}
		seen[name] = true
		switch name {
		case customers.FieldFrontFile, customers.FieldBackFile:
			data, err := io.ReadAll(io.LimitReader(part, customers.MaxUploadBytes+1))
			if err != nil {
				return f, front, back, formError(err)
			}
			if len(data) > customers.MaxUploadBytes {
				return f, front, back, field.On(customers.ErrFileTooLarge, name)
			}
			if name == customers.FieldFrontFile {
				front.Data = data
			} else {
				back.Data = data
			}
		default:
			value, err := io.ReadAll(io.LimitReader(part, maxFormValue+1))
			if err != nil {
				return f, front, back, formError(err)
			}
			if !f.Set(name, string(value)) {
				return f, front, back, field.Invalid(name, "unknown field")
			}
			if len(value) > maxFormValue {
				return f, front, back, field.Invalid(name, "must be at most 255 characters")
			}
		}
	}
	for _, file := range []customers.File{front, back} {
		if !seen[file.Field] {
			return f, front, back, field.Invalid(file.Field, "is required: attach the file")
		}
	}
	return f, front, back, nil
}

// formError turns a failure to read a multipart body into its answer: a
// 413 for a body over the cap, else a 400.
func formError(err error) error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return err
	}
	return field.Invalid("body", "is not a readable multipart/form-data body")
}

// printableName accepts a form field name that an error message may repeat.
func printableName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if c > unicode.MaxASCII || !unicode.IsPrint(c) {
			return false
		}
	}
	return true
}

// Response is a customer as GET /customers/{id} and the enrolment routes
// answer it: the fields of spec §2.2 plus country_iso_code, kyc_status and
// kyc_reason.
type Response struct {
	ID                   string  `json:"id"`
	FirstName            string  `json:"first_name"`
	LastName             string  `json:"last_name"`
	Email                string  `json:"email"`
	Country              string  `json:"country"`
	Street               string  `json:"street"`
	City                 string  `json:"city"`
	State                string  `json:"state"`
	PostalCode           string  `json:"postal_code"`
	PhoneCountryCode     string  `json:"phone_country_code"`
	PhoneNumber          string  `json:"phone_number"`
	IdentificationNumber string  `json:"identification_number"`
	Type                 string  `json:"type"`
	Number               string  `json:"number"`
	Image                *string `json:"image"`
	Photo                *string `json:"photo"`
	DateOfBirth          string  `json:"date_of_birth"`
	IsActive             bool    `json:"is_active"`
	CreatedAt            string  `json:"created_at"`
	UpdatedAt            string  `json:"updated_at"`
	CountryISOCode       string  `json:"country_iso_code"`
	KYCStatus            string  `json:"kyc_status"`
	KYCReason            *string `json:"kyc_reason"`
}

// ListItem is a customer as GET /customers lists it (spec §2.2's subset).
type ListItem struct {
	ID               string `json:"id"`
	FirstName        string `json:"first_name"`
	LastName         string `json:"last_name"`
	Email            string `json:"email"`
	Country          string `json:"country"`
	PhoneCountryCode string `json:"phone_country_code"`
	PhoneNumber      string `json:"phone_number"`
	IsActive         bool   `json:"is_active"`
	CreatedAt        string `json:"created_at"`
	UpdatedAt        string `json:"updated_at"`
}

// customerResponse returns c as the routes show a customer.
func customerResponse(c customers.Customer) Response {
	return Response{
		ID: c.ID, FirstName: c.FirstName, LastName: c.LastName, Email: c.Email, Country: c.Country,
		Street: c.Street, City: c.City, State: c.State, PostalCode: c.PostalCode,
		PhoneCountryCode: c.PhoneCountryCode, PhoneNumber: c.PhoneNumber,
		IdentificationNumber: c.IdentificationNumber, Type: string(c.DocumentType), Number: c.IdentificationNumber,
		Image: optional(c.Front.Reference), Photo: optional(c.Back.Reference),
		DateOfBirth: timestamp.Format(c.DateOfBirth), IsActive: c.IsActive,
		CreatedAt: timestamp.Format(c.CreatedAt), UpdatedAt: timestamp.Format(c.UpdatedAt),
		CountryISOCode: c.CountryISOCode, KYCStatus: string(c.KYCStatus), KYCReason: optional(c.KYCReason),
	}
}

// customerListItem returns c as GET /customers lists it.
func customerListItem(c customers.Customer) ListItem {
	return ListItem{
		ID: c.ID, FirstName: c.FirstName, LastName: c.LastName, Email: c.Email, Country: c.Country,
		PhoneCountryCode: c.PhoneCountryCode, PhoneNumber: c.PhoneNumber, IsActive: c.IsActive,
		CreatedAt: timestamp.Format(c.CreatedAt), UpdatedAt: timestamp.Format(c.UpdatedAt),
	}
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
