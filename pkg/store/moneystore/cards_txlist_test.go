package moneystore_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"payments/pkg/cards"
	"payments/pkg/ids"
	"payments/pkg/page"
	"payments/pkg/store/moneystore"
	"payments/pkg/store/storetest"
)

// txListFixture is a company's card transactions, one an hour from at(0):
// alice's cards a1 and a2, bob's b1; and another company's transactions on
// the same card and customer ids.
type txListFixture struct {
	s                 *moneystore.Cards
	company, other    string
	alice, bob        string
	a1, a2, b1        string
	txs               []cards.Transaction // in creation order
	base              time.Time
	otherTx, otherTx2 string
}

func (f txListFixture) at(i int) time.Time { return f.base.Add(time.Duration(i) * time.Hour) }

func newTxListFixture(t *testing.T) txListFixture {
	t.Helper()
	db := storetest.NewDB(t)
	f := txListFixture{
		s: moneystore.NewCards(db), company: uuid.NewString(), other: uuid.NewString(),
		alice: uuid.NewString(), bob: uuid.NewString(),
		a1: uuid.NewString(), a2: uuid.NewString(), b1: uuid.NewString(),
		base: time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC),
	}
	rows := []struct {
		card   string
		typ    cards.TxType
		status cards.TxStatus
	}{
		{f.a1, cards.TxFunding, cards.TxSuccess},       // 0
		{f.a2, cards.TxFunding, cards.TxSuccess},       // 1
		{f.b1, cards.TxFunding, cards.TxSuccess},       // 2
		{f.a1, cards.TxAuthorization, cards.TxPending}, // 3
		{f.a1, cards.TxWithdrawal, cards.TxFailed},     // 4
		{f.a2, cards.TxFunding, cards.TxProcessing},    // 5
		{f.b1, cards.TxWithdrawal, cards.TxSuccess},    // 6
		{f.a1, cards.TxSettlement, cards.TxSuccess},    // 7
		{f.a2, cards.TxTermination, cards.TxSuccess},   // 8
	}
	for i, r := range rows {
		customer := f.alice
		if r.card == f.b1 {
			customer = f.bob
		}
		f.txs = append(f.txs, cardTx(f.company, r.card, customer, r.typ, r.status, f.at(i)))
	}
	// Another company whose ids collide with ours.
	others := []cards.Transaction{
		cardTx(f.other, f.a1, f.alice, cards.TxFunding, cards.TxSuccess, f.at(2)),
		cardTx(f.other, f.a1, f.alice, cards.TxFunding, cards.TxSuccess, f.at(6)),
	}
	f.otherTx, f.otherTx2 = others[0].ID, others[1].ID
	if err := moneystore.PutCardTransactionsForTest(context.Background(), db, append(others, f.txs...)); err != nil {
		t.Fatal(err)
	}
	return f
}

// cardTx returns a card transaction of 10.00 USD made at at.
func cardTx(company, card, customer string, typ cards.TxType, status cards.TxStatus, at time.Time) cards.Transaction {
	return cards.Transaction{
		ID: ids.NewV7(at), CompanyID: company, CardID: card, CustomerID: customer,
		Type: typ, Status: status, Amount: 1000, CreatedAt: at,
	}
}

// TestCardTransactionLists: a card's and a customer's transactions, newest
// first, with each filter, the dates from inclusive and to exclusive, and
// nothing of another company.
func TestCardTransactionLists(t *testing.T) {
	ctx := context.Background()
	f := newTxListFixture(t)
	tests := []struct {
		name   string
		card   string // else customer
		who    string
		filter cards.TxFilter
		want   []int
	}{
		{"card a1", f.a1, "", cards.TxFilter{}, []int{7, 4, 3, 0}},
		{"card a2", f.a2, "", cards.TxFilter{}, []int{8, 5, 1}},
		{"card a1 settlements", f.a1, "", cards.TxFilter{Type: cards.TxSettlement}, []int{7}},
		{"card a1 successes", f.a1, "", cards.TxFilter{Status: cards.TxSuccess}, []int{7, 0}},
		{"card a1 from at(3)", f.a1, "", cards.TxFilter{From: f.at(3)}, []int{7, 4, 3}},
		{"card a1 to at(4)", f.a1, "", cards.TxFilter{To: f.at(4)}, []int{3, 0}},
		{"unknown card", uuid.NewString(), "", cards.TxFilter{}, nil},
		{"alice", "", f.alice, cards.TxFilter{}, []int{8, 7, 5, 4, 3, 1, 0}},
		{"bob", "", f.bob, cards.TxFilter{}, []int{6, 2}},
		{"alice fundings", "", f.alice, cards.TxFilter{Type: cards.TxFunding}, []int{5, 1, 0}},
		{"alice successful fundings", "", f.alice, cards.TxFilter{Type: cards.TxFunding, Status: cards.TxSuccess}, []int{1, 0}},
		{"alice pending", "", f.alice, cards.TxFilter{Status: cards.TxPending}, []int{3}},
		{"alice refunds", "", f.alice, cards.TxFilter{Type: cards.TxRefund}, nil},
		{"alice from at(3), inclusive", "", f.alice, cards.TxFilter{From: f.at(3)}, []int{8, 7, 5, 4, 3}},
		{"alice to at(3), exclusive", "", f.alice, cards.TxFilter{To: f.at(3)}, []int{1, 0}},
		{"alice from at(1) to at(5)", "", f.alice, cards.TxFilter{From: f.at(1), To: f.at(5)}, []int{4, 3, 1}},
		{"alice a millisecond after at(1)", "", f.alice, cards.TxFilter{From: f.at(1).Add(time.Millisecond), To: f.at(5).Add(time.Millisecond)}, []int{5, 4, 3}},
		{"alice the next day", "", f.alice, cards.TxFilter{From: f.base.AddDate(0, 0, 1)}, nil},
		{"unknown customer", "", uuid.NewString(), cards.TxFilter{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := page.Request{Page: 1, Limit: 100}
			var res page.Result[cards.Transaction]
			var err error
			if tt.card != "" {
				res, err = f.s.CardTransactions(ctx, f.company, tt.card, tt.filter, p)
			} else {
				res, err = f.s.CustomerTransactions(ctx, f.company, tt.who, tt.filter, p)
			}
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, i := range tt.want {
				want = append(want, f.txs[i].ID)
			}
			if got := txIDs(res.Items); !slices.Equal(got, want) || res.Total != len(want) || res.Next != "" {
				t.Fatalf("got %v (total %d, next %q), want %v", got, res.Total, res.Next, want)
			}
		})
	}

	// The other company sees only its own, on the same ids.
	for name, read := range map[string]func() (page.Result[cards.Transaction], error){
		"card": func() (page.Result[cards.Transaction], error) {
			return f.s.CardTransactions(ctx, f.other, f.a1, cards.TxFilter{}, page.Request{Page: 1, Limit: 100})
		},
		"customer": func() (page.Result[cards.Transaction], error) {
			return f.s.CustomerTransactions(ctx, f.other, f.alice, cards.TxFilter{}, page.Request{Page: 1, Limit: 100})
		},
	} {
		res, err := read()
		if got := txIDs(res.Items); err != nil || !slices.Equal(got, []string{f.otherTx2, f.otherTx}) {
			t.Errorf("the other company's %s list: %v, %v", name, got, err)
		}
	}
}

// TestCardTransactionPages walks a customer's list by cursor and by page
// number, and refuses a cursor outside the list's dates.
func TestCardTransactionPages(t *testing.T) {
	ctx := context.Background()
	f := newTxListFixture(t)
	want := []string{f.txs[8].ID, f.txs[7].ID, f.txs[5].ID, f.txs[4].ID, f.txs[3].ID, f.txs[1].ID, f.txs[0].ID}
	var got []string
	p := page.Request{Page: 1, Limit: 3}
	for range len(want) {
		res, err := f.s.CustomerTransactions(ctx, f.company, f.alice, cards.TxFilter{}, p)
		if err != nil || res.Total != len(want) {
			t.Fatalf("page %d: total %d, %v", p.Page, res.Total, err)
		}
		got = append(got, txIDs(res.Items)...)
		if res.Next == "" {
			break
		}
		p = p.Following(res.Next, res.Total)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("walk %v, want %v", got, want)
	}

	tests := []struct {
		p    page.Request
		want []string
	}{
		{page.Request{Page: 2, Limit: 3}, want[3:6]},
		{page.Request{Page: 3, Limit: 3}, want[6:]},
		{page.Request{Page: 4, Limit: 3}, nil},
	}
	for _, tt := range tests {
		res, err := f.s.CustomerTransactions(ctx, f.company, f.alice, cards.TxFilter{}, tt.p)
		if got := txIDs(res.Items); err != nil || !slices.Equal(got, tt.want) || res.Total != len(want) {
			t.Errorf("page %d: %v (total %d), %v; want %v", tt.p.Page, got, res.Total, err, tt.want)
		}
	}

	outside := page.Request{Page: 2, Limit: 3, After: f.txs[0].ID, Total: 3}
	if _, err := f.s.CardTransactions(ctx, f.company, f.a1, cards.TxFilter{From: f.at(3)}, outside); !errors.Is(err, page.ErrBadCursor) {
		t.Errorf("a cursor before the list's dates: %v, want ErrBadCursor", err)
	}
}

// TestCustomerTransactionsOfAnIssuance: a card issued through Accept and
// Settle puts its transaction on the customer's list.
func TestCustomerTransactionsOfAnIssuance(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	s := moneystore.NewCards(db)
	w := usdWallet(t, db, 1000)
	alice := uuid.NewString()
	c := issue(t, s, w, alice, 500)
	res, err := s.CustomerTransactions(ctx, w.CompanyID, alice, cards.TxFilter{}, page.Request{Page: 1, Limit: 10})
	if err != nil || len(res.Items) != 1 || res.Items[0].CardID != c.ID || res.Items[0].Status != cards.TxSuccess {
		t.Fatalf("CustomerTransactions = %+v, %v", res, err)
	}
}

func txIDs(txs []cards.Transaction) []string {
	var out []string
	for _, tx := range txs {
		out = append(out, tx.ID)
	}
	return out
}
