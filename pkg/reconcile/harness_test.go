package reconcile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"payments/pkg/app/apptest"
	"payments/pkg/cards"
	"payments/pkg/function"
	"payments/pkg/function/adminapi"
	"payments/pkg/function/cardsapi"
	"payments/pkg/function/issuerreceivers"
	"payments/pkg/function/services"
	"payments/pkg/providers"
	"payments/pkg/providers/issuer"
	"payments/pkg/providers/issuer/issuerdb"
	"payments/pkg/providers/issuer/issuersandbox"
	"payments/pkg/store/moneystore"
)

// cardEnv is the cards environment with a sandbox card network of the
// test's own: it asks for each authorization's decision as the card-network
// function does, in process, logs what it moves in the sandbox issuer's
// statements (as services.CardNetwork's does), and hands each notification
// to the card-worker's applier, in process, unless the test drops it (a
// notification we never received). The console runs the reconciliation on
// Clock.
type cardEnv struct {
	*apptest.CardsTestEnv
	Network *issuersandbox.Network
	Clock   *apptest.Clock
	// Console is the admin function on Clock.
	Console function.HTTPHandler
	mu      sync.Mutex
	drop    map[string]bool // notification types dropped
	dropped []issuer.Notification
	n       atomic.Int64
}

func newCardEnv(t *testing.T) *cardEnv {
	t.Helper()
	e := &cardEnv{CardsTestEnv: apptest.NewCardsTestEnv(t), Clock: apptest.NewClock(time.Now()), drop: map[string]bool{}}
	e.Cfg.IssuerWebhookSecret = apptest.IssuerTestSecret
	svc, err := cardsapi.Service(e.Cfg, e.DB, apptest.TestQueue(e.Cfg, e.Cfg.WebhooksQueueURL), e.Caches.Fees)
	if err != nil {
		t.Fatal(err)
	}
	auths, err := issuerreceivers.Authorizations(e.Cfg, svc)
	if err != nil {
		t.Fatal(err)
	}
	p, err := services.Providers(e.Cfg, e.DB, providers.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	worker, err := services.CardApplier(e.DB, p, apptest.TestQueue(e.Cfg, e.Cfg.WebhooksQueueURL), e.Caches.Fees)
	if err != nil {
		t.Fatal(err)
	}
	e.Network = issuersandbox.NewNetwork(auths.Ask, func(ctx context.Context, body []byte) error {
		no, err := issuer.ParseNotification(body)
		if err != nil {
			return err
		}
		e.mu.Lock()
		drop := e.drop[no.Type]
		if drop {
			e.dropped = append(e.dropped, no)
		}
		e.mu.Unlock()
		if drop {
			return nil
		}
		return worker.Apply(ctx, no)
	})
	e.Network.Statements = issuerdb.New(e.DB.DB)
	e.Network.Deadline = 30 * time.Second // DynamoDB Local is slow on a busy machine
	if e.Console, err = adminapi.NewWith(context.Background(), apptest.Recording(e.Cfg, "admin"), e.Caches, e.Clock.Now); err != nil {
		t.Fatal(err)
	}
	return e
}

// Drop makes the network's notifications of type typ get lost on their way
// to us, from now on.
func (e *cardEnv) Drop(typ string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.drop[typ] = true
}

// Dropped returns the notifications lost so far.
func (e *cardEnv) Dropped() []issuer.Notification {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]issuer.Notification(nil), e.dropped...)
}

// card issues a card holding usd dollars to a new company whose USD wallet
// keeps 20 dollars after the issuance; it returns the company and the card.
func (e *cardEnv) card(usd int) (companyID string, c cards.Card) {
	e.T.Helper()
	companyID, token, _, customerID := e.CardCompany(fmt.Sprint(usd+21), fmt.Sprintf("CM-%d", 8100+e.n.Add(1)))
	r := e.Call(e.Cards, token, "POST", "/cards", fmt.Sprintf(`{"customer_id":%q,"amount":%d}`, customerID, usd))
	if r.Status != 201 {
		e.T.Fatalf("issue: %s", r.Raw)
	}
	return companyID, e.ourCard(companyID, r.Str("data", "id"))
}

// ourCard reads our card.
func (e *cardEnv) ourCard(companyID, id string) cards.Card {
	e.T.Helper()
	c, err := moneystore.NewCards(e.DB).Card(context.Background(), companyID, id)
	if err != nil {
		e.T.Fatal(err)
	}
	return c
}

// authorize has the network authorize cents on c at a shop at home, and
// returns the authorization's id, approved.
func (e *cardEnv) authorize(c cards.Card, cents int64) string {
	e.T.Helper()
	a, err := e.Network.Authorize(context.Background(), "", c.IssuerCardID, c.ID, issuer.KindAuthorization, cents,
		issuer.Merchant{Name: "Corner Shop", City: "Austin", Country: "US"})
	if err != nil || a.Answer.Decision != issuer.Approved {
		e.T.Fatalf("authorize %d: %+v, %v", cents, a, err)
	}
	return a.Request.ID
}

// follow has the network report a settlement, reversal or refund (typ) of
// cents on authorization auth of c.
func (e *cardEnv) follow(typ string, c cards.Card, auth string, cents int64) {
	e.T.Helper()
	if _, err := e.Network.Follow(context.Background(), "", typ, c.IssuerCardID, c.ID,
		issuer.NetworkTransaction{AuthorizationID: auth, Amount: cents, Close: typ == issuer.NotifySettlement}, ""); err != nil {
		e.T.Fatalf("%s of %s: %v", typ, auth, err)
	}
}

// hold returns what our authorization auth of the company holds.
func (e *cardEnv) hold(companyID, auth string) cards.Transaction {
	e.T.Helper()
	tx, err := moneystore.NewCards(e.DB).NetworkTransaction(context.Background(), companyID, auth)
	if err != nil {
		e.T.Fatal(err)
	}
	return tx
}

// report is a report as the console answers it.
type report struct {
	ID            string `json:"id"`
	Provider      string `json:"provider"`
	Status        string `json:"status"`
	Matched       int    `json:"matched"`
	Recovered     int    `json:"recovered"`
	MismatchCount int    `json:"mismatch_count"`
	StartedAt     string `json:"started_at"`
	Window        struct {
		From string `json:"from"`
		To   string `json:"to"`
	} `json:"window"`
	Mismatches []struct {
		Kind           string       `json:"kind"`
		Subject        string       `json:"subject"`
		ProviderID     *string      `json:"provider_id"`
		CompanyID      *string      `json:"company_id"`
		Reference      *string      `json:"reference"`
		TransactionID  *string      `json:"transaction_id"`
		Currency       *string      `json:"currency"`
		ProviderAmount *json.Number `json:"provider_amount"`
		OurAmount      *json.Number `json:"our_amount"`
		ProviderStatus *string      `json:"provider_status"`
		OurStatus      *string      `json:"our_status"`
		Detail         string       `json:"detail"`
	} `json:"mismatches"`
	Balances []struct {
		Country        *string      `json:"country"`
		Currency       string       `json:"currency"`
		ProviderAmount json.Number  `json:"provider_amount"`
		OurAmount      *json.Number `json:"our_amount"`
	} `json:"balances"`
	Phase *string `json:"phase"`
	Error *string `json:"error"`
}

// reconcile runs the reconciliation of provider ("" for both) through the
// console, its clock moved past the issuer's grace, and returns its
// reports.
func reconcileNow(t *testing.T, console function.HTTPHandler, call func(function.HTTPHandler, string, string, string) apptest.Result, provider string) []report {
	t.Helper()
	body := ""
	if provider != "" {
		body = fmt.Sprintf(`{"provider":%q}`, provider)
	}
	r := call(console, "POST", "/admin/reconciliations", body)
	if r.Status != 201 {
		t.Fatalf("POST /admin/reconciliations %s: %d %s", body, r.Status, r.Raw)
	}
	var out struct {
		Data []report `json:"data"`
	}
	if err := json.Unmarshal([]byte(r.Raw), &out); err != nil {
		t.Fatal(err)
	}
	return out.Data
}

// console calls the console h with the admin key.
func (e *cardEnv) console(h function.HTTPHandler, method, target, body string) apptest.Result {
	e.T.Helper()
	return e.Call(h, "", method, target, body, adminapi.KeyHeader, apptest.AuthTestAdminKey)
}

// str is *s, or "" for nil.
func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
