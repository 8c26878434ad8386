package apptest

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/cards"
	"payments/pkg/debts"
	"payments/pkg/events"
	"payments/pkg/function"
	"payments/pkg/function/cardnetwork"
	"payments/pkg/function/cardsapi"
	"payments/pkg/ids"
	"payments/pkg/page"
	"payments/pkg/queue"
	"payments/pkg/store"
	"payments/pkg/store/moneystore"
	"payments/pkg/store/schema"
	"payments/pkg/timestamp"
	"payments/pkg/timestamp/timestamptest"
	"payments/pkg/vault/vaulttest"
	"payments/pkg/webhooks"
)

// CardsTestEnv is the customers environment plus the cards function and
// the sweeper, their card secrets sealed under a KMS stand-in.
type CardsTestEnv struct {
	*CustomersTestEnv
	kms   *vaulttest.FakeKMS
	Cards function.HTTPHandler
}

// NewCardsTestEnv returns a CardsTestEnv over a fresh table and queues.
func NewCardsTestEnv(t *testing.T) *CardsTestEnv {
	t.Helper()
	e := &CardsTestEnv{CustomersTestEnv: NewCustomersTestEnv(t)}
	e.kms = e.KMS // the stand-in of the webhook key, which holds the card key too
	e.Cfg.CardKeyARN, e.Cfg.KMSEndpoint, e.Cfg.CardKey = vaulttest.KeyARN, e.kms.URL, ""
	e.Cards = e.CardsFunction(t, e.Cfg)
	return e
}

// CardsFunction builds the cards function on cfg.
func (e *CardsTestEnv) CardsFunction(t *testing.T, cfg function.Config) function.HTTPHandler {
	t.Helper()
	h, err := cardsapi.NewWith(context.Background(), Recording(cfg, "cards"), e.Caches)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// CardNetworkFunction builds the card-network function on cfg, which must
// hold the issuer's secret and the issuer-events queue.
func (e *CardsTestEnv) CardNetworkFunction(t *testing.T, cfg function.Config) function.HTTPHandler {
	t.Helper()
	h, err := cardnetwork.NewWith(context.Background(), Recording(cfg, "card-network"), e.Caches)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// CardCompany creates an approved company with a USD wallet holding usd
// on its payout balance and a verified customer; it returns the company
// id, a token, the wallet id and the customer id.
func (e *CardsTestEnv) CardCompany(usd string, idNumber string) (companyID, token, walletID, customerID string) {
	e.T.Helper()
	companyID, token = e.ApprovedCompany()
	r := e.Call(e.Wallets, token, "POST", "/wallets", `{"currency":"USD","country":"United States","country_iso_code":"US","country_phone_code":"+1"}`)
	if r.Status != 201 {
		e.T.Fatalf("USD wallet: %s", r.Raw)
	}
	walletID = r.Str("data", "id")
	if usd != "" {
		if r := e.Admin("POST", "/admin/wallets/"+walletID+"/credit", `{"balance":"payout","amount":`+usd+`,"reference":"usd-opening"}`); r.Status != 200 {
			e.T.Fatalf("credit: %s", r.Raw)
		}
	}
	r = e.Enroll(token, e.Identity(strings.ToLower(idNumber)+"@example.com", idNumber))
	if r.Status != 201 {
		e.T.Fatalf("enrol: %s", r.Raw)
	}
	return companyID, token, walletID, r.Str("data", "id")
}

// Payout returns the USD wallet's payout_balance, as text.
func (e *CardsTestEnv) Payout(token, walletID string) string {
	e.T.Helper()
	return fmt.Sprint(e.Wallet(token, walletID)["payout_balance"])
}

// VerifyCards checks the card, debt, wallet and event-sequence invariants
// of the company, and that each fee's debt is the debt its card transaction
// raised.
func (e *CardsTestEnv) VerifyCards(companyID string) {
	e.T.Helper()
	e.Verify(companyID)
	ctx := context.Background()
	if err := cards.VerifyLedger(ctx, moneystore.NewCards(e.DB), moneystore.NewWallets(e.DB), companyID); err != nil {
		e.T.Fatalf("card invariants: %v", err)
	}
	if err := debts.VerifyLedger(ctx, moneystore.NewDebts(e.DB), moneystore.NewWallets(e.DB), companyID); err != nil {
		e.T.Fatalf("debt invariants: %v", err)
	}
	var evs []events.Event
	for p := (page.Request{Page: 1, Limit: 100}); ; {
		res, err := store.NewWebhooks(e.DB).Events(ctx, companyID, webhooks.EventQuery{}, p)
		if err != nil {
			e.T.Fatal(err)
		}
		evs = append(evs, res.Items...)
		if res.Next == "" {
			break
		}
		p = p.Following(res.Next, res.Total)
	}
	if err := events.VerifySequences(evs); err != nil {
		e.T.Fatalf("event invariants: %v", err)
	}
	txs, err := moneystore.NewCards(e.DB).Transactions(ctx, companyID)
	if err != nil {
		e.T.Fatal(err)
	}
	all, err := moneystore.NewDebts(e.DB).All(ctx, companyID)
	if err != nil {
		e.T.Fatal(err)
	}
	raised := map[string]debts.Debt{}
	for _, d := range all {
		raised[d.ID] = d
	}
	for _, tx := range txs {
		if tx.DebtID == "" {
			continue
		}
		if d, ok := raised[tx.DebtID]; !ok || d.Amount != tx.Debt || d.TransactionID != tx.ID {
			e.T.Errorf("card transaction %s owes %d as debt %s: %+v", tx.ID, tx.Debt, tx.DebtID, d)
		}
		delete(raised, tx.DebtID)
	}
	for id, d := range raised {
		if d.CardID != "" {
			e.T.Errorf("debt %s was raised by no card transaction", id)
		}
	}
}

// OpenHolds gives card cardID of the company n open authorizations of
// amount cents each, at a merchant at home, quickly: the first is recorded
// by the store as an approval is (with the lookup of its network id), the
// others are copies of its two items under ids of their own, written by
// BatchWriteItem, and the card's holds then take their sum in one
// conditional update. The card must be ACTIVE with n × amount available.
// It returns the authorizations, oldest first.
func (e *CardsTestEnv) OpenHolds(companyID, cardID string, n int, amount int64) []cards.Transaction {
	e.T.Helper()
	ctx := context.Background()
	cs := moneystore.NewCards(e.DB)
	card, err := cs.Card(ctx, companyID, cardID)
	if err != nil {
		e.T.Fatal(err)
	}
	now := timestamp.Of(time.Now())
	first := cards.Transaction{
		ID: ids.NewV7(now), CompanyID: companyID, CardID: cardID, CustomerID: card.CustomerID,
		Type: cards.TxAuthorization, Kind: cards.KindAuthorization, Status: cards.TxPending, Amount: amount, Hold: amount,
		Merchant: &cards.Merchant{Name: "Shop", City: "Austin", Country: cards.CardCountry}, Description: "Shop, Austin",
		CreatedAt: now,
	}
	first.IssuerTxID = "ntx_" + first.ID
	if err := cs.Record(ctx, cards.Record{EventID: first.IssuerTxID, Card: card, HeldDelta: amount, Approve: true,
		Txs: []cards.Transaction{first}, Now: now}); err != nil {
		e.T.Fatalf("record the first hold: %v", err)
	}
	item := func(sk string) map[string]types.AttributeValue {
		out, err := e.DB.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(e.DB.Table), ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{"PK": str(schema.CompanyPK(companyID)), "SK": str(sk)}})
		if err != nil || out.Item == nil {
			e.T.Fatalf("read %s: %v", sk, err)
		}
		return out.Item
	}
	tx, ref := item(schema.CardTxSK(first.ID)), item(schema.IssuerTxSK(first.IssuerTxID))
	gsi2, _ := tx["GSI2SK"].(*types.AttributeValueMemberS)
	if gsi2 == nil {
		e.T.Fatalf("the first hold is not in the open hold index: %v", tx)
	}
	holds := []cards.Transaction{first}
	var items []map[string]types.AttributeValue
	for range n - 1 {
		h := first
		h.ID = ids.NewV7(now)
		h.IssuerTxID = "ntx_" + h.ID
		c := maps.Clone(tx)
		c["SK"], c["GSI1SK"], c["GSI3SK"] = str(schema.CardTxSK(h.ID)), str(schema.CardTxSK(h.ID)), str(schema.CardTxSK(h.ID))
		c["GSI2SK"] = str(strings.Replace(gsi2.Value, first.ID, h.ID, 1))
		c["id"], c["issuer_tx_id"] = str(h.ID), str(h.IssuerTxID)
		r := maps.Clone(ref)
		r["SK"], r["of"] = str(schema.IssuerTxSK(h.IssuerTxID)), str(h.ID)
		items = append(items, c, r)
		holds = append(holds, h)
	}
	if err := e.DB.PutAll(ctx, "seed open holds", items); err != nil {
		e.T.Fatal(err)
	}
	more := strconv.FormatInt(int64(n-1)*amount, 10)
	_, err = e.DB.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(e.DB.Table),
		Key:                       map[string]types.AttributeValue{"PK": str(schema.CompanyPK(companyID)), "SK": str(schema.CardSK(cardID))},
		UpdateExpression:          aws.String("SET held = held + :more, available = available - :more"),
		ConditionExpression:       aws.String("available >= :more"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":more": &types.AttributeValueMemberN{Value: more}},
	})
	if err != nil {
		e.T.Fatalf("hold %s more on card %s: %v", more, cardID, err)
	}
	return holds
}

// str is s as a DynamoDB string.
func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

// LogLines records the log lines of a test.
type LogLines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write adds p to the captured log.
func (l *LogLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// Lines returns the lines logged so far.
func (l *LogLines) Lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Split(l.buf.String(), "\n")
}

// CaptureLogs sends the default logger's lines, in JSON as in Lambda, to
// a recorder for the rest of the test.
func CaptureLogs(t *testing.T) *LogLines {
	l := &LogLines{}
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(prev) })
	return l
}

// IssuerDown returns the cards function whose sandbox issuer cannot write:
// every call that changes a card at the issuer fails as unreachable.
func (e *CardsTestEnv) IssuerDown(t *testing.T) function.HTTPHandler {
	return e.CardsFunction(t, IssuerDownConfig(e.Cfg))
}

// IssuerDownConfig returns cfg on which the sandbox issuer cannot be
// reached: every write it makes fails.
func IssuerDownConfig(cfg function.Config) function.Config {
	return Failing(cfg, issuerWrite)
}

// IssuerSlowConfig returns cfg on which the sandbox issuer is slow: no
// write it makes answers within the caller's time.
func IssuerSlowConfig(cfg function.Config) function.Config {
	return SlowWith(cfg, issuerWrite)
}

// issuerWrite reports whether an AWS call's input is a write of the
// sandbox issuer (its own items, SANDBOX#ISSUER#…).
func issuerWrite(in any) bool {
	tx, ok := in.(*dynamodb.TransactWriteItemsInput)
	if !ok {
		return false
	}
	for _, it := range tx.TransactItems {
		if it.Put != nil {
			if pk, _ := it.Put.Item["PK"].(*types.AttributeValueMemberS); pk != nil && strings.HasPrefix(pk.Value, schema.SandboxIssuerPrefix) {
				return true
			}
		}
	}
	return false
}

// TestQueue is the queue at url, as the functions send to it.
func TestQueue(cfg function.Config, url string) *queue.Publisher {
	return queue.NewPublisher(queue.NewClient(cfg.AWS, cfg.SQSEndpoint), url)
}

// CheckTimestamps reads the company's delivery log (its latest 100 events,
// their payloads, deliveries and attempts) and fails the test on any
// timestamp not written as timestamp.Format writes it.
func (e *CardsTestEnv) CheckTimestamps(token string) {
	e.T.Helper()
	r := e.Call(e.Webhooks, token, "GET", "/webhooks/events?limit=100", "")
	if r.Status != 200 || len(r.Items()) == 0 {
		e.T.Fatalf("the delivery log: %d %s", r.Status, r.Raw)
	}
	timestamptest.Check(e.T, "the delivery log", []byte(r.Raw))
}

// EndLease ends the lease of the company's key, as time would.
func (e *CardsTestEnv) EndLease(companyID, key string) {
	e.T.Helper()
	_, err := e.DB.Client.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
		TableName: aws.String(e.DB.Table),
		Key: map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: schema.CompanyPK(companyID)},
			"SK": &types.AttributeValueMemberS{Value: schema.IdempotencySK(key)},
		},
		UpdateExpression:          aws.String("SET lease_until = :past"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":past": &types.AttributeValueMemberN{Value: "0"}},
	})
	if err != nil {
		e.T.Fatal(err)
	}
}
