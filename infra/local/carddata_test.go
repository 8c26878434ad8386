package local_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"payments/infra/local/devserver"
	"payments/infra/local/localtest"
	"payments/infra/local/samples"
	"payments/pkg/app/apptest"
	"payments/pkg/function"
	"payments/pkg/store/storetest"
	"payments/pkg/waittest"
)

// TestProductionKeepsNoCardData is production mode's promise about card
// data (PCI DSS 3.3.1.2; docs/cards.md, "Card secrets"): on the local stack
// in production mode, as make run serves it with simulated Stripe Issuing,
// a company issues cards, funds one, has a purchase authorized on it,
// freezes and terminates another, is refused reveal=true (400
// REVEAL_SESSION_REQUIRED) and creates a reveal session (a Stripe
// ephemeral key, no number). Then the card numbers and CVCs simulated
// Stripe holds (read from it, as Stripe's API gives them to an account
// allowed to) appear nowhere: not in any attribute of any item of the
// whole DynamoDB table, not in any message any queue consumer was given
// nor any message left on a queue (dead-letter queues included), not in
// any log line of the functions or the server. Simulated Stripe's own
// state (its memory; make run's stripe-sim.json) is excluded: it is the
// remote system's, as Stripe's records are.
func TestProductionKeepsNoCardData(t *testing.T) {
	var logs apptest.LogLines
	previous := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(previous) })
	tpl := localtest.Template(t)
	res := localtest.Resources(t, tpl)
	res.Params["Mode"], res.Params["AdminCreditInProduction"] = function.ModeProduction, "true"
	var mu sync.Mutex
	var consumed []string // every SQS message a consumer was given, as JSON
	base, stop := localtest.StartServer(t, tpl, res, slog.New(slog.NewJSONHandler(&logs, nil)), func(srv *devserver.Server) {
		for i := range srv.Consumers {
			h := srv.Consumers[i].Handler
			srv.Consumers[i].Handler = func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
				b, _ := json.Marshal(ev)
				mu.Lock()
				consumed = append(consumed, string(b))
				mu.Unlock()
				return h(ctx, ev)
			}
		}
	})
	t.Cleanup(stop)
	issuerURL, issuerKey := res.Params["IssuerBaseUrl"], res.Secrets["ISSUER_API_KEY"]
	if issuerURL == "" || issuerKey == "" {
		t.Fatalf("no simulated Stripe Issuing: %q", issuerURL)
	}

	api := &httpClient{t: t, base: base + "/api/v1"}
	admin := map[string]string{"X-Admin-Key": localtest.AdminAPIKey}
	_, auth, _ := payingCompany(t, api, "Card Data Ltd", "", 1000)
	var usd struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	api.do("POST", "/wallets", auth, map[string]string{"currency": "USD", "country": "United States", "country_iso_code": "US", "country_phone_code": "+1"},
		http.StatusCreated, &usd)
	api.do("POST", "/admin/wallets/"+usd.Data.ID+"/credit", admin, map[string]any{"balance": "payout", "amount": 200, "reference": "usd"}, http.StatusOK, nil)
	docs := localtest.DocumentsURL(t)
	var customer struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	api.do("POST", "/customers/enroll", auth, map[string]string{
		"first_name": "Awa", "last_name": "Diallo", "email": "awa.carddata@example.com", "country": "Cameroon",
		"street": "12 Rue de la Joie", "city": "Douala", "state": "Littoral", "postal_code": "00237",
		"country_iso_code": "CM", "country_phone_code": "+237", "phone_number": "670000077",
		"identification_number": "CARDDATA-001", "id_document_type": "NIN", "date_of_birth": "1990-04-12",
		"id_document_front_url": docs + samples.FrontPath, "id_document_back_url": docs + samples.BackPath,
	}, http.StatusCreated, &customer)
	api.do("POST", "/admin/customers/"+customer.Data.ID+"/kyc", admin, map[string]string{"status": "VERIFIED"}, http.StatusOK, nil)

	type card struct {
		Data struct {
			ID     string  `json:"id"`
			Status string  `json:"status"`
			Number *string `json:"number"`
			CVV    *string `json:"cvv"`
			Raw    struct {
				ID string `json:"id"`
			} `json:"raw"`
		} `json:"data"`
	}
	var cardIDs, stripeIDs []string
	for range 3 {
		var c card
		api.do("POST", "/cards", auth, map[string]any{"customer_id": customer.Data.ID, "amount": 20}, http.StatusCreated, &c)
		if c.Data.Status != "ACTIVE" || c.Data.Number != nil || c.Data.CVV != nil {
			t.Fatalf("issued card %+v: want ACTIVE, number and cvv null", c.Data)
		}
		var read card
		api.do("GET", "/cards/"+c.Data.ID+"?includeRaw=true", auth, nil, http.StatusOK, &read)
		cardIDs, stripeIDs = append(cardIDs, c.Data.ID), append(stripeIDs, read.Data.Raw.ID)
	}
	api.do("POST", "/cards/"+cardIDs[0]+"/fund", auth, map[string]any{"amount": 5}, http.StatusOK, nil)
	api.do("PUT", "/cards/"+cardIDs[1]+"/freeze", auth, nil, http.StatusOK, nil)
	api.do("POST", "/cards/"+cardIDs[2]+"/terminate", auth, nil, http.StatusOK, nil)

	var refused struct {
		Code string `json:"code"`
	}
	api.do("GET", "/cards/"+cardIDs[0]+"?reveal=true", auth, nil, http.StatusBadRequest, &refused)
	if refused.Code != "REVEAL_SESSION_REQUIRED" {
		t.Errorf("reveal=true in production mode: code %q, want REVEAL_SESSION_REQUIRED", refused.Code)
	}
	var session struct {
		Data map[string]any `json:"data"`
	}
	api.do("POST", "/cards/"+cardIDs[0]+"/reveal-sessions", auth, map[string]string{"nonce": "ephkn_pub_carddata"}, http.StatusCreated, &session)
	if d := session.Data; d["issuer"] != "stripe" || d["stripe_card_id"] != stripeIDs[0] || !strings.HasPrefix(fmt.Sprint(d["ephemeral_key_secret"]), "ek_test_") ||
		d["expires_at"] == nil || d["number"] != nil || d["cvv"] != nil {
		t.Errorf("reveal session %v", d)
	}
	var reveals struct {
		Data []map[string]any `json:"data"`
	}
	api.do("GET", "/cards/"+cardIDs[0]+"/reveals", auth, nil, http.StatusOK, &reveals)
	if len(reveals.Data) != 1 {
		t.Errorf("%d reveal records, want 1 (the session)", len(reveals.Data))
	}

	// A purchase: Stripe asks stripe-webhooks, which decides on our ledger;
	// its events reach the card-worker through the issuer-events queue.
	stripe := func(method, path string, form url.Values) map[string]any {
		t.Helper()
		req, _ := http.NewRequest(method, issuerURL+path, strings.NewReader(form.Encode()))
		req.SetBasicAuth(issuerKey, "")
		if method == http.MethodPost {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var out map[string]any
		if err := json.Unmarshal(b, &out); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
		}
		return out
	}
	auth12 := stripe("POST", "/v1/test_helpers/issuing/authorizations", url.Values{"card": {stripeIDs[0]}, "amount": {"1250"},
		"currency": {"usd"}, "merchant_data[name]": {"Book Shop"}, "merchant_data[city]": {"Austin"}, "merchant_data[country]": {"US"}})
	if auth12["approved"] != true {
		t.Fatalf("the purchase was not approved: %v; logs:\n%s", auth12["request_history"], strings.Join(logs.Lines(), "\n"))
	}
	waittest.Until(t, 30*time.Second, "the purchase's authorization recorded on the card", func() bool {
		var txs struct {
			Data []map[string]any `json:"data"`
		}
		api.do("GET", "/cards/"+cardIDs[0]+"/transactions?type=AUTHORIZATION", auth, nil, http.StatusOK, &txs)
		return len(txs.Data) == 1
	})

	// What simulated Stripe holds of each card: its number and CVC.
	var secrets []string
	for _, id := range stripeIDs {
		c := stripe("GET", "/v1/issuing/cards/"+id+"?expand[]=number&expand[]=cvc", nil)
		number, cvc := fmt.Sprint(c["number"]), fmt.Sprint(c["cvc"])
		if !regexp.MustCompile(`^\d{16}$`).MatchString(number) || !regexp.MustCompile(`^\d{3}$`).MatchString(cvc) {
			t.Fatalf("simulated Stripe's card %s: number %q, cvc %q", id, number, cvc)
		}
		secrets = append(secrets, number, cvc)
	}
	// A CVC is 3 digits, which any timestamp or id may hold by chance: it
	// is looked for as a value of its own (a JSON string or number, an
	// attribute), the number anywhere.
	leaks := func(where, text string) {
		t.Helper()
		for i, s := range secrets {
			pattern := regexp.QuoteMeta(s)
			if i%2 == 1 {
				pattern = `(^|[":= ])` + pattern + `($|[",} ])`
			}
			if loc := regexp.MustCompile(pattern).FindStringIndex(text); loc != nil {
				from, to := max(0, loc[0]-80), min(len(text), loc[1]+80)
				t.Errorf("%s holds a card's %s: …%s…", where, map[bool]string{true: "CVC", false: "number"}[i%2 == 1], text[from:to])
			}
		}
	}

	ctx := context.Background()
	db := storetest.Client(t)
	items := 0
	var table strings.Builder
	p := dynamodb.NewScanPaginator(db, &dynamodb.ScanInput{TableName: aws.String(res.TableName), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			items++
			text := dumpItem(&types.AttributeValueMemberM{Value: it})
			leaks("table item "+dumpItem(it["SK"]), text)
			table.WriteString(text)
		}
	}
	for i := 0; i < len(secrets); i += 2 { // the scan sees the cards: their last 4 digits are kept
		if last4 := secrets[i][12:]; !strings.Contains(table.String(), strconv.Quote(last4)) {
			t.Errorf("no item of the %d scanned holds last4 %s: the scan missed the cards", items, last4)
		}
	}
	for _, c := range cardIDs {
		var read card
		api.do("GET", "/cards/"+c+"?sync=false", auth, nil, http.StatusOK, &read)
		if read.Data.Number != nil || read.Data.CVV != nil {
			t.Errorf("card %s answers number %v, cvv %v: nothing is sealed in production mode", c, read.Data.Number, read.Data.CVV)
		}
	}

	mu.Lock()
	all := strings.Join(consumed, "\n")
	n := len(consumed)
	mu.Unlock()
	if n == 0 {
		t.Error("no queue consumer was given a message")
	}
	leaks("a message given to a queue consumer", all)
	client := localtest.SQSClient(t)
	for name, q := range res.QueueURLs {
		out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q), MaxNumberOfMessages: 10,
			VisibilityTimeout: 0, MessageAttributeNames: []string{"All"}})
		if err != nil {
			t.Fatalf("queue %s: %v", name, err)
		}
		for _, m := range out.Messages {
			b, _ := json.Marshal(m)
			leaks("a message on queue "+name, string(b))
		}
	}
	leaks("the logs", strings.Join(logs.Lines(), "\n"))
}

// dumpItem is a DynamoDB value as text: each string, number and binary
// (its bytes as they are: a sealed value is binary) quoted, in maps and
// lists.
func dumpItem(v types.AttributeValue) string {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return strconv.Quote(v.Value)
	case *types.AttributeValueMemberN:
		return `"` + v.Value + `"`
	case *types.AttributeValueMemberB:
		return strconv.Quote(string(v.Value))
	case *types.AttributeValueMemberSS:
		return `"` + strings.Join(v.Value, `","`) + `"`
	case *types.AttributeValueMemberNS:
		return `"` + strings.Join(v.Value, `","`) + `"`
	case *types.AttributeValueMemberM:
		var b strings.Builder
		for k, e := range v.Value {
			fmt.Fprintf(&b, "%q: %s, ", k, dumpItem(e))
		}
		return "{" + b.String() + "}"
	case *types.AttributeValueMemberL:
		parts := make([]string, len(v.Value))
		for i, e := range v.Value {
			parts[i] = dumpItem(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return ""
}
