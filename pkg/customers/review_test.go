package customers_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"payments/infra/local/samples"
	"payments/pkg/app/apptest"
	"payments/pkg/customers"
	"payments/pkg/events"
	"payments/pkg/waittest"
)

// decide sends the console's decision on customer id.
func decide(p *apptest.ProductionEnv, id, status, reason string) apptest.Result {
	p.T.Helper()
	b, _ := json.Marshal(map[string]string{"status": status, "reason": reason})
	return p.Console("POST", "/admin/customers/"+id+"/kyc", string(b))
}

// fetchLinks GETs every document link of a console answer, as the operator's
// browser would, and returns the bytes by side; each link expires at
// wantExpiry.
func fetchLinks(t *testing.T, r apptest.Result, wantExpiry time.Time) map[string][]byte {
	t.Helper()
	docs, _ := r.Data()["documents"].([]any)
	if len(docs) != 2 {
		t.Fatalf("documents %v, want front and back", r.Data()["documents"])
	}
	out := map[string][]byte{}
	for _, d := range docs {
		link := d.(map[string]any)
		side, u := link["side"].(string), link["url"].(string)
		if link["expires_at"] != wantExpiry.Format("2006-01-02T15:04:05.000Z") {
			t.Errorf("%s expires_at %v, want %s", side, link["expires_at"], wantExpiry)
		}
		if !strings.Contains(u, "X-Amz-Expires=900") || !strings.Contains(u, "X-Amz-Signature=") {
			t.Errorf("%s link %s is not pre-signed for 15 minutes", side, u)
		}
		res, err := http.Get(u)
		if err != nil {
			t.Fatalf("GET the %s link: %v", side, err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("GET the %s link: %d %s", side, res.StatusCode, b)
		}
		// S3 took it as the admin function's s3:GetObject.
		apptest.RecordFollowed("admin", apptest.AWSCall{Resource: "DOCUMENTS_BUCKET/*", Action: "s3:GetObject"})
		out[side] = b
	}
	return out
}

// TestEnrollInProductionMode: without a KYC verifier, an enrolment by URL
// or by upload stores the documents and the customer PENDING_REVIEW (201),
// with customer.created saying so; a sync reads the card issuer (Stripe
// Issuing) for verified customers alone: none here.
func TestEnrollInProductionMode(t *testing.T) {
	t.Parallel()
	e := apptest.NewCustomersTestEnv(t)
	p := e.Production()
	companyID, token := p.Company()

	b, _ := json.Marshal(e.Identity("prod@example.com", "CM-5001"))
	byURL := e.Call(p.Customers, token, "POST", "/customers/enroll", string(b))
	fields := e.Identity("upload@example.com", "CM-5002")
	delete(fields, customers.FieldFrontURL)
	delete(fields, customers.FieldBackURL)
	byUpload := e.UploadTo(p.Customers, token, fields, map[string][]byte{
		customers.FieldFrontFile: samples.PNG(), customers.FieldBackFile: samples.PDF(),
	})
	for name, r := range map[string]apptest.Result{"by URL": byURL, "by upload": byUpload} {
		if r.Status != 201 || r.Str("data", "kyc_status") != "PENDING_REVIEW" || r.Str("data", "kyc_reason") != "<nil>" {
			t.Fatalf("enrol %s: %d %s", name, r.Status, r.Raw)
		}
		c := e.Stored(companyID, r.Str("data", "id"))
		if c.KYCStatus != customers.PendingReview || c.KYCID != "" || c.CardholderID != "" || c.Review != nil {
			t.Errorf("stored %+v", c)
		}
		if got := e.Object(c.Front.Key); !bytes.Equal(got, samples.PNG()) {
			t.Errorf("%s: the front holds %d bytes, not the PNG", name, len(got))
		}
		if got := e.Object(c.Back.Key); !bytes.Equal(got, samples.PDF()) {
			t.Errorf("%s: the back holds %d bytes, not the PDF", name, len(got))
		}
		if got := e.Call(p.Customers, token, "GET", "/customers/"+c.ID, ""); got.Str("data", "kyc_status") != "PENDING_REVIEW" {
			t.Errorf("GET %s: %s", c.ID, got.Raw)
		}
	}
	if got := len(e.Objects(companyID)); got != 4 {
		t.Errorf("%d objects, want the two customers' 4 documents", got)
	}
	created := p.Events(token, events.CustomerCreated)
	if len(created) != 2 || created[0]["kyc_status"] != "PENDING_REVIEW" || created[1]["kyc_status"] != "PENDING_REVIEW" {
		t.Errorf("customer.created payloads %v", created)
	}
	if r := e.Call(p.Customers, token, "GET", "/customers?sync=true", ""); r.Status != 200 || r.Str("pagination", "total") != "2" {
		t.Errorf("sync: %d %s", r.Status, r.Raw)
	}
	if r := e.Call(p.Customers, token, "GET", "/customers", ""); r.Status != 200 || r.Str("pagination", "total") != "2" {
		t.Errorf("list: %d %s", r.Status, r.Raw)
	}
}

// TestReviewList: the console lists the customers of every company waiting
// for review, oldest first, by cursor; a customer decided by a verifier is
// not in it, nor one decided by the console; the filter is required.
func TestReviewList(t *testing.T) {
	t.Parallel()
	e := apptest.NewCustomersTestEnv(t)
	p := e.Production()
	_, sandboxToken := e.ApprovedCompany()
	if r := e.Enroll(sandboxToken, e.Identity("sandbox@example.com", "CM-6100")); r.Str("data", "kyc_status") != "VERIFIED" {
		t.Fatalf("sandbox enrolment: %s", r.Raw)
	}
	var ids, companies []string
	for i := range 4 {
		companyID, token := p.Company()
		b, _ := json.Marshal(e.Identity(fmt.Sprintf("review%d@example.com", i), fmt.Sprintf("CM-60%02d", i+1)))
		r := e.Call(p.Customers, token, "POST", "/customers/enroll", string(b))
		if r.Status != 201 {
			t.Fatalf("enrol: %s", r.Raw)
		}
		ids, companies = append(ids, r.Str("data", "id")), append(companies, companyID)
	}
	if r := decide(p, ids[1], "VERIFIED", ""); r.Status != 200 {
		t.Fatalf("decide: %d %s", r.Status, r.Raw)
	}
	waiting := []int{0, 2, 3}

	// The queue is an index, eventually consistent.
	var first apptest.Result
	waittest.Until(t, 10*time.Second, "the index holds the three customers waiting", func() bool {
		first = p.Console("GET", "/admin/customers?kyc_status=PENDING_REVIEW&limit=2", "")
		return first.Status == 200 && first.Str("pagination", "total") == "3"
	})
	if first.Status != 200 || len(first.Items()) != 2 || first.Str("pagination", "total") != "3" {
		t.Fatalf("first page: %d %s", first.Status, first.Raw)
	}
	cursor := first.Str("pagination", "next_cursor")
	second := p.Console("GET", "/admin/customers?kyc_status=PENDING_REVIEW&limit=2&cursor="+cursor, "")
	if second.Status != 200 || len(second.Items()) != 1 || second.Str("pagination", "next_cursor") != "<nil>" ||
		second.Str("pagination", "total") != "3" {
		t.Fatalf("second page: %d %s", second.Status, second.Raw)
	}
	items := append(first.Items(), second.Items()...)
	for i, it := range items {
		c := it.(map[string]any)
		want := waiting[i]
		if c["id"] != ids[want] || c["company_id"] != companies[want] {
			t.Errorf("item %d is %v of %v, want %s of %s (oldest first)", i, c["id"], c["company_id"], ids[want], companies[want])
		}
		for k, v := range map[string]any{
			"first_name": "Amina", "last_name": "Njoya", "date_of_birth": "1990-04-12T00:00:00.000Z", "country": "Cameroon",
			"country_iso_code": "CM", "identification_number": fmt.Sprintf("CM-60%02d", want+1), "document_type": "NIN",
			"kyc_status": "PENDING_REVIEW", "kyc_reason": nil, "reviewed_by": nil,
		} {
			if c[k] != v {
				t.Errorf("item %d: %s = %v, want %v", i, k, c[k], v)
			}
		}
		if _, ok := c["created_at"].(string); !ok {
			t.Errorf("item %d has no created_at: %v", i, c)
		}
	}

	tests := []struct {
		name, query, field string
	}{
		{"no filter", "", "kyc_status"},
		{"another status", "?kyc_status=VERIFIED", "kyc_status"},
		{"lower case", "?kyc_status=pending_review", "kyc_status"},
		{"twice", "?kyc_status=PENDING_REVIEW&kyc_status=PENDING_REVIEW", "kyc_status"},
		{"a page number", "?kyc_status=PENDING_REVIEW&page=2", "page"},
		{"a limit too large", "?kyc_status=PENDING_REVIEW&limit=101", "limit"},
		{"a foreign cursor", "?kyc_status=PENDING_REVIEW&cursor=not-a-cursor", "cursor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := p.Console("GET", "/admin/customers"+tt.query, "")
			if r.Status != 400 || r.Str("field") != tt.field {
				t.Fatalf("%d %s, want 400 naming %s", r.Status, r.Raw, tt.field)
			}
		})
	}
}

// TestReviewDecide: the console verifies one customer and rejects another,
// once each: the company sees the outcome, customer.kyc.updated is emitted,
// the answer's links read the stored documents for 15 minutes; with no
// issuer configured the verified customer has no cardholder yet. Bad input
// is a 400 naming the field, and nothing changes.
func TestReviewDecide(t *testing.T) {
	t.Parallel()
	e := apptest.NewCustomersTestEnv(t)
	p := e.Production()
	now := time.Date(2026, 3, 1, 9, 30, 0, 123_000_000, time.UTC)
	e.SetClock(now)
	companyID, token := p.Company()
	_, otherToken := p.Company()
	enrol := func(email, idNumber string) string {
		b, _ := json.Marshal(e.Identity(email, idNumber))
		r := e.Call(p.Customers, token, "POST", "/customers/enroll", string(b))
		if r.Status != 201 {
			t.Fatalf("enrol: %s", r.Raw)
		}
		return r.Str("data", "id")
	}
	verified, rejected := enrol("verify@example.com", "CM-7001"), enrol("reject@example.com", "CM-7002")
	_, sandboxToken := e.ApprovedCompany()
	byVerifier := e.Enroll(sandboxToken, e.Identity("verifier@example.com", "CM-7003")).Str("data", "id")

	bad := []struct {
		name, id, body string
		status         int
		field, code    string
	}{
		{"no status", verified, `{"reason":"looks fine"}`, 400, "status", "INVALID_FIELD"},
		{"status PENDING", verified, `{"status":"PENDING"}`, 400, "status", "INVALID_FIELD"},
		{"status PENDING_REVIEW", verified, `{"status":"PENDING_REVIEW"}`, 400, "status", "INVALID_FIELD"},
		{"status in lower case", verified, `{"status":"verified"}`, 400, "status", "INVALID_FIELD"},
		{"status not a string", verified, `{"status":1}`, 400, "status", "INVALID_FIELD"},
		{"rejected without a reason", rejected, `{"status":"REJECTED"}`, 400, "reason", "INVALID_FIELD"},
		{"rejected with a blank reason", rejected, `{"status":"REJECTED","reason":"   "}`, 400, "reason", "INVALID_FIELD"},
		{"a reason too long", rejected, `{"status":"REJECTED","reason":"` + strings.Repeat("é", 1001) + `"}`, 400, "reason", "INVALID_FIELD"},
		{"a reason with a control character", rejected, `{"status":"REJECTED","reason":"bad\u0007"}`, 400, "reason", "INVALID_FIELD"},
		{"an unknown field", verified, `{"status":"VERIFIED","by":"me"}`, 400, "by", "INVALID_FIELD"},
		{"not JSON", verified, `status=VERIFIED`, 400, "body", "INVALID_FIELD"},
		{"unknown customer", "0196c1d2-0000-7000-8000-000000000000", `{"status":"VERIFIED"}`, 404, "", "CUSTOMER_NOT_FOUND"},
		{"not an id", "not-a-uuid", `{"status":"VERIFIED"}`, 404, "", "CUSTOMER_NOT_FOUND"},
		{"decided by the verifier", byVerifier, `{"status":"REJECTED","reason":"second look"}`, 409, "", "KYC_ALREADY_DECIDED"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			r := p.Console("POST", "/admin/customers/"+tt.id+"/kyc", tt.body)
			if r.Status != tt.status || r.Str("code") != tt.code || (tt.field != "" && r.Str("field") != tt.field) {
				t.Fatalf("%d %s, want %d %s naming %q", r.Status, r.Raw, tt.status, tt.code, tt.field)
			}
		})
	}
	for _, id := range []string{verified, rejected} {
		if c := e.Stored(companyID, id); c.KYCStatus != customers.PendingReview {
			t.Fatalf("after refused decisions %s is %s", id, c.KYCStatus)
		}
	}
	if got := p.Events(token, events.CustomerKYCUpdated); len(got) != 0 {
		t.Fatalf("events after refused decisions: %v", got)
	}

	// The console looks at the documents before deciding.
	look := p.Console("GET", "/admin/customers/"+verified, "")
	if look.Status != 200 || look.Str("data", "company_id") != companyID || look.Str("data", "kyc_status") != "PENDING_REVIEW" {
		t.Fatalf("GET: %d %s", look.Status, look.Raw)
	}
	docs := fetchLinks(t, look, now.Add(15*time.Minute))
	if !bytes.Equal(docs["front"], samples.PNG()) || !bytes.Equal(docs["back"], samples.PDF()) {
		t.Errorf("the links read %d and %d bytes, not the PNG and the PDF", len(docs["front"]), len(docs["back"]))
	}
	if r := p.Console("GET", "/admin/customers/0196c1d2-0000-7000-8000-000000000000", ""); r.Status != 404 || r.Str("code") != "CUSTOMER_NOT_FOUND" {
		t.Errorf("GET an unknown customer: %d %s", r.Status, r.Raw)
	}

	later := now.Add(time.Hour)
	e.SetClock(later)
	r := decide(p, verified, "VERIFIED", "  passport checked against the selfie  ")
	if r.Status != 200 || r.Str("data", "kyc_status") != "VERIFIED" || r.Str("data", "kyc_reason") != "<nil>" ||
		r.Str("data", "review_note") != "passport checked against the selfie" || r.Str("data", "reviewed_by") != "admin-api-key" ||
		r.Str("data", "reviewed_at") != "2026-03-01T10:30:00.123Z" || r.Str("data", "updated_at") != "2026-03-01T10:30:00.123Z" {
		t.Fatalf("verify: %d %s", r.Status, r.Raw)
	}
	docs = fetchLinks(t, r, later.Add(15*time.Minute))
	if !bytes.Equal(docs["front"], samples.PNG()) || !bytes.Equal(docs["back"], samples.PDF()) {
		t.Error("the decision's links do not read the documents")
	}
	r = decide(p, rejected, "REJECTED", "the photo is not the customer")
	if r.Status != 200 || r.Str("data", "kyc_status") != "REJECTED" || r.Str("data", "kyc_reason") != "the photo is not the customer" {
		t.Fatalf("reject: %d %s", r.Status, r.Raw)
	}

	for _, tt := range []struct {
		id, status, reason string
	}{{verified, "VERIFIED", "<nil>"}, {rejected, "REJECTED", "the photo is not the customer"}} {
		got := e.Call(p.Customers, token, "GET", "/customers/"+tt.id, "")
		if got.Str("data", "kyc_status") != tt.status || got.Str("data", "kyc_reason") != tt.reason ||
			got.Str("data", "updated_at") != "2026-03-01T10:30:00.123Z" {
			t.Errorf("the company sees %s", got.Raw)
		}
		if again := decide(p, tt.id, "REJECTED", "changed my mind"); again.Status != 409 || again.Str("code") != "KYC_ALREADY_DECIDED" {
			t.Errorf("second decision on %s: %d %s", tt.status, again.Status, again.Raw)
		}
		if other := e.Call(p.Customers, otherToken, "GET", "/customers/"+tt.id, ""); other.Status != 404 {
			t.Errorf("another company reads the customer: %d %s", other.Status, other.Raw)
		}
		if c := e.Stored(companyID, tt.id); c.CardholderID != "" {
			t.Errorf("%s customer has cardholder %q with no issuer configured", tt.status, c.CardholderID)
		}
	}
	updated := p.Events(token, events.CustomerKYCUpdated)
	want := []map[string]any{
		{"customer_id": verified, "kyc_status": "VERIFIED", "kyc_reason": nil, "updated_at": "2026-03-01T10:30:00.123Z"},
		{"customer_id": rejected, "kyc_status": "REJECTED", "kyc_reason": "the photo is not the customer", "updated_at": "2026-03-01T10:30:00.123Z"},
	}
	if len(updated) != len(want) {
		t.Fatalf("customer.kyc.updated payloads %v, want %v", updated, want)
	}
	// Both were decided at the clock's same instant: the list's order
	// between them is not the point.
	if updated[0]["customer_id"] != verified {
		updated[0], updated[1] = updated[1], updated[0]
	}
	for i := range want {
		if apptest.KeysOf(updated[i]) != apptest.KeysOf(want[i]) {
			t.Errorf("payload keys %s, want %s", apptest.KeysOf(updated[i]), apptest.KeysOf(want[i]))
		}
		for k, v := range want[i] {
			if updated[i][k] != v {
				t.Errorf("customer.kyc.updated %d: %s = %v, want %v", i, k, updated[i][k], v)
			}
		}
	}
	waittest.Until(t, 10*time.Second, "the decided customers leave the queue", func() bool {
		list := p.Console("GET", "/admin/customers?kyc_status=PENDING_REVIEW", "")
		return list.Status == 200 && list.Str("pagination", "total") == "0" && len(list.Items()) == 0
	})
}

// TestReviewConcurrentDecisions: of decisions sent at once on one
// customer, exactly one is recorded, with one event; the others are 409.
func TestReviewConcurrentDecisions(t *testing.T) {
	t.Parallel()
	e := apptest.NewCustomersTestEnv(t)
	p := e.Production()
	companyID, token := p.Company()
	b, _ := json.Marshal(e.Identity("race@example.com", "CM-8001"))
	id := e.Call(p.Customers, token, "POST", "/customers/enroll", string(b)).Str("data", "id")
	results := make([]apptest.Result, 8)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			if i%2 == 0 {
				results[i] = decide(p, id, "VERIFIED", "")
			} else {
				results[i] = decide(p, id, "REJECTED", fmt.Sprintf("reviewer %d says no", i))
			}
		})
	}
	wg.Wait()
	var won []apptest.Result
	for _, r := range results {
		switch {
		case r.Status == 200:
			won = append(won, r)
		case r.Status != 409 || r.Str("code") != "KYC_ALREADY_DECIDED":
			t.Errorf("a losing decision answered %d %s", r.Status, r.Raw)
		}
	}
	if len(won) != 1 {
		t.Fatalf("%d decisions recorded, want exactly one", len(won))
	}
	c := e.Stored(companyID, id)
	if string(c.KYCStatus) != won[0].Str("data", "kyc_status") || c.KYCReason != strings.ReplaceAll(won[0].Str("data", "kyc_reason"), "<nil>", "") {
		t.Errorf("stored %s %q, the winner answered %s", c.KYCStatus, c.KYCReason, won[0].Raw)
	}
	if got := p.Events(token, events.CustomerKYCUpdated); len(got) != 1 || got[0]["kyc_status"] != string(c.KYCStatus) {
		t.Errorf("customer.kyc.updated %v, want one of %s", got, c.KYCStatus)
	}
}

// TestReviewRegistersCardholder: a customer the console verifies where a
// card issuer is configured (here the sandbox issuer, through the sandbox
// console, over the production enrolment's record) is registered as a
// cardholder, as at a verified enrolment; a rejected one never is.
func TestReviewRegistersCardholder(t *testing.T) {
	t.Parallel()
	e := apptest.NewCustomersTestEnv(t)
	p := e.Production()
	companyID, token := p.Company()
	var ids []string
	for i := range 2 {
		b, _ := json.Marshal(e.Identity(fmt.Sprintf("holder%d@example.com", i), fmt.Sprintf("CM-900%d", i)))
		ids = append(ids, e.Call(p.Customers, token, "POST", "/customers/enroll", string(b)).Str("data", "id"))
	}
	if r := e.Admin("POST", "/admin/customers/"+ids[0]+"/kyc", `{"status":"VERIFIED"}`); r.Status != 200 {
		t.Fatalf("verify: %d %s", r.Status, r.Raw)
	}
	if r := e.Admin("POST", "/admin/customers/"+ids[1]+"/kyc", `{"status":"REJECTED","reason":"expired passport"}`); r.Status != 200 {
		t.Fatalf("reject: %d %s", r.Status, r.Raw)
	}
	if c := e.Stored(companyID, ids[0]); c.CardholderID == "" || c.KYCStatus != "VERIFIED" {
		t.Errorf("verified customer: %+v, want a cardholder", c)
	}
	if c := e.Stored(companyID, ids[1]); c.CardholderID != "" || c.KYCStatus != "REJECTED" || c.KYCReason != "expired passport" {
		t.Errorf("rejected customer: %+v", c)
	}
}
