package apptest

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"payments/pkg/customers"
	"payments/pkg/events"
	"payments/pkg/function"
	"payments/pkg/function/adminapi"
	"payments/pkg/function/authapi"
	"payments/pkg/function/customersapi"
	"payments/pkg/function/webhooksapi"
	"payments/pkg/outbound"
	"payments/pkg/store/customerstore"
	"payments/pkg/timestamp"
)

// ProductionEnv is the customers, webhooks and admin functions of
// production mode (no KYC verifier; the card issuer Stripe Issuing, here
// simulated, which the admin function does not call) over the tables,
// queues and bucket of a CustomersTestEnv, the customers function fetching
// from its document server.
type ProductionEnv struct {
	*CustomersTestEnv
	Cfg       function.Config
	Customers function.HTTPHandler
	Webhooks  function.HTTPHandler
	Admin     function.HTTPHandler
	auth      function.HTTPHandler
}

// Production returns the ProductionEnv over e; its functions' clock is e's
// (SetClock).
func (e *CustomersTestEnv) Production() *ProductionEnv {
	e.T.Helper()
	p := &ProductionEnv{CustomersTestEnv: e, Cfg: e.Cfg}
	p.Cfg.Mode = function.ModeProduction // tokens are bound to the mode
	_, p.Cfg.IssuerBaseURL = NewStripeSim(e.T, "")
	p.Cfg.IssuerAPIKey = StripeTestKey
	ctx := context.Background()
	var err error
	if p.auth, err = authapi.NewWith(ctx, Recording(p.Cfg, "auth"), e.Caches); err != nil {
		e.T.Fatal(err)
	}
	fetcher := customers.NewFetcher(outbound.WithAllowLoopback(true), outbound.WithTimeout(fetchTimeout))
	if p.Customers, err = customersapi.NewWith(context.Background(), Recording(p.Cfg, "customers"), e.Caches, fetcher, e.now); err != nil {
		e.T.Fatal(err)
	}
	if p.Webhooks, err = webhooksapi.NewWith(ctx, Recording(p.Cfg, "webhooks"), e.Caches); err != nil {
		e.T.Fatal(err)
	}
	if p.Admin, err = adminapi.NewWith(ctx, Recording(p.Cfg, "admin"), e.Caches, e.now); err != nil {
		e.T.Fatal(err)
	}
	return p
}

// Company creates a company with KYB APPROVED and returns its id and a
// token of production mode.
func (p *ProductionEnv) Company() (string, string) {
	p.T.Helper()
	id, clientID, key := p.CreateCompany(p.T, "Live "+uuid.NewString()[:6])
	if r := p.CustomersTestEnv.Admin("PATCH", "/admin/companies/"+id, `{"kyb_status":"APPROVED"}`); r.Status != 200 {
		p.T.Fatalf("approve: %s", r.Raw)
	}
	res := AuthTestCall(p.T, p.auth, AuthTestEvent("POST", "/api/v1/auth/token", "100.127.0.1", nil,
		fmt.Sprintf(`{"client_id":%q,"client_key":%q}`, clientID, key)))
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal([]byte(res.Body), &tok); err != nil || tok.AccessToken == "" {
		p.T.Fatalf("token: %d %s", res.StatusCode, res.Body)
	}
	return id, tok.AccessToken
}

// Console sends one request to the production admin function with the
// admin key.
func (p *ProductionEnv) Console(method, target, body string) Result {
	p.T.Helper()
	return p.Call(p.Admin, "", method, target, body, adminapi.KeyHeader, AuthTestAdminKey)
}

// Events returns the payloads of the company's events of kind in the
// delivery log, oldest first.
func (p *ProductionEnv) Events(token string, kind events.Kind) []map[string]any {
	p.T.Helper()
	r := p.Call(p.Webhooks, token, "GET", "/webhooks/events?limit=100&event="+string(kind), "")
	if r.Status != 200 {
		p.T.Fatalf("events: %d %s", r.Status, r.Raw)
	}
	var out []map[string]any
	for _, it := range r.Items() {
		ev := it.(map[string]any)
		if ev["event"] == string(kind) {
			payload, _ := ev["payload"].(map[string]any)
			out = append([]map[string]any{payload}, out...)
		}
	}
	return out
}

// PendingReviewCustomer stores a customer of the company PENDING_REVIEW, as
// an enrolment where no verifier is configured stores it (its documents'
// keys, with nothing stored under them), and returns its id.
func (e *CustomersTestEnv) PendingReviewCustomer(companyID, email, idNumber string) string {
	e.T.Helper()
	now := timestamp.Of(time.Now())
	c := customers.Customer{
		ID: uuid.Must(uuid.NewV7()).String(), CompanyID: companyID, FirstName: "Amina", LastName: "Njoya", Email: email,
		Country: "Cameroon", Street: "12 Rue de la Joie", City: "Douala", State: "Littoral", PostalCode: "00237",
		CountryISOCode: "CM", PhoneCountryCode: "+237", PhoneNumber: "670000001", IdentificationNumber: idNumber,
		DocumentType: customers.NIN, DateOfBirth: time.Date(1990, 4, 12, 0, 0, 0, 0, time.UTC),
		KYCStatus: customers.PendingReview, IsActive: true, CreatedAt: now, UpdatedAt: now,
	}
	prefix := "companies/" + companyID + "/customers/" + c.ID + "/id_document_"
	c.Front = customers.Document{Key: prefix + "front", ContentType: "image/png", Reference: "customers/" + c.ID + "/id_document_front"}
	c.Back = customers.Document{Key: prefix + "back", ContentType: "application/pdf", Reference: "customers/" + c.ID + "/id_document_back"}
	ev, err := events.Build(companyID, events.CustomerCreatedData{CustomerID: c.ID, KYCStatus: string(c.KYCStatus),
		CreatedAt: timestamp.Format(now)}, now)
	if err != nil {
		e.T.Fatal(err)
	}
	if err := customerstore.NewCustomers(e.DB).Create(context.Background(), c, ev); err != nil {
		e.T.Fatal(err)
	}
	return c.ID
}
