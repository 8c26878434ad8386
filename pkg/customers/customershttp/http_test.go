package customershttp

import (
	"bytes"
	"errors"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strings"
	"testing"

	"payments/infra/local/samples"
	"payments/pkg/customers"
	"payments/pkg/field"
)

// part is one part of a hand-built multipart body: a form field, or a file
// when filename is set. header, when set, replaces the part's header.
type part struct {
	name, filename string
	data           []byte
	header         textproto.MIMEHeader
}

// textPart returns a text part.
func textPart(name, value string) part { return part{name: name, data: []byte(value)} }

// file returns a file part.
func file(name string, data []byte) part {
	return part{name: name, filename: name + ".bin", data: data}
}

// validFields returns the fields of a valid enrolment.
func validFields() customers.Fields {
	return customers.Fields{
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

// identityParts returns the text parts of a valid form: the identity
// fields of validFields, without the document URLs.
func identityParts() []part {
	f := validFields()
	var ps []part
	for _, l := range f.Identity() {
		ps = append(ps, textPart(l.Name, l.Value))
	}
	return ps
}

// multipartBody encodes parts and returns the body and its Content-Type.
func multipartBody(t *testing.T, parts ...part) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, p := range parts {
		h := p.header
		if h == nil {
			h = textproto.MIMEHeader{}
			disposition := fmt.Sprintf(`form-data; name=%q`, p.name)
			if p.filename != "" {
				disposition += fmt.Sprintf(`; filename=%q`, p.filename)
				h.Set("Content-Type", "application/octet-stream")
			}
			h.Set("Content-Disposition", disposition)
		}
		w, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(p.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), mw.FormDataContentType()
}

// formRequest returns a POST /customers with body and contentType.
func formRequest(body []byte, contentType string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/customers", bytes.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	return r
}

func TestReadFormValid(t *testing.T) {
	front, back := samples.PNG(), samples.PDF()
	body, ct := multipartBody(t, append(identityParts(), file(customers.FieldFrontFile, front), file(customers.FieldBackFile, back))...)
	f, gotFront, gotBack, err := readForm(formRequest(body, ct))
	if err != nil {
		t.Fatalf("readForm: %v", err)
	}
	want := validFields()
	want.FrontURL, want.BackURL = "", ""
	if f != want {
		t.Errorf("fields = %+v\nwant %+v", f, want)
	}
	if gotFront.Field != customers.FieldFrontFile || !bytes.Equal(gotFront.Data, front) {
		t.Errorf("front = %s, %d bytes; want %s, the PNG's %d", gotFront.Field, len(gotFront.Data), customers.FieldFrontFile, len(front))
	}
	if gotBack.Field != customers.FieldBackFile || !bytes.Equal(gotBack.Data, back) {
		t.Errorf("back = %s, %d bytes; want %s, the PDF's %d", gotBack.Field, len(gotBack.Data), customers.FieldBackFile, len(back))
	}
}

// withParts returns a request builder of a form of the identity fields
// with edit applied to them, followed by extra parts.
func withParts(edit func(ps []part) []part, extra ...part) func(*testing.T) *http.Request {
	return func(t *testing.T) *http.Request {
		ps := identityParts()
		if edit != nil {
			ps = edit(ps)
		}
		return formRequest(multipartBody(t, append(ps, extra...)...))
	}
}

// replace returns an edit that sets the value of the identity part name.
func replace(name, value string) func([]part) []part {
	return func(ps []part) []part {
		for i := range ps {
			if ps[i].name == name {
				ps[i].data = []byte(value)
			}
		}
		return ps
	}
}

// prepend returns an edit that puts p before the identity parts.
func prepend(p part) func([]part) []part {
	return func(ps []part) []part { return append([]part{p}, ps...) }
}

// rawRequest returns a request builder of body as is, with contentType.
func rawRequest(contentType, body string) func(*testing.T) *http.Request {
	return func(*testing.T) *http.Request { return formRequest([]byte(body), contentType) }
}

func TestReadForm(t *testing.T) {
	png, pdf := samples.PNG(), samples.PDF()
	maxFile := bytes.Repeat([]byte{0xab}, customers.MaxUploadBytes)
	front, back := file(customers.FieldFrontFile, png), file(customers.FieldBackFile, pdf)
	longest := strings.Repeat("é", maxFormValue/2) // maxFormValue bytes
	tests := []struct {
		name    string
		request func(*testing.T) *http.Request
		// field and problem are the 400 expected.
		field, problem string
		// err is the error expected instead, on errField when set.
		err      error
		errField string
		// check looks at what an accepted form gave.
		check func(t *testing.T, f customers.Fields, front, back customers.File)
	}{
		{name: "files before the fields", request: func(t *testing.T) *http.Request {
			return formRequest(multipartBody(t, append([]part{back, front}, identityParts()...)...))
		}, check: func(t *testing.T, f customers.Fields, gotFront, gotBack customers.File) {
			if f.Email != "amina@example.com" || !bytes.Equal(gotFront.Data, png) || !bytes.Equal(gotBack.Data, pdf) {
				t.Fatalf("fields %+v, front %d bytes, back %d bytes", f, len(gotFront.Data), len(gotBack.Data))
			}
		}},
		{name: "values kept as sent", request: withParts(replace("city", "  Douala "), front, back),
			check: func(t *testing.T, f customers.Fields, _, _ customers.File) {
				if f.City != "  Douala " {
					t.Fatalf("city = %q", f.City)
				}
			}},
		{name: "text value of maxFormValue bytes", request: withParts(replace("first_name", longest), front, back),
			check: func(t *testing.T, f customers.Fields, _, _ customers.File) {
				if f.FirstName != longest {
					t.Fatalf("first_name of %d bytes", len(f.FirstName))
				}
			}},
		{name: "text value over maxFormValue bytes", request: withParts(replace("first_name", longest+"a"), front, back),
			field: "first_name", problem: "must be at most 255 characters"},
		{name: "file of exactly MaxUploadBytes", request: withParts(nil, file(customers.FieldFrontFile, maxFile), back),
			check: func(t *testing.T, _ customers.Fields, gotFront, gotBack customers.File) {
				if !bytes.Equal(gotFront.Data, maxFile) || !bytes.Equal(gotBack.Data, pdf) {
					t.Fatalf("front %d bytes, back %d bytes", len(gotFront.Data), len(gotBack.Data))
				}
			}},
		{name: "empty file", request: withParts(nil, file(customers.FieldFrontFile, nil), back),
			check: func(t *testing.T, _ customers.Fields, gotFront, _ customers.File) {
				if len(gotFront.Data) != 0 || gotFront.Field != customers.FieldFrontFile {
					t.Fatalf("front = %+v", gotFront)
				}
			}},
		{name: "front file one byte over", request: withParts(nil, file(customers.FieldFrontFile, append(maxFile, 0)), back),
			err: customers.ErrFileTooLarge, errField: customers.FieldFrontFile},
		{name: "back file one byte over", request: withParts(nil, front, file(customers.FieldBackFile, append(maxFile, 0))),
			err: customers.ErrFileTooLarge, errField: customers.FieldBackFile},
		{name: "repeated field", request: withParts(prepend(textPart("first_name", "Bob")), front, back),
			field: "first_name", problem: "is given more than once"},
		{name: "repeated file", request: withParts(nil, front, back, front),
			field: customers.FieldFrontFile, problem: "is given more than once"},
		{name: "unknown field", request: withParts(prepend(textPart("nickname", "Ami")), front, back),
			field: "nickname", problem: "unknown field"},
		{name: "document URL in a form", request: withParts(nil, front, back, textPart(customers.FieldBackURL, "https://docs.example.com/b.pdf")),
			field: customers.FieldBackURL, problem: "unknown field"},
		{name: "missing back file", request: withParts(nil, front),
			field: customers.FieldBackFile, problem: "is required: attach the file"},
		{name: "missing front file", request: withParts(nil, back),
			field: customers.FieldFrontFile, problem: "is required: attach the file"},
		{name: "no parts", request: rawRequest("multipart/form-data; boundary=b", "--b--\r\n"),
			field: customers.FieldFrontFile, problem: "is required: attach the file"},
		{name: "JSON", request: rawRequest("application/json", `{"first_name":"Amina"}`), err: customers.ErrNotMultipart},
		{name: "urlencoded", request: rawRequest("application/x-www-form-urlencoded", "first_name=Amina"), err: customers.ErrNotMultipart},
		{name: "no Content-Type", request: rawRequest("", "--b--\r\n"), err: customers.ErrNotMultipart},
		{name: "no boundary", request: rawRequest("multipart/form-data", "--b--\r\n"), err: customers.ErrNotMultipart},
		{name: "empty boundary", request: rawRequest(`multipart/form-data; boundary=""`, "--b--\r\n"), err: customers.ErrNotMultipart},
		{name: "malformed Content-Type", request: rawRequest("multipart/form-data; boundary", "--b--\r\n"), err: customers.ErrNotMultipart},
		{name: "multipart/mixed", request: rawRequest("multipart/mixed; boundary=b", "--b--\r\n"), err: customers.ErrNotMultipart},
		{name: "non-ASCII part name", request: withParts(prepend(textPart("café", "x")), front, back),
			field: "body", problem: "has a form field without a readable name"},
		{name: "part name of 65 characters", request: withParts(prepend(textPart(strings.Repeat("n", 65), "x")), front, back),
			field: "body", problem: "has a form field without a readable name"},
		{name: "empty part name", request: withParts(prepend(textPart("", "x")), front, back),
			field: "body", problem: "has a form field without a readable name"},
		{name: "part that is not form-data", request: withParts(prepend(part{data: []byte("x"), header: textproto.MIMEHeader{
			"Content-Disposition": {`attachment; name="first_name"`}}}), front, back),
			field: "body", problem: "has a form field without a readable name"},
		{name: "part without a disposition", request: withParts(prepend(part{data: []byte("x"), header: textproto.MIMEHeader{
			"Content-Type": {"text/plain"}}}), front, back),
			field: "body", problem: "has a form field without a readable name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, gotFront, gotBack, err := readForm(tt.request(t))
			switch {
			case tt.err != nil:
				if !errors.Is(err, tt.err) {
					t.Fatalf("readForm: %v, want %v", err, tt.err)
				}
				var fault *field.Fault
				if tt.errField != "" && (!errors.As(err, &fault) || fault.Field != tt.errField) {
					t.Fatalf("readForm: %v, want it on %s", err, tt.errField)
				}
			case tt.field != "":
				if field, problem := invalid(err); field != tt.field || problem != tt.problem {
					t.Fatalf("readForm: %v, want a 400 on %s: %s", err, tt.field, tt.problem)
				}
			default:
				if err != nil {
					t.Fatalf("readForm: %v", err)
				}
				tt.check(t, f, gotFront, gotBack)
			}
		})
	}
}

// TestReadFormRefusesBrokenBodies: a body over maxFormBytes is the
// *http.MaxBytesError that the customers function answers 413, and a body cut short is a
// 400, on body wherever the multipart reader can tell.
func TestReadFormRefusesBrokenBodies(t *testing.T) {
	body, ct := multipartBody(t, append(identityParts(), file(customers.FieldFrontFile, samples.PNG()), file(customers.FieldBackFile, samples.PDF()))...)
	boundary := ct[strings.Index(ct, "boundary=")+len("boundary="):]
	closing := bytes.LastIndex(body, []byte("\r\n--"+boundary+"--"))
	at := func(s string) int { // the offset of the end of the first s in body
		i := bytes.Index(body, []byte(s))
		if i < 0 {
			t.Fatalf("%q is not in the body", s)
		}
		return i + len(s)
	}
	tests := []struct {
		name  string
		body  []byte
		field string // the 400 expected
	}{
		{"empty", nil, "body"},
		{"cut inside a text value", body[:at("Amin")], "body"},
		{"cut inside the front file", body[:at(`filename="id_document_front.bin"`)+100], "body"},
		{"cut inside the back file", body[:closing-10], "body"},
		{"cut before the closing delimiter", body[:closing], "body"},
		{"closing delimiter without its dashes", body[:closing+len("\r\n--"+boundary)], "body"},
		{"closing delimiter cut in its dashes", body[:closing+len("\r\n--"+boundary+"-")], "body"},
		// Cut at the start of a part, the multipart reader answers io.EOF,
		// as at the closing delimiter: the form ends there, and the parts
		// that did not come are missing.
		{"cut inside the first part's header", body[:at("first_na")], customers.FieldFrontFile},
		{"cut after the first delimiter", body[:at("--"+boundary+"\r\n")], customers.FieldFrontFile},
		{"cut inside the back file's header", body[:at(`name="id_document_ba`)], customers.FieldBackFile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, _, err := readForm(formRequest(tt.body, ct))
			if field, _ := invalid(err); field != tt.field {
				t.Fatalf("readForm of %d bytes of %d: %v, want a 400 on %s", len(tt.body), len(body), err, tt.field)
			}
		})
	}
	if _, _, _, err := readForm(formRequest(body, ct)); err != nil {
		t.Fatalf("readForm of the whole body: %v", err)
	}
	noFinalCRLF := body[:len(body)-2]
	if _, _, _, err := readForm(formRequest(noFinalCRLF, ct)); err != nil {
		t.Fatalf("readForm of the whole body without its final CRLF: %v", err)
	}

	t.Run("over maxFormBytes", func(t *testing.T) {
		// The cap counts every byte read, a preamble's too: the parts
		// themselves stop at their own limits well before 6 MB.
		preamble := bytes.Repeat([]byte("padding\r\n"), maxFormBytes/len("padding\r\n")+1)
		_, _, _, err := readForm(formRequest(append(preamble, body...), ct))
		var tooLarge *http.MaxBytesError
		if !errors.As(err, &tooLarge) || tooLarge.Limit != maxFormBytes {
			t.Fatalf("readForm: %v, want an *http.MaxBytesError of %d", err, maxFormBytes)
		}
	})
	t.Run("just under maxFormBytes", func(t *testing.T) {
		pad := maxFormBytes - len(body) - 2
		preamble := append(bytes.Repeat([]byte("p"), pad%100), "\r\n"...)
		preamble = append(preamble, bytes.Repeat([]byte(strings.Repeat("p", 98)+"\r\n"), pad/100)...)
		if n := len(preamble) + len(body); n > maxFormBytes {
			t.Fatalf("a body of %d bytes", n)
		}
		if _, _, _, err := readForm(formRequest(append(preamble, body...), ct)); err != nil {
			t.Fatalf("readForm: %v", err)
		}
	})
}
