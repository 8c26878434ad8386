package customers

import (
	"fmt"
	"net/mail"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"payments/pkg/countries"
	"payments/pkg/field"
	"payments/pkg/outbound"
)

// Fields are the fields of an enrolment: the body of POST
// /customers/enroll. The form of POST /customers has the same identity
// fields, with files instead of the two URLs.
type Fields struct {
	FirstName            string `json:"first_name"`
	LastName             string `json:"last_name"`
	Email                string `json:"email"`
	Country              string `json:"country"`
	Street               string `json:"street"`
	City                 string `json:"city"`
	State                string `json:"state"`
	PostalCode           string `json:"postal_code"`
	CountryISOCode       string `json:"country_iso_code"`
	CountryPhoneCode     string `json:"country_phone_code"`
	PhoneNumber          string `json:"phone_number"`
	IdentificationNumber string `json:"identification_number"`
	IDDocumentType       string `json:"id_document_type"`
	DateOfBirth          string `json:"date_of_birth"`
	FrontURL             string `json:"id_document_front_url"`
	BackURL              string `json:"id_document_back_url"`
}

// Names of the document fields.
const (
	FieldFrontURL  = "id_document_front_url"
	FieldBackURL   = "id_document_back_url"
	FieldFrontFile = "id_document_front"
	FieldBackFile  = "id_document_back"
)

// MinimumAge is the age a customer must have reached (spec §8).
const MinimumAge = 18

// maxURLLength bounds a document URL.
const maxURLLength = 2048

// earliestBirth is the earliest date_of_birth accepted.
var earliestBirth = time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)

// identityFields are the identity fields, in the order they are checked,
// with their bounds in characters (spec §4.2 and §8): the fields of the
// multipart form too (Fields.Set).
var identityFields = []struct {
	name     string
	value    func(*Fields) *string
	min, max int
}{
	{"first_name", func(f *Fields) *string { return &f.FirstName }, 3, 255},
	{"last_name", func(f *Fields) *string { return &f.LastName }, 3, 255},
	{"email", func(f *Fields) *string { return &f.Email }, 3, 254},
	{"country", func(f *Fields) *string { return &f.Country }, 2, 255},
	{"street", func(f *Fields) *string { return &f.Street }, 2, 255},
	{"city", func(f *Fields) *string { return &f.City }, 2, 255},
	{"state", func(f *Fields) *string { return &f.State }, 2, 255},
	{"postal_code", func(f *Fields) *string { return &f.PostalCode }, 3, 255},
	{"country_iso_code", func(f *Fields) *string { return &f.CountryISOCode }, 2, 2},
	{"country_phone_code", func(f *Fields) *string { return &f.CountryPhoneCode }, 1, 255},
	{"phone_number", func(f *Fields) *string { return &f.PhoneNumber }, 3, 255},
	{"identification_number", func(f *Fields) *string { return &f.IdentificationNumber }, 1, 255},
	{"id_document_type", func(f *Fields) *string { return &f.IDDocumentType }, 1, 255},
	{"date_of_birth", func(f *Fields) *string { return &f.DateOfBirth }, 10, 10},
}

// IdentityField is one identity field of Fields: its name, which is its
// name in the multipart form too, and its value.
type IdentityField struct{ Name, Value string }

// Identity returns f's identity fields, in the order they are checked.
func (f Fields) Identity() []IdentityField {
	out := make([]IdentityField, len(identityFields))
	for i, l := range identityFields {
		out[i] = IdentityField{Name: l.name, Value: *l.value(&f)}
	}
	return out
}

// Set stores value in the identity field name; false when no identity
// field has that name.
func (f *Fields) Set(name, value string) bool {
	for _, l := range identityFields {
		if l.name == name {
			*l.value(f) = value
			return true
		}
	}
	return false
}

// validate checks f as of today (now's date in UTC) and returns the
// customer it describes, trimmed and normalized; the first failure is a 400
// naming its field.
func validate(f Fields, now time.Time) (Customer, error) {
	for _, l := range identityFields {
		v := l.value(&f)
		*v = strings.TrimSpace(*v)
		n := utf8.RuneCountInString(*v)
		switch {
		case n == 0:
			return Customer{}, field.Invalid(l.name, "is required")
		case strings.IndexFunc(*v, invisible) >= 0 || !utf8.ValidString(*v):
			return Customer{}, field.Invalid(l.name, "must not contain control characters")
		case l.min == l.max && n != l.min:
			// A fixed length is a format, whose own check below explains it.
		case n < l.min || n > l.max:
			return Customer{}, field.Invalid(l.name, fmt.Sprintf("must be %d to %d characters", l.min, l.max))
		}
	}
	if !validEmail(f.Email) {
		return Customer{}, field.Invalid("email", "must be a valid email address")
	}
	if !countries.IsAlpha2(f.CountryISOCode) {
		return Customer{}, field.Invalid("country_iso_code", countries.Alpha2Rule)
	}
	if !countries.IsDialCode(f.CountryPhoneCode) {
		return Customer{}, field.Invalid("country_phone_code", countries.DialCodeRule)
	}
	if strings.Trim(f.PhoneNumber, "0123456789") != "" {
		return Customer{}, field.Invalid("phone_number", "must be the local number in digits, without the country code")
	}
	docType := DocumentType(strings.ToUpper(f.IDDocumentType))
	switch docType {
	case NIN, Passport, VotersCard, DriversLicense:
	default:
		return Customer{}, field.Invalid("id_document_type", fmt.Sprintf("must be one of %s, %s, %s, %s", NIN, Passport, VotersCard, DriversLicense))
	}
	dob, err := time.Parse(time.DateOnly, f.DateOfBirth)
	if err != nil {
		return Customer{}, field.Invalid("date_of_birth", "must be a date as YYYY-MM-DD")
	}
	today := now.UTC().Truncate(24 * time.Hour)
	switch {
	case dob.Before(earliestBirth) || dob.After(today):
		return Customer{}, field.Invalid("date_of_birth", "must be a date between 1900-01-01 and today")
	case dob.AddDate(MinimumAge, 0, 0).After(today):
		return Customer{}, field.Invalid("date_of_birth", fmt.Sprintf("customer must be %d or older", MinimumAge))
	}
	return Customer{
		FirstName:            f.FirstName,
		LastName:             f.LastName,
		Email:                f.Email,
		Country:              f.Country,
		Street:               f.Street,
		City:                 f.City,
		State:                f.State,
		PostalCode:           f.PostalCode,
		CountryISOCode:       f.CountryISOCode,
		PhoneCountryCode:     f.CountryPhoneCode,
		PhoneNumber:          f.PhoneNumber,
		IdentificationNumber: f.IdentificationNumber,
		DocumentType:         docType,
		DateOfBirth:          dob,
	}, nil
}

// invisible reports whether r is a control character or an invisible
// formatting one (zero-width spaces, direction overrides), which no name or
// address needs.
func invisible(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }

// validEmail accepts a bare address (no display name, no angle brackets,
// no quoted local part) whose domain is a host name of at least two labels:
// letters, digits and inner hyphens, the last label letters only (so not
// an IP address).
func validEmail(s string) bool {
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s {
		return false
	}
	labels := strings.Split(s[strings.LastIndexByte(s, '@')+1:], ".")
	if len(labels) < 2 {
		return false
	}
	for i, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for _, r := range l {
			last := i == len(labels)-1
			if !unicode.IsLetter(r) && (last || !unicode.IsDigit(r) && r != '-') {
				return false
			}
		}
	}
	return true
}

// checkURL trims and checks a document URL field.
func checkURL(name, raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	switch {
	case raw == "":
		return "", field.Invalid(name, "is required")
	case len(raw) > maxURLLength:
		return "", field.Invalid(name, fmt.Sprintf("must be at most %d characters", maxURLLength))
	case outbound.CheckURL(raw) != nil:
		return "", field.Invalid(name, "document URL must be HTTPS")
	}
	return raw, nil
}

// EmailKey returns the form of an email that uniqueness compares: in lower
// case, so Amina@Example.com and amina@example.com are one customer.
func EmailKey(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// IDNumberKey returns the form of an identification number that uniqueness
// compares: in upper case, so ab123 and AB123 are one customer.
func IDNumberKey(n string) string { return strings.ToUpper(strings.TrimSpace(n)) }
