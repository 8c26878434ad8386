package customers

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"payments/pkg/countries"
	"payments/pkg/field"
)

// testNow is the fixed "now" of the validation tests: 15 March 2026 in
// the afternoon, UTC.
var testNow = time.Date(2026, 3, 15, 13, 45, 0, 0, time.UTC)

// validFields returns the fields of a valid enrolment, with document URLs.
func validFields() Fields {
	return Fields{
		FirstName: "Amina", LastName: "Njoya", Email: "amina@example.com", Country: "Cameroon",
		Street: "12 Rue de la Joie", City: "Douala", State: "Littoral", PostalCode: "00237",
		CountryISOCode: "CM", CountryPhoneCode: "+237", PhoneNumber: "670000001",
		IdentificationNumber: "CM-0001", IDDocumentType: "NIN", DateOfBirth: "1990-04-12",
		FrontURL: "https://docs.example.com/front.png", BackURL: "https://docs.example.com/back.pdf",
	}
}

// invalid returns the field and problem of a 400 error, or "", "" when err
// is not one.
func invalid(err error) (name, problem string) {
	var fe *field.Error
	if errors.As(err, &fe) {
		return fe.Field, fe.Problem
	}
	return "", ""
}

// lengthProblem is the message of a free-text field outside its bounds.
func lengthProblem(min, max int) string {
	return fmt.Sprintf("must be %d to %d characters", min, max)
}

// Problems validate answers, as the tests expect them.
const (
	required    = "is required"
	controlChar = "must not contain control characters"
	badEmail    = "must be a valid email address"
	badISO      = "must be an ISO 3166-1 alpha-2 code in capitals, such as CM"
	badPhone    = "must be the local number in digits, without the country code"
	badDocType  = "must be one of NIN, PASSPORT, VOTERS_CARD, DRIVERS_LICENSE"
	badDate     = "must be a date as YYYY-MM-DD"
	dateRange   = "must be a date between 1900-01-01 and today"
	tooYoung    = "customer must be 18 or older"
)

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		edit func(*Fields)
		now  time.Time // testNow when zero
		// field and problem are the 400 expected; "" for a valid enrolment.
		field, problem string
		// check, for a valid enrolment, looks at the customer returned.
		check func(t *testing.T, c Customer)
	}{
		{name: "valid", edit: func(*Fields) {}, check: func(t *testing.T, c Customer) {
			want := Customer{
				FirstName: "Amina", LastName: "Njoya", Email: "amina@example.com", Country: "Cameroon",
				Street: "12 Rue de la Joie", City: "Douala", State: "Littoral", PostalCode: "00237",
				CountryISOCode: "CM", PhoneCountryCode: "+237", PhoneNumber: "670000001",
				IdentificationNumber: "CM-0001", DocumentType: NIN, DateOfBirth: time.Date(1990, 4, 12, 0, 0, 0, 0, time.UTC),
			}
			if c != want {
				t.Fatalf("customer = %+v\nwant %+v", c, want)
			}
		}},

		// Every field is trimmed, and blank is missing.
		{name: "every field trimmed", edit: func(f *Fields) {
			for _, l := range identityFields {
				*l.value(f) = " \t" + *l.value(f) + "\n\u00a0"
			}
		}, check: func(t *testing.T, c Customer) {
			want, _ := validate(validFields(), testNow)
			if c != want {
				t.Fatalf("customer = %+v\nwant %+v", c, want)
			}
		}},
		{name: "case of email and id kept", edit: func(f *Fields) { f.Email, f.IdentificationNumber = "Amina@Example.com", "cm-0001" },
			check: func(t *testing.T, c Customer) {
				if c.Email != "Amina@Example.com" || c.IdentificationNumber != "cm-0001" {
					t.Fatalf("email %q, id %q", c.Email, c.IdentificationNumber)
				}
			}},
		{name: "first_name missing", edit: func(f *Fields) { f.FirstName = "" }, field: "first_name", problem: required},
		{name: "last_name blank", edit: func(f *Fields) { f.LastName = " \t\n" }, field: "last_name", problem: required},
		{name: "email missing", edit: func(f *Fields) { f.Email = "" }, field: "email", problem: required},
		{name: "country missing", edit: func(f *Fields) { f.Country = "" }, field: "country", problem: required},
		{name: "street missing", edit: func(f *Fields) { f.Street = "" }, field: "street", problem: required},
		{name: "city missing", edit: func(f *Fields) { f.City = "" }, field: "city", problem: required},
		{name: "state missing", edit: func(f *Fields) { f.State = "" }, field: "state", problem: required},
		{name: "postal_code missing", edit: func(f *Fields) { f.PostalCode = "" }, field: "postal_code", problem: required},
		{name: "country_iso_code missing", edit: func(f *Fields) { f.CountryISOCode = "" }, field: "country_iso_code", problem: required},
		{name: "country_phone_code missing", edit: func(f *Fields) { f.CountryPhoneCode = "" }, field: "country_phone_code", problem: required},
		{name: "phone_number missing", edit: func(f *Fields) { f.PhoneNumber = "" }, field: "phone_number", problem: required},
		{name: "identification_number missing", edit: func(f *Fields) { f.IdentificationNumber = " " }, field: "identification_number", problem: required},
		{name: "id_document_type missing", edit: func(f *Fields) { f.IDDocumentType = "" }, field: "id_document_type", problem: required},
		{name: "date_of_birth missing", edit: func(f *Fields) { f.DateOfBirth = "" }, field: "date_of_birth", problem: required},

		// Control characters inside a value, and invalid UTF-8.
		{name: "tab inside first_name", edit: func(f *Fields) { f.FirstName = "Ami\tna" }, field: "first_name", problem: controlChar},
		{name: "NUL inside street", edit: func(f *Fields) { f.Street = "12 Rue\x00 de la Joie" }, field: "street", problem: controlChar},
		{name: "newline inside city", edit: func(f *Fields) { f.City = "Dou\nala" }, field: "city", problem: controlChar},
		{name: "C1 control inside state", edit: func(f *Fields) { f.State = "Litt\u0085oral" }, field: "state", problem: controlChar},
		{name: "DEL inside identification_number", edit: func(f *Fields) { f.IdentificationNumber = "CM\x7f0001" }, field: "identification_number", problem: controlChar},
		{name: "invalid UTF-8 in last_name", edit: func(f *Fields) { f.LastName = "Njo\xffya" }, field: "last_name", problem: controlChar},

		// Lengths are counted in characters, not bytes.
		{name: "3-rune non-ASCII first_name", edit: func(f *Fields) { f.FirstName = "李小龙" },
			check: func(t *testing.T, c Customer) {
				if c.FirstName != "李小龙" {
					t.Fatalf("first_name = %q", c.FirstName)
				}
			}},
		{name: "2-rune first_name of 6 bytes", edit: func(f *Fields) { f.FirstName = "李龙" }, field: "first_name", problem: lengthProblem(3, 255)},
		{name: "last_name of 2 characters", edit: func(f *Fields) { f.LastName = "Nj" }, field: "last_name", problem: lengthProblem(3, 255)},
		{name: "last_name of 255 two-byte characters", edit: func(f *Fields) { f.LastName = strings.Repeat("é", 255) },
			check: func(t *testing.T, c Customer) {
				if c.LastName != strings.Repeat("é", 255) {
					t.Fatalf("last_name = %q", c.LastName)
				}
			}},
		{name: "last_name of 256 characters", edit: func(f *Fields) { f.LastName = strings.Repeat("é", 256) }, field: "last_name", problem: lengthProblem(3, 255)},
		{name: "first_name of 256 characters", edit: func(f *Fields) { f.FirstName = strings.Repeat("a", 256) }, field: "first_name", problem: lengthProblem(3, 255)},
		{name: "country of 2 characters", edit: func(f *Fields) { f.Country = "CM" }, check: func(*testing.T, Customer) {}},
		{name: "country of 1 character", edit: func(f *Fields) { f.Country = "C" }, field: "country", problem: lengthProblem(2, 255)},
		{name: "street of 1 character", edit: func(f *Fields) { f.Street = "1" }, field: "street", problem: lengthProblem(2, 255)},
		{name: "street of 256 characters", edit: func(f *Fields) { f.Street = strings.Repeat("s", 256) }, field: "street", problem: lengthProblem(2, 255)},
		{name: "city of 1 character", edit: func(f *Fields) { f.City = "D" }, field: "city", problem: lengthProblem(2, 255)},
		{name: "state of 256 characters", edit: func(f *Fields) { f.State = strings.Repeat("ü", 256) }, field: "state", problem: lengthProblem(2, 255)},
		{name: "postal_code of 2 characters", edit: func(f *Fields) { f.PostalCode = "00" }, field: "postal_code", problem: lengthProblem(3, 255)},
		{name: "postal_code of 256 characters", edit: func(f *Fields) { f.PostalCode = strings.Repeat("0", 256) }, field: "postal_code", problem: lengthProblem(3, 255)},
		{name: "identification_number of 1 character", edit: func(f *Fields) { f.IdentificationNumber = "7" }, check: func(*testing.T, Customer) {}},
		{name: "identification_number of 256 characters", edit: func(f *Fields) { f.IdentificationNumber = strings.Repeat("9", 256) }, field: "identification_number", problem: lengthProblem(1, 255)},
		{name: "id_document_type of 256 characters", edit: func(f *Fields) { f.IDDocumentType = strings.Repeat("N", 256) }, field: "id_document_type", problem: lengthProblem(1, 255)},
		{name: "phone_number of 2 digits", edit: func(f *Fields) { f.PhoneNumber = "67" }, field: "phone_number", problem: lengthProblem(3, 255)},
		{name: "phone_number of 256 digits", edit: func(f *Fields) { f.PhoneNumber = strings.Repeat("6", 256) }, field: "phone_number", problem: lengthProblem(3, 255)},
		{name: "country_phone_code of 256 characters", edit: func(f *Fields) { f.CountryPhoneCode = "+" + strings.Repeat("2", 255) }, field: "country_phone_code", problem: lengthProblem(1, 255)},

		// Email: a bare address whose domain has a dot, 3 to 254 characters.
		{name: "email with subaddress and subdomains", edit: func(f *Fields) { f.Email = "Amina.Njoya+cards@mail.example.co.uk" }, check: func(*testing.T, Customer) {}},
		{name: "email with non-ASCII domain", edit: func(f *Fields) { f.Email = "amina@exämple.cm" }, check: func(*testing.T, Customer) {}},
		{name: "email of 254 characters", edit: func(f *Fields) { f.Email = strings.Repeat("a", 254-len("@example.com")) + "@example.com" },
			check: func(t *testing.T, c Customer) {
				if len(c.Email) != 254 {
					t.Fatalf("email of %d characters", len(c.Email))
				}
			}},
		{name: "email of 255 characters", edit: func(f *Fields) { f.Email = strings.Repeat("a", 255-len("@example.com")) + "@example.com" }, field: "email", problem: lengthProblem(3, 254)},
		{name: "email of 2 characters", edit: func(f *Fields) { f.Email = "a@" }, field: "email", problem: lengthProblem(3, 254)},
		{name: "email without @", edit: func(f *Fields) { f.Email = "amina.example.com" }, field: "email", problem: badEmail},
		{name: "email without domain", edit: func(f *Fields) { f.Email = "amina@" }, field: "email", problem: badEmail},
		{name: "email without local part", edit: func(f *Fields) { f.Email = "@example.com" }, field: "email", problem: badEmail},
		{name: "email with a dotless domain", edit: func(f *Fields) { f.Email = "amina@localhost" }, field: "email", problem: badEmail},
		{name: "email with a display name", edit: func(f *Fields) { f.Email = "Amina <amina@example.com>" }, field: "email", problem: badEmail},
		{name: "email in angle brackets", edit: func(f *Fields) { f.Email = "<amina@example.com>" }, field: "email", problem: badEmail},
		{name: "email with a comment", edit: func(f *Fields) { f.Email = "amina@example.com (work)" }, field: "email", problem: badEmail},
		{name: "email with a quoted local part", edit: func(f *Fields) { f.Email = `"amina"@example.com` }, field: "email", problem: badEmail},
		{name: "email with a space", edit: func(f *Fields) { f.Email = "amina njoya@example.com" }, field: "email", problem: badEmail},
		{name: "email with two @", edit: func(f *Fields) { f.Email = "amina@@example.com" }, field: "email", problem: badEmail},
		{name: "email domain starting with a dot", edit: func(f *Fields) { f.Email = "amina@.example.com" }, field: "email", problem: badEmail},
		{name: "email domain ending with a dot", edit: func(f *Fields) { f.Email = "amina@example.com." }, field: "email", problem: badEmail},
		{name: "email domain with two dots in a row", edit: func(f *Fields) { f.Email = "amina@example..com" }, field: "email", problem: badEmail},
		{name: "email of two addresses", edit: func(f *Fields) { f.Email = "amina@example.com, bob@example.com" }, field: "email", problem: badEmail},
		{name: "email at an IP address", edit: func(f *Fields) { f.Email = "amina@[127.0.0.1]" }, field: "email", problem: badEmail},
		{name: "email at a dotted IP", edit: func(f *Fields) { f.Email = "amina@127.0.0.1" }, field: "email", problem: badEmail},
		{name: "email domain label starting with a hyphen", edit: func(f *Fields) { f.Email = "amina@-example.com" }, field: "email", problem: badEmail},
		{name: "email domain label ending with a hyphen", edit: func(f *Fields) { f.Email = "amina@example-.com" }, field: "email", problem: badEmail},
		{name: "email with a hyphenated domain", edit: func(f *Fields) { f.Email = "amina@my-bank.cm" }, check: func(*testing.T, Customer) {}},
		{name: "name with a zero-width space", edit: func(f *Fields) { f.FirstName = "Ami\u200bna" }, field: "first_name", problem: controlChar},
		{name: "name with a direction override", edit: func(f *Fields) { f.LastName = "Njoya\u202e" }, field: "last_name", problem: controlChar},

		// country_iso_code: two capitals that name a country.
		{name: "country_iso_code in lower case", edit: func(f *Fields) { f.CountryISOCode = "cm" }, field: "country_iso_code", problem: badISO},
		{name: "country_iso_code of 3 letters", edit: func(f *Fields) { f.CountryISOCode = "CMR" }, field: "country_iso_code", problem: badISO},
		{name: "country_iso_code of 1 letter", edit: func(f *Fields) { f.CountryISOCode = "C" }, field: "country_iso_code", problem: badISO},
		{name: "country_iso_code unassigned", edit: func(f *Fields) { f.CountryISOCode = "ZZ" }, field: "country_iso_code", problem: badISO},
		{name: "country_iso_code of digits", edit: func(f *Fields) { f.CountryISOCode = "12" }, field: "country_iso_code", problem: badISO},
		{name: "country_iso_code of another country", edit: func(f *Fields) { f.CountryISOCode = "NG" },
			check: func(t *testing.T, c Customer) {
				if c.CountryISOCode != "NG" {
					t.Fatalf("country_iso_code = %q", c.CountryISOCode)
				}
			}},

		// country_phone_code: + and 1 to 4 digits.
		{name: "dial code of 1 digit", edit: func(f *Fields) { f.CountryPhoneCode = "+1" }, check: func(*testing.T, Customer) {}},
		{name: "dial code of 4 digits", edit: func(f *Fields) { f.CountryPhoneCode = "+1684" }, check: func(*testing.T, Customer) {}},
		{name: "dial code of 5 digits", edit: func(f *Fields) { f.CountryPhoneCode = "+12345" }, field: "country_phone_code", problem: countries.DialCodeRule},
		{name: "dial code without +", edit: func(f *Fields) { f.CountryPhoneCode = "237" }, field: "country_phone_code", problem: countries.DialCodeRule},
		{name: "dial code + alone", edit: func(f *Fields) { f.CountryPhoneCode = "+" }, field: "country_phone_code", problem: countries.DialCodeRule},
		{name: "dial code with a letter", edit: func(f *Fields) { f.CountryPhoneCode = "+23a" }, field: "country_phone_code", problem: countries.DialCodeRule},
		{name: "dial code with 00", edit: func(f *Fields) { f.CountryPhoneCode = "00237" }, field: "country_phone_code", problem: countries.DialCodeRule},

		// phone_number: ASCII digits only.
		{name: "phone number with spaces", edit: func(f *Fields) { f.PhoneNumber = "670 000 001" }, field: "phone_number", problem: badPhone},
		{name: "phone number with the country code", edit: func(f *Fields) { f.PhoneNumber = "+237670000001" }, field: "phone_number", problem: badPhone},
		{name: "phone number with a dash", edit: func(f *Fields) { f.PhoneNumber = "670-000-001" }, field: "phone_number", problem: badPhone},
		{name: "phone number of letters", edit: func(f *Fields) { f.PhoneNumber = "abc" }, field: "phone_number", problem: badPhone},
		{name: "phone number of full-width digits", edit: func(f *Fields) { f.PhoneNumber = "６７０" }, field: "phone_number", problem: badPhone},

		// id_document_type: any case, normalised to capitals.
		{name: "document type nin", edit: func(f *Fields) { f.IDDocumentType = "nin" }, check: docType(NIN)},
		{name: "document type Passport", edit: func(f *Fields) { f.IDDocumentType = "Passport" }, check: docType(Passport)},
		{name: "document type voters_card", edit: func(f *Fields) { f.IDDocumentType = "voters_card" }, check: docType(VotersCard)},
		{name: "document type Drivers_License", edit: func(f *Fields) { f.IDDocumentType = "Drivers_License" }, check: docType(DriversLicense)},
		{name: "document type DRIVERS_LICENSE", edit: func(f *Fields) { f.IDDocumentType = "DRIVERS_LICENSE" }, check: docType(DriversLicense)},
		{name: "document type unknown", edit: func(f *Fields) { f.IDDocumentType = "ID_CARD" }, field: "id_document_type", problem: badDocType},
		{name: "document type with a space", edit: func(f *Fields) { f.IDDocumentType = "drivers license" }, field: "id_document_type", problem: badDocType},

		// date_of_birth: a real date from 1900-01-01, 18 years before today.
		{name: "leap day", edit: func(f *Fields) { f.DateOfBirth = "2000-02-29" },
			check: func(t *testing.T, c Customer) {
				if want := time.Date(2000, 2, 29, 0, 0, 0, 0, time.UTC); !c.DateOfBirth.Equal(want) {
					t.Fatalf("date_of_birth = %v", c.DateOfBirth)
				}
			}},
		{name: "29 February of a common year", edit: func(f *Fields) { f.DateOfBirth = "2001-02-29" }, field: "date_of_birth", problem: badDate},
		{name: "month 13", edit: func(f *Fields) { f.DateOfBirth = "1990-13-01" }, field: "date_of_birth", problem: badDate},
		{name: "day 31 of April", edit: func(f *Fields) { f.DateOfBirth = "1990-04-31" }, field: "date_of_birth", problem: badDate},
		{name: "day first", edit: func(f *Fields) { f.DateOfBirth = "12-04-1990" }, field: "date_of_birth", problem: badDate},
		{name: "slashes", edit: func(f *Fields) { f.DateOfBirth = "1990/04/12" }, field: "date_of_birth", problem: badDate},
		{name: "no leading zeros", edit: func(f *Fields) { f.DateOfBirth = "1990-4-12" }, field: "date_of_birth", problem: badDate},
		{name: "a timestamp", edit: func(f *Fields) { f.DateOfBirth = "1990-04-12T00:00:00Z" }, field: "date_of_birth", problem: badDate},
		{name: "18th birthday today", edit: func(f *Fields) { f.DateOfBirth = "2008-03-15" }, check: func(*testing.T, Customer) {}},
		{name: "18th birthday tomorrow", edit: func(f *Fields) { f.DateOfBirth = "2008-03-16" }, field: "date_of_birth", problem: tooYoung},
		{name: "born today", edit: func(f *Fields) { f.DateOfBirth = "2026-03-15" }, field: "date_of_birth", problem: tooYoung},
		{name: "born tomorrow", edit: func(f *Fields) { f.DateOfBirth = "2026-03-16" }, field: "date_of_birth", problem: dateRange},
		{name: "born next century", edit: func(f *Fields) { f.DateOfBirth = "2126-01-01" }, field: "date_of_birth", problem: dateRange},
		{name: "1900-01-01", edit: func(f *Fields) { f.DateOfBirth = "1900-01-01" }, check: func(*testing.T, Customer) {}},
		{name: "1899-12-31", edit: func(f *Fields) { f.DateOfBirth = "1899-12-31" }, field: "date_of_birth", problem: dateRange},
		{name: "year 0000", edit: func(f *Fields) { f.DateOfBirth = "0000-01-01" }, field: "date_of_birth", problem: dateRange},
		// Today is now's date in UTC: late on the 15th west of Greenwich
		// is already the 16th.
		{name: "18th birthday today in UTC", edit: func(f *Fields) { f.DateOfBirth = "2008-03-16" },
			now: time.Date(2026, 3, 15, 23, 30, 0, 0, time.FixedZone("UTC-5", -5*3600)), check: func(*testing.T, Customer) {}},
		{name: "18th birthday tomorrow in UTC", edit: func(f *Fields) { f.DateOfBirth = "2008-03-15" },
			now: time.Date(2026, 3, 15, 0, 30, 0, 0, time.FixedZone("UTC+2", 2*3600)), field: "date_of_birth", problem: tooYoung},
		// Born on a leap day: 18 on 1 March of a common year.
		{name: "leap-day birth, 18 on 1 March", edit: func(f *Fields) { f.DateOfBirth = "2008-02-29" },
			now: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), check: func(*testing.T, Customer) {}},
		{name: "leap-day birth, not 18 on 28 February", edit: func(f *Fields) { f.DateOfBirth = "2008-02-29" },
			now: time.Date(2026, 2, 28, 23, 59, 59, 0, time.UTC), field: "date_of_birth", problem: tooYoung},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := validFields()
			tt.edit(&f)
			now := tt.now
			if now.IsZero() {
				now = testNow
			}
			c, err := validate(f, now)
			if tt.field != "" {
				field, problem := invalid(err)
				if field != tt.field || problem != tt.problem {
					t.Fatalf("validate = %+v, %v; want a 400 on %s: %s", c, err, tt.field, tt.problem)
				}
				if c != (Customer{}) {
					t.Errorf("a refused enrolment returned %+v", c)
				}
				return
			}
			if err != nil {
				t.Fatalf("validate: %v", err)
			}
			tt.check(t, c)
		})
	}
}

// docType returns a check that the customer's document type is want.
func docType(want DocumentType) func(*testing.T, Customer) {
	return func(t *testing.T, c Customer) {
		t.Helper()
		if c.DocumentType != want {
			t.Fatalf("document type = %q, want %q", c.DocumentType, want)
		}
	}
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	const notHTTPS = "document URL must be HTTPS"
	long := func(n int) string { // an https URL of n characters
		base := "https://docs.example.com/"
		return base + strings.Repeat("a", n-len(base))
	}
	tests := []struct {
		name, in       string
		want           string // the URL returned when accepted
		field, problem string // the 400 expected when refused
	}{
		{name: "https", in: "https://docs.example.com/front.png", want: "https://docs.example.com/front.png"},
		{name: "trimmed", in: " \thttps://docs.example.com/front.png?v=2\n", want: "https://docs.example.com/front.png?v=2"},
		{name: "with a port", in: "https://127.0.0.1:4443/id-front.png", want: "https://127.0.0.1:4443/id-front.png"},
		{name: "2048 characters", in: long(2048), want: long(2048)},
		{name: "2049 characters", in: long(2049), field: FieldFrontURL, problem: "must be at most 2048 characters"},
		{name: "empty", in: "", field: FieldFrontURL, problem: "is required"},
		{name: "blank", in: "  \t ", field: FieldFrontURL, problem: "is required"},
		{name: "http", in: "http://docs.example.com/front.png", field: FieldFrontURL, problem: notHTTPS},
		{name: "ftp", in: "ftp://docs.example.com/front.png", field: FieldFrontURL, problem: notHTTPS},
		{name: "file", in: "file:///etc/passwd", field: FieldFrontURL, problem: notHTTPS},
		{name: "no scheme", in: "docs.example.com/front.png", field: FieldFrontURL, problem: notHTTPS},
		{name: "scheme-relative", in: "//docs.example.com/front.png", field: FieldFrontURL, problem: notHTTPS},
		{name: "no host", in: "https:///front.png", field: FieldFrontURL, problem: notHTTPS},
		{name: "opaque", in: "https:docs.example.com/front.png", field: FieldFrontURL, problem: notHTTPS},
		{name: "user information", in: "https://user:secret@docs.example.com/front.png", field: FieldFrontURL, problem: notHTTPS},
		{name: "unparseable", in: "https://docs.example.com/%zz", field: FieldFrontURL, problem: notHTTPS},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := checkURL(FieldFrontURL, tt.in)
			if tt.field != "" {
				field, problem := invalid(err)
				if field != tt.field || problem != tt.problem || got != "" {
					t.Fatalf("checkURL = %q, %v; want a 400 on %s: %s", got, err, tt.field, tt.problem)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("checkURL = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	if _, err := checkURL(FieldBackURL, "http://docs.example.com/back.pdf"); !isInvalid(err, FieldBackURL) {
		t.Fatalf("checkURL names the wrong field: %v", err)
	}
}

// isInvalid reports whether err is a 400 on field.
func isInvalid(err error, field string) bool {
	f, _ := invalid(err)
	return f == field
}

func TestUniquenessKeys(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		key      func(string) string
		in, want string
	}{
		{"email lower-cased", EmailKey, "Amina@Example.COM", "amina@example.com"},
		{"email trimmed", EmailKey, "  amina@example.com\t", "amina@example.com"},
		{"email non-ASCII lower-cased", EmailKey, "ÉLODIE@EXÄMPLE.CM", "élodie@exämple.cm"},
		{"email already a key", EmailKey, "amina@example.com", "amina@example.com"},
		{"id number upper-cased", IDNumberKey, "ab-123", "AB-123"},
		{"id number trimmed", IDNumberKey, " AB123 \n", "AB123"},
		{"id number of digits", IDNumberKey, "000123", "000123"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.key(tt.in); got != tt.want {
				t.Fatalf("key(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestDocumentKeys(t *testing.T) {
	t.Parallel()
	const company, customer = "0b6f1c1e-7a4e-4d1a-9d6e-0c2f4f1e8a11", "019a5f7e-1c2b-7d3e-8f4a-5b6c7d8e9f00"
	front := documentKey(company, customer, "front")
	if want := "companies/" + company + "/customers/" + customer + "/id_document_front"; front != want {
		t.Fatalf("documentKey = %q, want %q", front, want)
	}
	if back := documentKey(company, customer, "back"); back != "companies/"+company+"/customers/"+customer+"/id_document_back" {
		t.Fatalf("documentKey back = %q", back)
	}
	if got := uploadReference(customer, "front"); got != "customers/"+customer+"/id_document_front" {
		t.Fatalf("uploadReference = %q", got)
	}
}
