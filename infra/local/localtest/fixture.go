package localtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"payments/infra/local/devserver"
	"payments/infra/local/samples"
	"payments/infra/local/samtemplate"
	"payments/pkg/app"
	"payments/pkg/function"
	"payments/pkg/function/base"
	"payments/pkg/issuerhooks"
	"payments/pkg/providers/issuer"
	"payments/pkg/store"
	"payments/pkg/store/moneystore"
	"payments/pkg/store/storetest"
	"payments/pkg/timestamp"
)

// FixtureWebhookURL is the webhook URL of the fixture's company: a private
// address, which the outbound client refuses without dialling, so that
// every delivery attempt of a test fails at once and nothing leaves the
// machine.
const FixtureWebhookURL = "https://10.0.0.1/webhooks"

// Fixture holds the records that the sample events under events/ name. A
// sample event carries placeholders (see Placeholders) where it needs a
// record; SampleEvents replaces each with the id of the record the fixture
// made for it, so that every event takes the path it shows.
type Fixture struct {
	// Token is an access token of Company.
	Token string
	// Company is the approved company the token belongs to, with a webhook
	// URL (FixtureWebhookURL); ClientID and ClientKey are its credentials.
	Company, ClientID, ClientKey string
	// Operated is another company, the one the admin events read, change
	// and rotate the key of (rotating Company's key would void Token).
	Operated string
	// Wallet is Company's XAF wallet in Cameroon, funded with 1,000,000 on
	// its payout balance; WalletTransaction is that funding's ledger entry.
	// Company also has a USD wallet.
	Wallet, WalletTransaction string
	// Payout is a payout of 5000 XAF accepted from Wallet (PENDING).
	Payout string
	// PendingPayout is another PENDING payout, waiting for its submit.
	PendingPayout string
	// ProcessingPayout and FailingPayout have been submitted (PROCESSING):
	// the sandbox operator answers SUCCESS for the first and "recipient
	// account not found" for the second at their next poll.
	ProcessingPayout, FailingPayout string
	// PendingDue, ProcessingDue and FailingDue are when the payout worker
	// expects its next message about PendingPayout, ProcessingPayout and
	// FailingPayout (a message that names another time is dropped).
	PendingDue, ProcessingDue, FailingDue string
	// Event is the status event of Payout's acceptance: published, not yet
	// handled by the webhook worker.
	Event string
	// RetryEvent is the acceptance event of PendingPayout, whose delivery to
	// the webhook URL failed its first attempt; the second is due.
	RetryEvent string
	// Customer is a verified customer of Company, enrolled from the sample
	// document server (Main), whose base URL is DocumentsURL.
	Customer, DocumentsURL string
	// Card, FreezeCard and EndCard are ACTIVE cards of Customer, FrozenCard a
	// FROZEN one, each funded with 20 USD from Company's USD wallet (funded
	// with 1,000 USD).
	Card, FreezeCard, FrozenCard, EndCard string
	// ProviderCard is an ACTIVE card of Customer, IssuerCard its id at the
	// sandbox issuer: the card-worker's sample event reports that the
	// issuer terminated it.
	ProviderCard, IssuerCard string
	// Funding is a bank transfer of 50,000 XAF that Company declared to
	// Wallet's payout balance (POST /wallets/fund), PENDING: the
	// fund-worker's sample event has the sandbox bank confirm it.
	Funding string
}

// Placeholders maps each placeholder of the sample events to the record of
// f it stands for.
func (f *Fixture) Placeholders() map[string]string {
	return map[string]string{
		"Bearer TOKEN":                         "Bearer " + f.Token,
		"3b0e7a52-6f0d-4c1e-9d7a-0c2b5e8f1a44": f.Company,
		"cli_000000000000000000000000":         f.ClientID,
		"sk_0000000000000000000000000000000000000000000000000000000000000000": f.ClientKey,
		"00000000-0000-4000-8000-000000000001":                                f.Operated,
		"6f1c2a9e-3b7d-4e21-9a0c-5d8e7f6a1b2c":                                f.Wallet,
		"0196893a-6c00-7a3e-9c4d-2f1e5b7a8c90":                                f.WalletTransaction,
		"0196a0c2-7b3e-7d41-9c55-2f1e8a9b0c1d":                                f.Payout,
		"0196a0c2-8f10-7c52-8d64-3a2f9b0c1d2e":                                f.PendingPayout,
		"0196a0c3-0000-7abc-8def-0123456789ab":                                f.ProcessingPayout,
		"0196a0c3-1111-7bcd-9ef0-123456789abc":                                f.FailingPayout,
		"2025-05-01T10:00:00.000Z":                                            f.PendingDue,
		"2025-05-01T10:00:05.000Z":                                            f.ProcessingDue,
		"2025-05-01T10:00:06.000Z":                                            f.FailingDue,
		"0196897a-5f0c-7d3e-9a41-1c2b3d4e5f60":                                f.Event,
		"0196897b-6a1d-7e4f-8b52-2d3c4e5f6071":                                f.RetryEvent,
		"0196c1d2-3e4f-7a5b-8c6d-7e8f9a0b1c2d":                                f.Customer,
		samples.PlaceholderURL:                                                f.DocumentsURL,
		"0196d1e2-0000-7000-8000-0000000ca4d1":                                f.Card,
		"0196d1e2-0000-7000-8000-0000000ca4d2":                                f.FreezeCard,
		"0196d1e2-0000-7000-8000-0000000ca4d3":                                f.FrozenCard,
		"0196d1e2-0000-7000-8000-0000000ca4d4":                                f.EndCard,
		"0196e1f2-0000-7000-8000-00000000f0d1":                                f.Funding,
		"0196d1e2-0000-7000-8000-0000000ca4d5":                                f.ProviderCard,
		"card_00000000-0000-7000-8000-00000000a001":                           f.IssuerCard,
	}
}

// NewFixture makes the records of a Fixture through the functions'
// handlers (hs, as HTTPHandlers returns them, and the queue consumers of
// the template), in the deployment res.
func NewFixture(t testing.TB, tpl *samtemplate.Template, res devserver.Resources, hs map[string]function.HTTPHandler) *Fixture {
	t.Helper()
	c := fixtureCalls{t: t, hs: hs}
	f := &Fixture{}
	f.Company, f.ClientID, f.ClientKey = c.company("Local Test Company", FixtureWebhookURL)
	f.Token = c.token(f.ClientID, f.ClientKey)
	f.Operated, _, _ = c.company("Operated Company", "")

	f.Wallet = c.str(c.call("wallets", f.Token, "POST", "/api/v1/wallets", http.StatusCreated, map[string]string{
		"currency": "XAF", "country": "Cameroon", "country_iso_code": "CM", "country_phone_code": "+237",
	}), "id")
	c.call("wallets", f.Token, "POST", "/api/v1/wallets", http.StatusCreated, map[string]string{
		"currency": "USD", "country": "United States", "country_iso_code": "US", "country_phone_code": "+1",
	})
	c.call("admin", "", "POST", "/api/v1/admin/wallets/"+f.Wallet+"/credit", http.StatusOK, map[string]any{
		"balance": "payout", "amount": 1000000, "reference": "fixture-funding",
	})
	var ledger []map[string]any
	c.decode(c.call("wallets", f.Token, "GET", "/api/v1/wallet/transactions/wallet/"+f.Wallet, http.StatusOK, nil), &ledger)
	if len(ledger) != 1 {
		t.Fatalf("fixture: the funded wallet has %d ledger entries, want 1", len(ledger))
	}
	f.WalletTransaction = fmt.Sprint(ledger[0]["id"])
	f.Funding = c.str(c.call("wallets", f.Token, "POST", "/api/v1/wallets/fund", http.StatusAccepted, map[string]any{
		"wallet_id": f.Wallet, "amount": 50000, "reference": "fixture-wire",
	}), "id")

	payout := func(phone, externalID string) string {
		return c.str(c.call("payments", f.Token, "POST", "/api/v1/payment/payout", http.StatusOK, map[string]any{
			"operator": "mtn", "country": "CM", "phone_number": phone, "amount": 5000, "currency": "XAF", "external_id": externalID,
		}), "transaction_id")
	}
	f.Payout = payout("237670000001", "fixture-payout")
	f.PendingPayout = payout("237670000002", "fixture-pending")
	f.ProcessingPayout = payout("237670000003", "fixture-processing")
	f.FailingPayout = payout("237670000000", "fixture-failing")
	c.consume(tpl, res, "payout-worker",
		map[string]string{"company_id": f.Company, "transaction_id": f.ProcessingPayout, "due": c.due(res, f.Company, f.ProcessingPayout)},
		map[string]string{"company_id": f.Company, "transaction_id": f.FailingPayout, "due": c.due(res, f.Company, f.FailingPayout)})
	f.PendingDue = c.due(res, f.Company, f.PendingPayout)
	f.ProcessingDue = c.due(res, f.Company, f.ProcessingPayout)
	f.FailingDue = c.due(res, f.Company, f.FailingPayout)
	for id, want := range map[string]string{f.Payout: "PENDING", f.PendingPayout: "PENDING", f.ProcessingPayout: "PROCESSING", f.FailingPayout: "PROCESSING"} {
		if got := c.str(c.call("payments", f.Token, "GET", "/api/v1/payment/transactions/"+id+"/status", http.StatusOK, nil), "status"); got != want {
			t.Fatalf("fixture: payout %s is %s, want %s", id, got, want)
		}
	}

	f.DocumentsURL = DocumentsURL(t)
	f.Customer = c.str(c.call("customers", f.Token, "POST", "/api/v1/customers/enroll", http.StatusCreated, map[string]string{
		"first_name": "Amina", "last_name": "Njoya", "email": "fixture@example.com", "country": "Cameroon",
		"street": "12 Rue de la Joie", "city": "Douala", "state": "Littoral", "postal_code": "00237",
		"country_iso_code": "CM", "country_phone_code": "+237", "phone_number": "670000001",
		"identification_number": "FIXTURE-001", "id_document_type": "NIN", "date_of_birth": "1990-04-12",
		"id_document_front_url": f.DocumentsURL + samples.FrontPath, "id_document_back_url": f.DocumentsURL + samples.BackPath,
	}), "id")

	var usd []map[string]any
	c.decode(c.call("wallets", f.Token, "GET", "/api/v1/wallets", http.StatusOK, nil), &usd)
	for _, w := range usd {
		if w["currency"] == "USD" {
			c.call("admin", "", "POST", fmt.Sprintf("/api/v1/admin/wallets/%v/credit", w["id"]), http.StatusOK, map[string]any{
				"balance": "payout", "amount": 1000, "reference": "fixture-usd",
			})
		}
	}
	for _, id := range []*string{&f.Card, &f.FreezeCard, &f.FrozenCard, &f.EndCard, &f.ProviderCard} {
		*id = c.str(c.call("cards", f.Token, "POST", "/api/v1/cards", http.StatusCreated, map[string]any{
			"customer_id": f.Customer, "amount": 20,
		}), "id")
	}
	c.call("cards", f.Token, "PUT", "/api/v1/cards/"+f.FrozenCard+"/freeze", http.StatusOK, nil)
	var raw struct {
		Raw struct {
			ID string `json:"id"`
		} `json:"raw"`
	}
	c.decode(c.call("cards", f.Token, "GET", "/api/v1/cards/"+f.ProviderCard+"?includeRaw=true", http.StatusOK, nil), &raw)
	f.IssuerCard = raw.Raw.ID
	c.authorize(FixtureAuthorization, f.IssuerCard, f.ProviderCard)

	f.Event = c.acceptanceEvent(f.Token, f.Payout)
	f.RetryEvent = c.acceptanceEvent(f.Token, f.PendingPayout)
	c.consume(tpl, res, "webhook-worker", map[string]string{"company_id": f.Company, "event_id": f.RetryEvent})
	var ev struct {
		Status     string `json:"status"`
		Deliveries []struct {
			Attempts []json.RawMessage `json:"attempts"`
		} `json:"deliveries"`
	}
	c.decode(c.call("webhooks", f.Token, "GET", "/api/v1/webhooks/events/"+f.RetryEvent, http.StatusOK, nil), &ev)
	if ev.Status != "PENDING" || len(ev.Deliveries) != 1 || len(ev.Deliveries[0].Attempts) != 1 {
		t.Fatalf("fixture: event %s after one failed attempt: %+v", f.RetryEvent, ev)
	}
	return f
}

// FixtureAuthorization is the network's id of an authorization of 12.50
// USD at a merchant in France that the fixture has decided (approved) on
// ProviderCard: the card-worker's sample events advise and settle it.
const FixtureAuthorization = "ntx_sandbox_0001"

// authorize asks the issuer-authorizations function, as the network does,
// to decide authorization id of 12.50 USD on card (issuerCard at the
// issuer), and fails t unless it is approved.
func (c fixtureCalls) authorize(id, issuerCard, card string) {
	c.t.Helper()
	body, err := json.Marshal(issuer.AuthorizationRequest{ID: id, CardID: issuerCard, Reference: card, Kind: issuer.KindAuthorization,
		Amount: 1250, Currency: "USD", Merchant: issuer.Merchant{Name: "Book Shop", City: "Lyon", Country: "FR"}, CreatedAt: time.Now().UTC()})
	if err != nil {
		c.t.Fatal(err)
	}
	var m map[string]any
	header := map[string]string{issuerhooks.Header: issuerhooks.Sign([]byte(IssuerWebhookSecret), body, time.Now())}
	resp := Call(c.t, c.hs["issuer-authorizations"], "POST", "/api/v1/issuer/authorizations", header, json.RawMessage(body))
	if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(resp.Body), &m) != nil || !strings.Contains(resp.Body, `"decision":"APPROVED"`) {
		c.t.Fatalf("fixture: authorization %s: %d %s", id, resp.StatusCode, resp.Body)
	}
}

// due returns when the payout worker expects its next message about
// payment id of company, read from the table as the worker reads it.
func (c fixtureCalls) due(res devserver.Resources, company, id string) string {
	c.t.Helper()
	p, err := moneystore.NewPayments(store.New(storetest.Client(c.t), res.TableName)).GetPayment(context.Background(), company, id)
	if err != nil || p.NextPollAt.IsZero() {
		c.t.Fatalf("fixture: payment %s: %+v, %v", id, p, err)
	}
	return timestamp.Format(p.NextPollAt)
}

// fixtureCalls calls the handlers for NewFixture, failing t on any
// unexpected answer.
type fixtureCalls struct {
	t  testing.TB
	hs map[string]function.HTTPHandler
}

// call sends a request to function fn with token (the admin key for the
// admin function), checks the status and returns the response's data.
func (c fixtureCalls) call(fn, token, method, path string, want int, body any) json.RawMessage {
	c.t.Helper()
	header := map[string]string{"Authorization": "Bearer " + token}
	if fn == "admin" {
		header = map[string]string{"X-Admin-Key": AdminAPIKey}
	}
	resp := Call(c.t, c.hs[fn], method, path, header, body)
	var out struct {
		Data json.RawMessage `json:"data"`
	}
	if resp.StatusCode != want || json.Unmarshal([]byte(resp.Body), &out) != nil {
		c.t.Fatalf("fixture: %s %s: %d %s, want %d", method, path, resp.StatusCode, resp.Body, want)
	}
	return out.Data
}

func (c fixtureCalls) decode(data json.RawMessage, v any) {
	c.t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		c.t.Fatalf("fixture: %v: %s", err, data)
	}
}

// str returns the string field key of data.
func (c fixtureCalls) str(data json.RawMessage, key string) string {
	c.t.Helper()
	var m map[string]any
	c.decode(data, &m)
	s, _ := m[key].(string)
	if s == "" {
		c.t.Fatalf("fixture: no %s in %s", key, data)
	}
	return s
}

// company creates an approved company with webhookURL (none when empty)
// and returns its id and credentials.
func (c fixtureCalls) company(name, webhookURL string) (id, clientID, clientKey string) {
	c.t.Helper()
	data := c.call("admin", "", "POST", "/api/v1/admin/companies", http.StatusCreated, map[string]string{"name": name})
	id, clientID, clientKey = c.str(data, "id"), c.str(data, "client_id"), c.str(data, "client_key")
	patch := map[string]string{"kyb_status": "APPROVED"}
	if webhookURL != "" {
		patch["webhook_url"] = webhookURL
	}
	c.call("admin", "", "PATCH", "/api/v1/admin/companies/"+id, http.StatusOK, patch)
	return id, clientID, clientKey
}

// token mints an access token from the credentials.
func (c fixtureCalls) token(clientID, clientKey string) string {
	c.t.Helper()
	resp := Call(c.t, c.hs["auth"], "POST", "/api/v1/auth/token", nil, map[string]string{"client_id": clientID, "client_key": clientKey})
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(resp.Body), &tok) != nil || tok.AccessToken == "" {
		c.t.Fatalf("fixture: mint token: %d %s", resp.StatusCode, resp.Body)
	}
	return tok.AccessToken
}

// acceptanceEvent returns the id of the event that reported payment's
// acceptance (its PENDING status update), from the delivery log.
func (c fixtureCalls) acceptanceEvent(token, payment string) string {
	c.t.Helper()
	var list []struct {
		ID      string `json:"id"`
		Payload struct {
			TransactionID string `json:"transaction_id"`
			Status        string `json:"status"`
		} `json:"payload"`
	}
	c.decode(c.call("webhooks", token, "GET", "/api/v1/webhooks/events?limit=100", http.StatusOK, nil), &list)
	for _, e := range list {
		if e.Payload.TransactionID == payment && e.Payload.Status == "PENDING" {
			return e.ID
		}
	}
	c.t.Fatalf("fixture: no PENDING event of payment %s in the delivery log", payment)
	return ""
}

// consume hands the messages to the queue consumer fn, as one batch, and
// fails t unless it handles all of them. fn reads through caches of its
// own, new with it.
func (c fixtureCalls) consume(tpl *samtemplate.Template, res devserver.Resources, fn string, bodies ...any) {
	c.t.Helper()
	h, err := app.SQSFunctions[fn](context.Background(), FunctionConfig(c.t, tpl, res, fn), base.NewCaches(time.Now))
	if err != nil {
		c.t.Fatalf("fixture: %s: %v", fn, err)
	}
	var e events.SQSEvent
	for i, b := range bodies {
		body, err := json.Marshal(b)
		if err != nil {
			c.t.Fatal(err)
		}
		e.Records = append(e.Records, events.SQSMessage{MessageId: fmt.Sprintf("fixture-%d", i), Body: string(body), EventSource: "aws:sqs"})
	}
	resp, err := h(devserver.LambdaContext(context.Background(), fn), e)
	if err != nil || len(resp.BatchItemFailures) != 0 {
		c.t.Fatalf("fixture: %s: %v, failures %+v", fn, err, resp.BatchItemFailures)
	}
}
