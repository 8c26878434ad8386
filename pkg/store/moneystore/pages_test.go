package moneystore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/google/uuid"

	"payments/pkg/ids"
	"payments/pkg/page"
	"payments/pkg/store"
	"payments/pkg/store/moneystore"
	"payments/pkg/store/schema"
	"payments/pkg/store/storetest"
	"payments/pkg/wallets"
)

// readCounter counts what the Queries of a store bring back.
type readCounter struct {
	mu sync.Mutex
	// items is the number of whole items returned; keys the number of
	// projected ones (a skip); counts the number of Select COUNT Queries.
	items, keys, counts int
}

func (c *readCounter) reset() { c.mu.Lock(); c.items, c.keys, c.counts = 0, 0, 0; c.mu.Unlock() }

func (c *readCounter) get() (items, keys, counts int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.items, c.keys, c.counts
}

// countingDB returns db seen through a client that counts its Queries.
func countingDB(db *store.DB) (*store.DB, *readCounter) {
	c := &readCounter{}
	count := func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("countReads",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				out, md, err := next.HandleInitialize(ctx, in)
				q, ok := in.Parameters.(*dynamodb.QueryInput)
				res, _ := out.Result.(*dynamodb.QueryOutput)
				if ok && res != nil {
					c.mu.Lock()
					switch {
					case q.Select == types.SelectCount:
						c.counts++
					case q.ProjectionExpression != nil:
						c.keys += len(res.Items)
					default:
						c.items += len(res.Items)
					}
					c.mu.Unlock()
				}
				return out, md, err
			}), middleware.After)
	}
	client := dynamodb.New(db.Client.Options(), func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, count) })
	return store.New(client, db.Table), c
}

// ledgerFixture is a company with two wallets and 90 entries, one a
// second: entry i is in wallet b when i%3 == 0 (else a), a FUND when i is
// even (else a WITHDRAW), PENDING when i%5 == 0 (else SUCCESS).
type ledgerFixture struct {
	company string
	a, b    wallets.Wallet
	base    time.Time
	entries []wallets.Transaction // oldest first
}

func newLedgerFixture(t *testing.T, db *store.DB) ledgerFixture {
	t.Helper()
	ctx := context.Background()
	s := moneystore.NewWallets(db)
	f := ledgerFixture{company: uuid.NewString(), base: time.Date(2025, 5, 1, 10, 0, 0, 0, time.UTC)}
	f.a, f.b = newWallet(f.company, "XAF", "CM"), newWallet(f.company, "XOF", "SN")
	for _, w := range []wallets.Wallet{f.a, f.b} {
		if err := s.CreateWallet(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 90 {
		w := f.a
		if i%3 == 0 {
			w = f.b
		}
		e := fund(w, 100, f.base.Add(time.Duration(i)*time.Second))
		if i%2 == 1 {
			e.Type = wallets.TypeWithdraw
		}
		if i%5 == 0 {
			e.Status = wallets.StatusPending
		}
		f.entries = append(f.entries, e)
	}
	if err := moneystore.PutLedgerForTest(ctx, db, f.entries); err != nil {
		t.Fatal(err)
	}
	return f
}

// want returns the ids of the entries q selects, newest first.
func (f ledgerFixture) want(q wallets.TransactionQuery) []string {
	var out []string
	for _, e := range slices.Backward(f.entries) {
		if (q.WalletID == "" || e.WalletID == q.WalletID) && (q.Type == "" || e.Type == q.Type) &&
			(q.Status == "" || e.Status == q.Status) && (q.Currency == "" || e.Currency == q.Currency) &&
			(q.From.IsZero() || !e.CreatedAt.Before(q.From)) && (q.To.IsZero() || e.CreatedAt.Before(q.To)) {
			out = append(out, e.ID)
		}
	}
	return out
}

func (f ledgerFixture) queries() []struct {
	name string
	q    wallets.TransactionQuery
} {
	at := func(s int) time.Time { return f.base.Add(time.Duration(s) * time.Second) }
	return []struct {
		name string
		q    wallets.TransactionQuery
	}{
		{"all", wallets.TransactionQuery{}},
		{"wallet a (GSI1)", wallets.TransactionQuery{WalletID: f.a.ID}},
		{"wallet b withdrawals", wallets.TransactionQuery{WalletID: f.b.ID, Type: wallets.TypeWithdraw}},
		{"pending", wallets.TransactionQuery{Status: wallets.StatusPending}},
		{"XOF pending", wallets.TransactionQuery{Currency: "XOF", Status: wallets.StatusPending}},
		{"dates", wallets.TransactionQuery{From: at(10), To: at(70)}},
		{"dates, wallet a, funds", wallets.TransactionQuery{WalletID: f.a.ID, Type: wallets.TypeFund, From: at(10), To: at(70)}},
		{"nothing", wallets.TransactionQuery{Type: wallets.TypeFee}},
	}
}

// walk reads every page of q through the cursor positions, checking each
// page's size, total and next, and returns the ids read and the pages.
func walk(t *testing.T, s *moneystore.Wallets, company string, q wallets.TransactionQuery, limit, total int) ([]string, int) {
	t.Helper()
	var got []string
	pages := 0
	for p := (page.Request{Page: 1, Limit: limit}); ; {
		res, err := s.ListTransactions(context.Background(), company, q, p)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if res.Total != total || len(res.Items) > limit || (res.Next != "" && len(res.Items) != limit) {
			t.Fatalf("page %d: %d items, total %d, next %q; limit %d, want total %d", p.Page, len(res.Items), res.Total, res.Next, limit, total)
		}
		for _, e := range res.Items {
			got = append(got, e.ID)
		}
		if res.Next == "" {
			return got, pages
		}
		if res.Next != res.Items[len(res.Items)-1].ID {
			t.Fatalf("next %q is not the page's last entry", res.Next)
		}
		p = p.Following(res.Next, res.Total)
	}
}

// TestLedgerPages walks every query of the fixture a page at a time, by
// cursor and by page number, and checks what it reads against the entries.
func TestLedgerPages(t *testing.T) {
	db := storetest.NewDB(t)
	f := newLedgerFixture(t, db)
	s := moneystore.NewWallets(db)
	ctx := context.Background()
	for _, tt := range f.queries() {
		want := f.want(tt.q)
		for _, limit := range []int{1, 7, 100} {
			if limit == 1 && len(want) > 10 {
				continue // one Query per entry: only the short lists
			}
			t.Run(fmt.Sprintf("%s by cursor, limit %d", tt.name, limit), func(t *testing.T) {
				got, pages := walk(t, s, f.company, tt.q, limit, len(want))
				if !slices.Equal(got, want) {
					t.Fatalf("read %d entries %v, want %d %v", len(got), got, len(want), want)
				}
				if wantPages := max(1, (len(want)+limit-1)/limit); pages != wantPages {
					t.Fatalf("%d pages, want %d", pages, wantPages)
				}
			})
		}
		t.Run(tt.name+" by page number", func(t *testing.T) {
			const limit = 7
			for n := 1; n <= len(want)/limit+2; n++ {
				res, err := s.ListTransactions(ctx, f.company, tt.q, page.Request{Page: n, Limit: limit})
				if err != nil {
					t.Fatal(err)
				}
				lo, hi := min((n-1)*limit, len(want)), min(n*limit, len(want))
				var got []string
				for _, e := range res.Items {
					got = append(got, e.ID)
				}
				if !slices.Equal(got, want[lo:hi]) || res.Total != len(want) || (res.Next != "") != (hi < len(want)) {
					t.Fatalf("page %d: %v (total %d, next %q), want %v of %d", n, got, res.Total, res.Next, want[lo:hi], len(want))
				}
			}
		})
	}
}

// TestLedgerPagesReadBoundedly counts the items DynamoDB returns: a page of
// a dense list brings back limit+1 whole items whatever the size of the
// list (a sparse filter, whose Queries are sized on the rate of matches,
// may bring a few more), a cursor page counts nothing and skips nothing, and
// page=N skips on keys.
func TestLedgerPagesReadBoundedly(t *testing.T) {
	db := storetest.NewDB(t)
	f := newLedgerFixture(t, db)
	cdb, c := countingDB(db)
	s := moneystore.NewWallets(cdb)
	ctx := context.Background()
	all := f.want(wallets.TransactionQuery{})
	pending := f.want(wallets.TransactionQuery{Status: wallets.StatusPending})
	tests := []struct {
		name                       string
		q                          wallets.TransactionQuery
		p                          page.Request
		wantFirst                  string
		maxItems, maxKeys, nCounts int
	}{
		{"page 1", wallets.TransactionQuery{}, page.Request{Page: 1, Limit: 10}, all[0], 11, 0, 1},
		{"cursor page deep in the list", wallets.TransactionQuery{},
			page.Request{Page: 7, Limit: 10, After: all[59], Total: len(all)}, all[60], 11, 0, 0},
		{"page 7 by number", wallets.TransactionQuery{}, page.Request{Page: 7, Limit: 10}, all[60], 11, 60, 1},
		{"sparse filter, page 1", wallets.TransactionQuery{Status: wallets.StatusPending},
			page.Request{Page: 1, Limit: 5}, pending[0], 12, 0, 1},
		{"sparse filter, cursor page", wallets.TransactionQuery{Status: wallets.StatusPending},
			page.Request{Page: 3, Limit: 5, After: pending[9], Total: len(pending)}, pending[10], 12, 0, 0},
		{"wallet (GSI1), cursor page", wallets.TransactionQuery{WalletID: f.a.ID},
			page.Request{Page: 2, Limit: 10, After: f.want(wallets.TransactionQuery{WalletID: f.a.ID})[9], Total: 60},
			f.want(wallets.TransactionQuery{WalletID: f.a.ID})[10], 11, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.reset()
			res, err := s.ListTransactions(ctx, f.company, tt.q, tt.p)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Items) != tt.p.Limit || res.Items[0].ID != tt.wantFirst {
				t.Fatalf("%d items, first %s; want %d from %s", len(res.Items), res.Items[0].ID, tt.p.Limit, tt.wantFirst)
			}
			items, keys, counts := c.get()
			if items > tt.maxItems || keys > tt.maxKeys || counts != tt.nCounts {
				t.Fatalf("read %d items, %d keys, %d counts; want at most %d items and %d keys, %d counts",
					items, keys, counts, tt.maxItems, tt.maxKeys, tt.nCounts)
			}
		})
	}
}

// TestLedgerPagesRefuseForeignCursors: a position that is not an entry id
// of the list's range is page.ErrBadCursor, and a position taken from
// another company's list only ever reads the caller's own entries.
func TestLedgerPagesRefuseForeignCursors(t *testing.T) {
	db := storetest.NewDB(t)
	f := newLedgerFixture(t, db)
	s := moneystore.NewWallets(db)
	ctx := context.Background()
	dates := wallets.TransactionQuery{From: f.base.Add(10 * time.Second), To: f.base.Add(70 * time.Second)}
	for _, after := range []string{
		"not-an-id",
		schema.LedgerSK(f.entries[40].ID),
		f.entries[80].ID, // after the range
		f.entries[5].ID,  // before it
		ids.NewV7(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)), // an id of no entry, out of range
	} {
		t.Run(after, func(t *testing.T) {
			_, err := s.ListTransactions(ctx, f.company, dates, page.Request{Page: 2, Limit: 10, After: after, Total: 60})
			if !errors.Is(err, page.ErrBadCursor) {
				t.Fatalf("err %v, want ErrBadCursor", err)
			}
		})
	}

	other := newLedgerFixture(t, db)
	res, err := s.ListTransactions(ctx, other.company, wallets.TransactionQuery{},
		page.Request{Page: 2, Limit: 100, After: f.entries[89].ID, Total: 90})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res.Items {
		if e.CompanyID != other.company {
			t.Fatalf("company %s read entry %s of company %s", other.company, e.ID, e.CompanyID)
		}
	}
}
