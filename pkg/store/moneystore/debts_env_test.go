package moneystore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/google/uuid"

	"payments/pkg/debts"
	"payments/pkg/events"
	"payments/pkg/ids"
	"payments/pkg/page"
	"payments/pkg/store"
	"payments/pkg/store/moneystore"
	"payments/pkg/store/schema"
	"payments/pkg/wallets"
)

// debtsEnv is a company with a USD wallet and an XAF wallet, and the debts
// it owes.
type debtsEnv struct {
	t        *testing.T
	db       *store.DB
	ws       *moneystore.Wallets
	company  string
	usd, xaf wallets.Wallet
}

func newDebtsEnv(t *testing.T, db *store.DB) *debtsEnv {
	t.Helper()
	e := &debtsEnv{t: t, db: db, ws: moneystore.NewWallets(db), company: uuid.NewString()}
	e.usd, e.xaf = newWallet(e.company, "USD", "US"), newWallet(e.company, "XAF", "CM")
	for _, w := range []wallets.Wallet{e.usd, e.xaf} {
		if err := e.ws.CreateWallet(context.Background(), w); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// debt records a pending debt of amount cents, created at.
func (e *debtsEnv) debt(amount int64, at time.Time) debts.Debt {
	e.t.Helper()
	d := debts.Debt{
		ID: ids.NewV7(at), CompanyID: e.company, FeeType: debts.FeePaymentFailure,
		TransactionID: uuid.NewString(), CardID: uuid.NewString(), CustomerID: uuid.NewString(),
		Amount: amount, Remaining: amount, Status: debts.Pending, CreatedAt: at,
	}
	if err := moneystore.AddDebtForTest(context.Background(), e.db, d); err != nil {
		e.t.Fatalf("add debt: %v", err)
	}
	return d
}

// credit credits amount cents to the payout balance of w, as the
// operator console does, with a reference when ref is true (the claim
// takes an item of the transaction), and returns what ApplyChange does.
func (e *debtsEnv) credit(s *moneystore.Wallets, w wallets.Wallet, amount int64, ref bool) (wallets.Wallet, wallets.Transaction, error) {
	now := time.Now().UTC().Truncate(time.Millisecond)
	entry := wallets.Transaction{
		ID: ids.NewV7(now), CompanyID: w.CompanyID, WalletID: w.ID,
		Amount: amount, AmountWithFee: amount, NetAmount: amount, Currency: w.Currency,
		Status: wallets.StatusSuccess, Type: wallets.TypeFund, Reference: "credit",
		Balance: wallets.Payout, Delta: amount, CreatedAt: now, CompletedAt: &now,
	}
	c := wallets.Change{CompanyID: w.CompanyID, WalletID: w.ID, Adjust: wallets.Adjustment{Payout: amount}, Entry: entry, Now: now}
	if ref {
		c.Reference = uuid.NewString()
	}
	return s.ApplyChange(context.Background(), c)
}

// stored returns the company's debts by id, from the list.
func (e *debtsEnv) stored() map[string]debts.Debt {
	e.t.Helper()
	page, err := moneystore.NewDebts(e.db).List(context.Background(), e.company, "", page.Request{Page: 1, Limit: 100})
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]debts.Debt{}
	for _, d := range page.Items {
		out[d.ID] = d
	}
	return out
}

// marker returns the remaining amount of debt id's pending marker, and
// false when it has none.
func (e *debtsEnv) marker(id string) (int64, bool) {
	e.t.Helper()
	out, err := e.db.Client.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(e.db.Table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: schema.CompanyPK(e.company)},
			"SK": &types.AttributeValueMemberS{Value: schema.PendingDebtSK(id)},
		},
	})
	if err != nil {
		e.t.Fatal(err)
	}
	if out.Item == nil {
		return 0, false
	}
	var n int64
	fmt.Sscan(out.Item["remaining"].(*types.AttributeValueMemberN).Value, &n)
	return n, true
}

// recoveries returns the data of the company's debt.recovered events,
// after checking that the events about each debt (made without an event
// of their own) carry 1, 2… once each.
func (e *debtsEnv) recoveries() []events.DebtRecoveredData {
	e.t.Helper()
	evs, err := store.NewOutbox(e.db).Unpublished(context.Background(), time.Now().Add(time.Hour), 1000)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []events.DebtRecoveredData
	sequences := map[string][]int64{}
	for _, ev := range evs {
		if ev.CompanyID != e.company || ev.Kind != events.DebtRecovered {
			continue
		}
		var body struct {
			Sequence int64
			Data     events.DebtRecoveredData
		}
		if err := json.Unmarshal(ev.Body, &body); err != nil {
			e.t.Fatal(err)
		}
		if ev.Object != body.Data.DebtID || body.Sequence != ev.Sequence {
			e.t.Errorf("debt.recovered about %q, sequence %d, body %s", ev.Object, ev.Sequence, ev.Body)
		}
		sequences[ev.Object] = append(sequences[ev.Object], ev.Sequence)
		out = append(out, body.Data)
	}
	for debt, got := range sequences {
		slices.Sort(got)
		for i, n := range got {
			if n != int64(i+1) {
				e.t.Errorf("the events about debt %s carry %v, want 1…%d", debt, got, len(got))
				break
			}
		}
	}
	return out
}

// fees returns the company's FEE ledger entries by the debt they pay.
func (e *debtsEnv) fees() map[string][]wallets.Transaction {
	e.t.Helper()
	all, err := e.ws.AllTransactions(context.Background(), e.company)
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string][]wallets.Transaction{}
	for _, tx := range all {
		if tx.Type == wallets.TypeFee {
			out[tx.Reference] = append(out[tx.Reference], tx)
		}
	}
	return out
}

func (e *debtsEnv) verify() {
	e.t.Helper()
	if err := wallets.VerifyLedger(context.Background(), e.ws, e.company); err != nil {
		e.t.Fatal(err)
	}
}

// calls records the DynamoDB operations made through a DB.
type calls struct {
	mu  sync.Mutex
	ops []any // the operations' inputs
}

func (c *calls) record(db *store.DB) *store.DB {
	rec := func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("record",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				c.mu.Lock()
				c.ops = append(c.ops, in.Parameters)
				c.mu.Unlock()
				return next.HandleInitialize(ctx, in)
			}), middleware.After)
	}
	client := dynamodb.New(db.Client.Options(), func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, rec) })
	return store.New(client, db.Table)
}

func idsOf(ds []debts.Debt) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.ID
	}
	return out
}
