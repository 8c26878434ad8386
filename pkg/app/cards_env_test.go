package app

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/cards"
	"payments/pkg/debts"
	"payments/pkg/function"
	"payments/pkg/function/cardsapi"
	"payments/pkg/queue"
	"payments/pkg/store"
	"payments/pkg/vault/vaulttest"
)

// cardsTestEnv is the customers environment plus the cards function and
// the sweeper, their card secrets sealed under a KMS stand-in.
type cardsTestEnv struct {
	*customersTestEnv
	kms   *vaulttest.FakeKMS
	cards function.HTTPHandler
}

func newCardsTestEnv(t *testing.T) *cardsTestEnv {
	t.Helper()
	e := &cardsTestEnv{customersTestEnv: newCustomersTestEnv(t), kms: vaulttest.NewFakeKMS(t)}
	e.cfg.CardKeyARN, e.cfg.KMSEndpoint, e.cfg.CardKey = vaulttest.KeyARN, e.kms.URL, ""
	e.cards = e.cardsFunction(t, e.cfg)
	return e
}

// cardsFunction builds the cards function on cfg.
func (e *cardsTestEnv) cardsFunction(t *testing.T, cfg function.Config) function.HTTPHandler {
	t.Helper()
	h, err := cardsapi.New(context.Background(), recording(cfg, "cards"))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// cardCompany creates an approved company with a USD wallet holding usd
// on its payout balance and a verified customer; it returns the company
// id, a token, the wallet id and the customer id.
func (e *cardsTestEnv) cardCompany(usd string, idNumber string) (companyID, token, walletID, customerID string) {
	e.t.Helper()
	companyID, token = e.approvedCompany()
	r := e.call(e.wallets, token, "POST", "/wallets", `{"currency":"USD","country":"United States","country_iso_code":"US","country_phone_code":"+1"}`)
	if r.status != 201 {
		e.t.Fatalf("USD wallet: %s", r.raw)
	}
	walletID = r.str("data", "id")
	if usd != "" {
		if r := e.admin("POST", "/admin/wallets/"+walletID+"/credit", `{"balance":"payout","amount":`+usd+`,"reference":"usd-opening"}`); r.status != 200 {
			e.t.Fatalf("credit: %s", r.raw)
		}
	}
	r = e.enroll(token, e.identity(strings.ToLower(idNumber)+"@example.com", idNumber))
	if r.status != 201 {
		e.t.Fatalf("enrol: %s", r.raw)
	}
	return companyID, token, walletID, r.str("data", "id")
}

// payout returns the USD wallet's payout_balance, as text.
func (e *cardsTestEnv) payout(token, walletID string) string {
	e.t.Helper()
	return fmt.Sprint(e.wallet(token, walletID)["payout_balance"])
}

// verifyCards checks the card, debt and wallet invariants of the company,
// and that each fee's debt is the debt its card transaction raised.
func (e *cardsTestEnv) verifyCards(companyID string) {
	e.t.Helper()
	e.verify(companyID)
	ctx := context.Background()
	if err := cards.VerifyLedger(ctx, store.NewCards(e.db), store.NewWallets(e.db), companyID); err != nil {
		e.t.Fatalf("card invariants: %v", err)
	}
	if err := debts.VerifyLedger(ctx, store.NewDebts(e.db), store.NewWallets(e.db), companyID); err != nil {
		e.t.Fatalf("debt invariants: %v", err)
	}
	txs, err := store.NewCards(e.db).Transactions(ctx, companyID)
	if err != nil {
		e.t.Fatal(err)
	}
	all, err := store.NewDebts(e.db).All(ctx, companyID)
	if err != nil {
		e.t.Fatal(err)
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
			e.t.Errorf("card transaction %s owes %d as debt %s: %+v", tx.ID, tx.Debt, tx.DebtID, d)
		}
		delete(raised, tx.DebtID)
	}
	for id, d := range raised {
		if d.CardID != "" {
			e.t.Errorf("debt %s was raised by no card transaction", id)
		}
	}
}

// failing returns cfg whose DynamoDB calls fail when fail says so of a
// request.
func failing(cfg function.Config, fail func(input any) bool) function.Config {
	return failingWith(cfg, fail, fmt.Errorf("injected failure"))
}

// logLines records the log lines of a test.
type logLines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logLines) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Split(l.buf.String(), "\n")
}

// captureLogs sends the default logger's lines, in JSON as in Lambda, to
// a recorder for the rest of the test.
func captureLogs(t *testing.T) *logLines {
	l := &logLines{}
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(prev) })
	return l
}

// issuerDown returns the cards function whose sandbox issuer cannot write:
// every call that changes a card at the issuer fails as unreachable.
func (e *cardsTestEnv) issuerDown(t *testing.T) function.HTTPHandler {
	return e.cardsFunction(t, failing(e.cfg, func(in any) bool {
		tx, ok := in.(*dynamodb.TransactWriteItemsInput)
		if !ok {
			return false
		}
		for _, it := range tx.TransactItems {
			if it.Put != nil {
				if pk, _ := it.Put.Item["PK"].(*types.AttributeValueMemberS); pk != nil && strings.HasPrefix(pk.Value, "SANDBOX#ISSUER#") {
					return true
				}
			}
		}
		return false
	}))
}

// testQueue is the queue at url, as the functions send to it.
func testQueue(cfg function.Config, url string) *queue.Publisher {
	return queue.NewPublisher(queue.NewClient(cfg.AWS, cfg.SQSEndpoint), url)
}

// testCards is the cards service of the cards function over db.
func testCards(cfg function.Config, db *store.DB) (*cards.Service, error) {
	return cardsapi.Service(cfg, db, testQueue(cfg, cfg.WebhooksQueueURL))
}

// testCardNetwork is the cards function's sandbox card network of svc.
func testCardNetwork(cfg function.Config, svc *cards.Service) (*cards.Sandbox, error) {
	return cardsapi.Network(cfg, svc, testQueue(cfg, cfg.IssuerEventsQueueURL))
}
