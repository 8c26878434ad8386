package apptest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"maps"
	"mime/multipart"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/uuid"

	"payments/infra/local/samples"
	"payments/pkg/apidoc/apitest"
	"payments/pkg/customers"
	"payments/pkg/function"
	"payments/pkg/function/adminapi"
	"payments/pkg/function/customersapi"
	"payments/pkg/function/webhooksapi"
	"payments/pkg/httpapi"
	"payments/pkg/outbound"
	"payments/pkg/outbound/outboundtest"
	"payments/pkg/store/customerstore"
	"payments/pkg/store/storetest"
)

// CustomersTestEnv is the payments environment plus a documents bucket in
// the S3 emulator, an HTTPS document server whose CA the process trusts
// through SSL_CERT_FILE, and the customers and webhooks functions built by
// their constructors (the customers function's document fetcher with a
// shorter time-out and a record of what it dials).
type CustomersTestEnv struct {
	*PaymentsTestEnv
	bucket    string
	s3        *s3.Client
	Docs      *outboundtest.Server
	Customers function.HTTPHandler
	Webhooks  function.HTTPHandler

	mu      sync.Mutex
	dialled []netip.AddrPort
	clock   time.Time // the customers function's time; zero: the real time
}

// now is the customers function's clock.
func (e *CustomersTestEnv) now() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.clock.IsZero() {
		return time.Now()
	}
	return e.clock
}

// SetClock stops the customers function's clock at t.
func (e *CustomersTestEnv) SetClock(t time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.clock = t
}

// fetchTimeout bounds a document fetch in these tests (10 s in a
// deployment), so that the slow document costs seconds, not ten.
const fetchTimeout = 3 * time.Second

// documentCA issued the certificates of the tests' document servers. The
// process trusts it the standard way, through SSL_CERT_FILE, which
// TrustDocumentCA sets before any test runs (Go reads it once).
var documentCA *outboundtest.CA

// TrustDocumentCA makes documentCA and points SSL_CERT_FILE at a bundle of
// the roots trusted so far and documentCA; the returned function removes
// the bundle.
func TrustDocumentCA() (func(), error) {
	ca, err := outboundtest.NewCA(24 * time.Hour)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "app-test-ca-")
	if err != nil {
		return nil, err
	}
	bundle := filepath.Join(dir, "bundle.pem")
	if err := samples.TrustBundle(ca.PEM, bundle); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	os.Setenv("SSL_CERT_FILE", bundle)
	documentCA = ca
	return func() { os.RemoveAll(dir) }, nil
}

// NewCustomersTestEnv returns a CustomersTestEnv over a fresh table, queues
// and bucket, with its own document server.
func NewCustomersTestEnv(t *testing.T) *CustomersTestEnv {
	t.Helper()
	e := &CustomersTestEnv{PaymentsTestEnv: NewPaymentsTestEnv(t), bucket: storetest.NewBucket(t), s3: storetest.S3Client(t)}
	e.Cfg.DocumentsBucket, e.Cfg.S3Endpoint = e.bucket, storetest.S3Endpoint(t)
	e.Docs = outboundtest.NewTLSServerOf(t, documentHost(), documentCA)
	fetcher := customers.NewFetcher(outbound.WithAllowLoopback(true), outbound.WithTimeout(fetchTimeout),
		outbound.WithDialObserver(func(a netip.AddrPort) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.dialled = append(e.dialled, a)
		}))
	var err error
	if e.Customers, err = customersapi.NewWith(context.Background(), Recording(e.Cfg, "customers"), e.Caches, fetcher, e.now); err != nil {
		t.Fatal(err)
	}
	if e.Webhooks, err = webhooksapi.NewWith(context.Background(), Recording(e.Cfg, "webhooks"), e.Caches); err != nil {
		t.Fatal(err)
	}
	// The console again, with the documents bucket it links to.
	if e.AuthTestEnv.Admin, err = adminapi.NewWith(context.Background(), Recording(e.Cfg, "admin"), e.Caches, time.Now); err != nil {
		t.Fatal(err)
	}
	return e
}

// documentHost serves what document URLs may answer: a PNG, a PDF, an HTML
// page, a 404, a body one byte over the cap, and an answer that takes 12 s
// (or until the client gives up).
func documentHost() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/front.png", func(w http.ResponseWriter, _ *http.Request) { w.Write(samples.PNG()) })
	mux.HandleFunc("/back.pdf", func(w http.ResponseWriter, _ *http.Request) { w.Write(samples.PDF()) })
	mux.HandleFunc("/page.html", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "image/png") // the header lies; the content is sniffed
		io.WriteString(w, "<!doctype html><html><body>sign in</body></html>")
	})
	mux.HandleFunc("/huge.png", func(w http.ResponseWriter, _ *http.Request) {
		w.Write(samples.PNG())
		w.Write(make([]byte, customers.MaxDocumentBytes+1-len(samples.PNG())))
	})
	mux.HandleFunc("/slow.png", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(12 * time.Second):
			w.Write(samples.PNG())
		case <-r.Context().Done():
		}
	})
	return mux
}

// ApprovedCompany creates a company with KYB APPROVED and returns its id
// and a token.
func (e *CustomersTestEnv) ApprovedCompany() (string, string) {
	e.T.Helper()
	id, clientID, key := e.CreateCompany(e.T, "Acme "+uuid.NewString()[:6])
	if r := e.Admin("PATCH", "/admin/companies/"+id, `{"kyb_status":"APPROVED"}`); r.Status != 200 {
		e.T.Fatalf("approve: %s", r.Raw)
	}
	return id, e.MustToken(e.T, clientID, key)
}

// Identity returns the fields of a valid enrolment, with the document URLs
// of the test's server.
func (e *CustomersTestEnv) Identity(email, idNumber string) map[string]string {
	return map[string]string{
		"first_name": "Amina", "last_name": "Njoya", "email": email, "country": "Cameroon",
		"street": "12 Rue de la Joie", "city": "Douala", "state": "Littoral", "postal_code": "00237",
		"country_iso_code": "CM", "country_phone_code": "+237", "phone_number": "670000001",
		"identification_number": idNumber, "id_document_type": "NIN", "date_of_birth": "1990-04-12",
		"id_document_front_url": e.Docs.URL + "/front.png", "id_document_back_url": e.Docs.URL + "/back.pdf",
	}
}

// Enroll sends POST /customers/enroll with fields as its JSON body.
func (e *CustomersTestEnv) Enroll(token string, fields map[string]string) Result {
	e.T.Helper()
	b, _ := json.Marshal(fields)
	return e.Call(e.Customers, token, "POST", "/customers/enroll", string(b))
}

// Upload sends POST /customers as multipart/form-data, base64-encoded as
// API Gateway passes a binary body.
func (e *CustomersTestEnv) Upload(token string, fields map[string]string, files map[string][]byte) Result {
	e.T.Helper()
	return e.UploadTo(e.Customers, token, fields, files)
}

// UploadTo is Upload to the customers function h.
func (e *CustomersTestEnv) UploadTo(h function.HTTPHandler, token string, fields map[string]string, files map[string][]byte) Result {
	e.T.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	for k, v := range files {
		fw, _ := mw.CreateFormFile(k, k+".bin")
		fw.Write(v)
	}
	mw.Close()
	path := httpapi.BasePath + "/customers"
	req := events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: "POST " + path, RawPath: path, IsBase64Encoded: true,
		Headers: map[string]string{"content-type": mw.FormDataContentType(), "authorization": "Bearer " + token},
		Body:    base64.StdEncoding.EncodeToString(body.Bytes()),
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			Stage: "$default", RequestID: uuid.NewString(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: path, Protocol: "HTTP/1.1", SourceIP: "198.51.100.9"},
		},
	}
	resp, err := h(context.Background(), req)
	if err != nil {
		e.T.Fatal(err)
	}
	apitest.CheckEvent(e.T, req, resp, true)
	r := Result{Status: resp.StatusCode, Raw: resp.Body, Headers: resp.Headers}
	dec := json.NewDecoder(strings.NewReader(resp.Body))
	dec.UseNumber()
	if err := dec.Decode(&r.Body); err != nil {
		e.T.Fatalf("body %q: %v", resp.Body, err)
	}
	return r
}

// Objects returns the keys of the documents bucket under the company's
// prefix.
func (e *CustomersTestEnv) Objects(companyID string) []string {
	e.T.Helper()
	out, err := e.s3.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{
		Bucket: aws.String(e.bucket), Prefix: aws.String("companies/" + companyID + "/"),
	})
	if err != nil {
		e.T.Fatal(err)
	}
	var keys []string
	for _, o := range out.Contents {
		keys = append(keys, aws.ToString(o.Key))
	}
	return keys
}

// Object returns the bytes stored under key.
func (e *CustomersTestEnv) Object(key string) []byte {
	e.T.Helper()
	out, err := e.s3.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(e.bucket), Key: aws.String(key)})
	if err != nil {
		e.T.Fatalf("get %s: %v", key, err)
	}
	defer out.Body.Close()
	b, _ := io.ReadAll(out.Body)
	return b
}

// Stored reads a customer as the store holds it.
func (e *CustomersTestEnv) Stored(companyID, id string) customers.Customer {
	e.T.Helper()
	c, err := customerstore.NewCustomers(e.DB).Get(context.Background(), companyID, id)
	if err != nil {
		e.T.Fatalf("read customer %s: %v", id, err)
	}
	return c
}

// Dials returns how many times the customers function's document fetcher
// dialled host.
func (e *CustomersTestEnv) Dials(host string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, a := range e.dialled {
		if a.Addr().String() == host {
			n++
		}
	}
	return n
}

// CheckCreatedEvent finds customer.created for customerID in the delivery
// log.
func (e *CustomersTestEnv) CheckCreatedEvent(token, customerID string) {
	e.T.Helper()
	r := e.Call(e.Webhooks, token, "GET", "/webhooks/events?limit=100", "")
	for _, it := range r.Items() {
		ev := it.(map[string]any)
		p, _ := ev["payload"].(map[string]any)
		if ev["event"] == "customer.created" && p["customer_id"] == customerID {
			if p["kyc_status"] == nil || p["email"] == nil {
				e.T.Errorf("customer.created payload %v", p)
			}
			return
		}
	}
	e.T.Errorf("no customer.created for %s in %s", customerID, r.Raw)
}

// KeysOf returns the keys of m, sorted and joined by commas.
func KeysOf(m map[string]any) string { return strings.Join(slices.Sorted(maps.Keys(m)), ",") }
