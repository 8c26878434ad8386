package customers_test

import (
	"bytes"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"payments/infra/local/samples"
	"payments/pkg/app/apptest"
	"payments/pkg/customers"
)

// TestEnrollFromURLs enrols from the document server: a PNG and a PDF are
// stored byte for byte under the company's prefix and the customer is
// VERIFIED; every URL that cannot give a document is a 422 on its field
// that stores nothing, and the metadata address is never dialled.
func TestEnrollFromURLs(t *testing.T) {
	t.Parallel()
	e := apptest.NewCustomersTestEnv(t)
	companyID, token := e.ApprovedCompany()

	r := e.Enroll(token, e.Identity("Amina@Example.com", "CM-0001"))
	if r.Status != http.StatusCreated {
		t.Fatalf("enrol: %d %s", r.Status, r.Raw)
	}
	d := r.Data()
	for k, want := range map[string]string{
		"first_name": "Amina", "email": "Amina@Example.com", "type": "NIN", "number": "CM-0001",
		"identification_number": "CM-0001", "image": e.Docs.URL + "/front.png", "photo": e.Docs.URL + "/back.pdf",
		"date_of_birth": "1990-04-12T00:00:00.000Z", "is_active": "true", "country_iso_code": "CM",
		"phone_country_code": "+237", "kyc_status": "VERIFIED", "kyc_reason": "<nil>",
	} {
		if got := r.Str("data", k); got != want {
			t.Errorf("%s = %s, want %s", k, got, want)
		}
	}
	c := e.Stored(companyID, d["id"].(string))
	if c.CardholderID == "" {
		t.Error("a verified customer has no cardholder id")
	}
	for _, doc := range []struct {
		key  string
		want []byte
	}{{c.Front.Key, samples.PNG()}, {c.Back.Key, samples.PDF()}} {
		if !strings.HasPrefix(doc.key, "companies/"+companyID+"/customers/"+c.ID+"/") {
			t.Errorf("document key %s is not under the company's prefix", doc.key)
		}
		if got := e.Object(doc.key); !bytes.Equal(got, doc.want) {
			t.Errorf("%s holds %d bytes, not the %d served", doc.key, len(got), len(doc.want))
		}
	}
	if got := len(e.Objects(companyID)); got != 2 {
		t.Fatalf("%d objects after one enrolment, want 2", got)
	}

	tests := []struct {
		name, field, url string
		status           int
		code             string
	}{
		{"html", customers.FieldFrontURL, e.Docs.URL + "/page.html", 422, "DOCUMENT_UNREADABLE"},
		{"404", customers.FieldBackURL, e.Docs.URL + "/missing.pdf", 422, "DOCUMENT_NOT_FETCHED"},
		{"slow", customers.FieldFrontURL, e.Docs.URL + "/slow.png", 422, "DOCUMENT_NOT_FETCHED"},
		{"too large", customers.FieldBackURL, e.Docs.URL + "/huge.png", 422, "DOCUMENT_NOT_FETCHED"},
		{"metadata address", customers.FieldFrontURL, "https://169.254.169.254/latest/meta-data/front.png", 422, "DOCUMENT_NOT_FETCHED"},
		{"private address", customers.FieldBackURL, "https://10.1.2.3/back.pdf", 422, "DOCUMENT_NOT_FETCHED"},
		{"unknown host", customers.FieldFrontURL, "https://documents.invalid/front.png", 422, "DOCUMENT_NOT_FETCHED"},
		{"plain http", customers.FieldFrontURL, strings.Replace(e.Docs.URL, "https", "http", 1) + "/front.png", 400, "INVALID_FIELD"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := e.Identity(fmt.Sprintf("other%d@example.com", i), fmt.Sprintf("CM-1%03d", i+1))
			in[tt.field] = tt.url
			r := e.Enroll(token, in)
			if r.Status != tt.status || r.Str("code") != tt.code || r.Str("field") != tt.field {
				t.Fatalf("%d %s, want %d %s on %s", r.Status, r.Raw, tt.status, tt.code, tt.field)
			}
			message := map[string]string{
				"DOCUMENT_UNREADABLE": "KYC document unreadable", "DOCUMENT_NOT_FETCHED": "could not fetch a document URL",
				"INVALID_FIELD": "document URL must be HTTPS",
			}[tt.code]
			if r.Str("message") != tt.field+": "+message {
				t.Errorf("message %q, want %q", r.Str("message"), tt.field+": "+message)
			}
			if got := len(e.Objects(companyID)); got != 2 {
				t.Errorf("%d objects after a refused enrolment, want the first customer's 2", got)
			}
		})
	}
	for _, addr := range []string{"169.254.169.254", "10.1.2.3"} {
		if n := e.Dials(addr); n != 0 {
			t.Errorf("%s was dialled %d times", addr, n)
		}
	}
	if r := e.Call(e.Customers, token, "GET", "/customers", ""); r.Str("pagination", "total") != "1" {
		t.Errorf("after the refused enrolments: %s", r.Raw)
	}
	e.CheckCreatedEvent(token, c.ID)
}

// TestEnrollValidation sends one bad field at a time: each is a 400 naming
// it; an unapproved company is a 403 before any document is fetched.
func TestEnrollValidation(t *testing.T) {
	t.Parallel()
	e := apptest.NewCustomersTestEnv(t)
	_, token := e.ApprovedCompany()
	today := time.Date(2026, time.March, 1, 0, 0, 0, 0, time.UTC)
	e.SetClock(today.Add(15 * time.Hour))
	tests := []struct {
		field, value, message string
	}{
		{"first_name", "Al", "first_name: must be 3 to 255 characters"},
		{"last_name", strings.Repeat("n", 256), "last_name: must be 3 to 255 characters"},
		{"email", "amina.example.com", "email: must be a valid email address"},
		{"email", "Amina <amina@example.com>", "email: must be a valid email address"},
		{"country", "C", "country: must be 2 to 255 characters"},
		{"street", "", "street: is required"},
		{"city", "D\x00la", "city: must not contain control characters"},
		{"postal_code", "12", "postal_code: must be 3 to 255 characters"},
		{"country_iso_code", "XX", "country_iso_code: must be an ISO 3166-1 alpha-2 code in capitals, such as CM"},
		{"country_iso_code", "CMR", "country_iso_code: must be an ISO 3166-1 alpha-2 code in capitals, such as CM"},
		{"country_phone_code", "237", "country_phone_code: must be + followed by 1 to 4 digits"},
		{"phone_number", "+237670000001", "phone_number: must be the local number in digits, without the country code"},
		{"identification_number", "   ", "identification_number: is required"},
		{"id_document_type", "ID_CARD", "id_document_type: must be one of NIN, PASSPORT, VOTERS_CARD, DRIVERS_LICENSE"},
		{"date_of_birth", "1990-02-30", "date_of_birth: must be a date as YYYY-MM-DD"},
		{"date_of_birth", "12/04/1990", "date_of_birth: must be a date as YYYY-MM-DD"},
		{"date_of_birth", today.AddDate(-18, 0, 1).Format(time.DateOnly), "date_of_birth: customer must be 18 or older"},
		{"date_of_birth", today.AddDate(1, 0, 0).Format(time.DateOnly), "date_of_birth: must be a date between 1900-01-01 and today"},
		{"id_document_back_url", "ftp://example.com/back.pdf", "id_document_back_url: document URL must be HTTPS"},
		{"id_document_front_url", "", "id_document_front_url: is required"},
	}
	for _, tt := range tests {
		t.Run(tt.field+"="+tt.value, func(t *testing.T) {
			in := e.Identity("valid@example.com", "CM-2000")
			in[tt.field] = tt.value
			r := e.Enroll(token, in)
			if r.Status != 400 || r.Str("field") != tt.field || r.Str("message") != tt.message {
				t.Fatalf("%d %s, want 400 %q", r.Status, r.Raw, tt.message)
			}
		})
	}
	t.Run("born on 29 February, 18 on 1 March", func(t *testing.T) {
		in := e.Identity("leap@example.com", "CM-2003")
		in["date_of_birth"] = "2008-02-29"
		e.SetClock(today.Add(-time.Hour)) // 28 February, 23:00
		r := e.Enroll(token, in)
		e.SetClock(today.Add(15 * time.Hour))
		if r.Status != 400 || r.Str("message") != "date_of_birth: customer must be 18 or older" {
			t.Fatalf("on 28 February: %d %s", r.Status, r.Raw)
		}
		if r := e.Enroll(token, in); r.Status != 201 {
			t.Fatalf("on 1 March: %d %s", r.Status, r.Raw)
		}
	})
	t.Run("18 today", func(t *testing.T) {
		in := e.Identity("eighteen@example.com", "CM-2001")
		in["date_of_birth"] = today.AddDate(-18, 0, 0).Format(time.DateOnly)
		in["id_document_type"] = "passport"
		if r := e.Enroll(token, in); r.Status != 201 || r.Str("data", "type") != "PASSPORT" {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
	})
	t.Run("wrong type", func(t *testing.T) {
		r := e.Call(e.Customers, token, "POST", "/customers/enroll", `{"first_name": 7}`)
		if r.Status != 400 || r.Str("field") != "first_name" {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
	})
	t.Run("KYB not approved", func(t *testing.T) {
		_, clientID, key := e.CreateCompany(t, "Pending "+uuid.NewString()[:6])
		before := e.Docs.Conns.Load()
		r := e.Enroll(e.MustToken(t, clientID, key), e.Identity("pending@example.com", "CM-2002"))
		if r.Status != 403 || r.Str("message") != "KYB not approved" {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
		if e.Docs.Conns.Load() != before {
			t.Error("documents were fetched for a company that may not enrol")
		}
	})
}

// TestEnrollConcurrentDuplicates sends 20 enrolments at once that share an
// email (in different cases), then 20 that share an identification number:
// each time exactly one customer is created, the others are 409, and only
// the created customers' documents stay in the bucket.
func TestEnrollConcurrentDuplicates(t *testing.T) {
	t.Parallel()
	e := apptest.NewCustomersTestEnv(t)
	companyID, token := e.ApprovedCompany()
	for _, shared := range []string{"email", "identification_number"} {
		t.Run(shared, func(t *testing.T) {
			statuses := make([]int, 20)
			var wg sync.WaitGroup
			for i := range statuses {
				wg.Go(func() {
					in := e.Identity(fmt.Sprintf("%s-%d@example.com", shared, i), fmt.Sprintf("%s-%d", shared, i))
					if shared == "email" {
						in["email"] = []string{"same@example.com", "Same@Example.COM"}[i%2]
					} else {
						in["identification_number"] = []string{"CM-SAME-1", "cm-same-1"}[i%2]
					}
					r := e.Enroll(token, in)
					if r.Status == 409 && r.Str("message") != "customer with this email or ID already exists" {
						t.Errorf("409 message %q", r.Str("message"))
					}
					statuses[i] = r.Status
				})
			}
			wg.Wait()
			count := map[int]int{}
			for _, s := range statuses {
				count[s]++
			}
			if count[201] != 1 || count[409] != 19 {
				t.Fatalf("statuses %v, want one 201 and nineteen 409", count)
			}
		})
	}
	r := e.Call(e.Customers, token, "GET", "/customers", "")
	if r.Str("pagination", "total") != "2" {
		t.Fatalf("customers: %s", r.Raw)
	}
	if got := len(e.Objects(companyID)); got != 4 {
		t.Errorf("%d objects in the bucket, want the 2 customers' 4 documents", got)
	}
}

// TestEnrollWithFiles uploads the documents as multipart/form-data.
func TestEnrollWithFiles(t *testing.T) {
	t.Parallel()
	e := apptest.NewCustomersTestEnv(t)
	companyID, token := e.ApprovedCompany()
	fields := func(email, id string) map[string]string {
		f := e.Identity(email, id)
		delete(f, customers.FieldFrontURL)
		delete(f, customers.FieldBackURL)
		return f
	}
	files := map[string][]byte{customers.FieldFrontFile: samples.PNG(), customers.FieldBackFile: samples.PDF()}

	r := e.Upload(token, fields("upload@example.com", "CM-3100"), files)
	if r.Status != 201 || r.Str("data", "kyc_status") != "VERIFIED" {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	id := r.Str("data", "id")
	if want := "customers/" + id + "/id_document_front"; r.Str("data", "image") != want {
		t.Errorf("image = %s, want %s", r.Str("data", "image"), want)
	}
	c := e.Stored(companyID, id)
	if !bytes.Equal(e.Object(c.Back.Key), samples.PDF()) || c.Back.ContentType != "application/pdf" {
		t.Errorf("the back is not the uploaded PDF (%s)", c.Back.ContentType)
	}

	tests := []struct {
		name   string
		fields map[string]string
		files  map[string][]byte
		status int
		field  string
	}{
		{"3 MB file", fields("big@example.com", "CM-3001"),
			map[string][]byte{customers.FieldFrontFile: make([]byte, 3<<20), customers.FieldBackFile: samples.PDF()}, 413, customers.FieldFrontFile},
		{"unknown field", maps.Collect(func(yield func(string, string) bool) {
			maps.All(fields("unknown@example.com", "CM-3002"))(yield)
			yield("nickname", "Mina")
		}), files, 400, "nickname"},
		{"url field", maps.Collect(func(yield func(string, string) bool) {
			maps.All(fields("url@example.com", "CM-3003"))(yield)
			yield(customers.FieldFrontURL, e.Docs.URL+"/front.png")
		}), files, 400, customers.FieldFrontURL},
		{"missing back", fields("missing@example.com", "CM-3004"), map[string][]byte{customers.FieldFrontFile: samples.PNG()}, 400, customers.FieldBackFile},
		{"html back", fields("html@example.com", "CM-3005"),
			map[string][]byte{customers.FieldFrontFile: samples.PNG(), customers.FieldBackFile: []byte("<html><body>x</body></html>")}, 422, customers.FieldBackFile},
		{"bad email", fields("not-an-email", "CM-3006"), files, 400, "email"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.Upload(token, tt.fields, tt.files)
			if r.Status != tt.status || r.Str("field") != tt.field {
				t.Fatalf("%d %s, want %d on %s", r.Status, r.Raw, tt.status, tt.field)
			}
		})
	}
	t.Run("json body", func(t *testing.T) {
		r := e.Call(e.Customers, token, "POST", "/customers", `{"email":"json@example.com"}`)
		if r.Status != 415 {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
	})
	if got := len(e.Objects(companyID)); got != 2 {
		t.Errorf("%d objects, want the one customer's 2", got)
	}
}

// TestCustomersListGetAndSync enrols three customers, one rejected by the
// sandbox verifier and one blocked by the sandbox issuer after enrolment;
// the list is newest first and paged; sync=true turns the blocked one
// inactive; another company sees none of them.
func TestCustomersListGetAndSync(t *testing.T) {
	t.Parallel()
	e := apptest.NewCustomersTestEnv(t)
	companyID, token := e.ApprovedCompany()
	var ids []string
	for _, idNumber := range []string{"CM-4001", "CM-4000", "CM-4777"} {
		r := e.Enroll(token, e.Identity(strings.ToLower(idNumber)+"@example.com", idNumber))
		if r.Status != 201 {
			t.Fatalf("enrol %s: %d %s", idNumber, r.Status, r.Raw)
		}
		ids = append(ids, r.Str("data", "id"))
	}
	rejected := e.Call(e.Customers, token, "GET", "/customers/"+ids[1], "")
	if rejected.Str("data", "kyc_status") != "REJECTED" || rejected.Str("data", "kyc_reason") != "document does not match the identity" {
		t.Errorf("identification number ending in 000: %s", rejected.Raw)
	}
	if c := e.Stored(companyID, ids[1]); c.CardholderID != "" {
		t.Error("a rejected customer was registered with the issuer")
	}

	page := e.Call(e.Customers, token, "GET", "/customers?limit=2", "")
	items := page.Items()
	if len(items) != 2 || items[0].(map[string]any)["id"] != ids[2] || items[1].(map[string]any)["id"] != ids[1] {
		t.Fatalf("page 1 is not the newest two: %s", page.Raw)
	}
	if keys := apptest.KeysOf(items[0].(map[string]any)); keys != "country,created_at,email,first_name,id,is_active,last_name,phone_country_code,phone_number,updated_at" {
		t.Errorf("list item keys %s", keys)
	}
	next := e.Call(e.Customers, token, "GET", "/customers?limit=2&cursor="+page.Str("pagination", "next_cursor"), "")
	if got := next.Items(); len(got) != 1 || got[0].(map[string]any)["id"] != ids[0] {
		t.Fatalf("page 2: %s", next.Raw)
	}

	if r := e.Call(e.Customers, token, "GET", "/customers", ""); r.Items()[0].(map[string]any)["is_active"] != true {
		t.Fatalf("without sync the blocked cardholder's customer is still active: %s", r.Raw)
	}
	synced := e.Call(e.Customers, token, "GET", "/customers?sync=true", "")
	for _, it := range synced.Items() {
		c := it.(map[string]any)
		if want := c["id"] != ids[2]; c["is_active"] != want {
			t.Errorf("after sync %s is_active = %v, want %v", c["id"], c["is_active"], want)
		}
	}
	if r := e.Call(e.Customers, token, "GET", "/customers/"+ids[2], ""); r.Str("data", "is_active") != "false" {
		t.Errorf("the sync was not stored: %s", r.Raw)
	}
	if r := e.Call(e.Customers, token, "GET", "/customers?sync=yes", ""); r.Status != 400 || r.Str("field") != "sync" {
		t.Errorf("sync=yes: %s", r.Raw)
	}

	_, other := e.ApprovedCompany()
	for _, target := range []string{"/customers/" + ids[0], "/customers/not-a-uuid"} {
		if r := e.Call(e.Customers, other, "GET", target, ""); r.Status != 404 || r.Str("code") != "CUSTOMER_NOT_FOUND" {
			t.Errorf("GET %s by another company: %d %s", target, r.Status, r.Raw)
		}
	}
	if r := e.Call(e.Customers, other, "GET", "/customers", ""); r.Str("pagination", "total") != "0" {
		t.Errorf("another company lists %s", r.Raw)
	}
}
