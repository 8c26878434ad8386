package moneystore_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/google/uuid"

	"payments/pkg/page"
	"payments/pkg/store"
	"payments/pkg/store/moneystore"
	"payments/pkg/store/storetest"
	"payments/pkg/wallets"
)

// benchLedger is the benchmarks' table: wallets of 2,000 and 20,000 ledger
// entries, each of its own company, written once per process.
var benchLedger struct {
	once sync.Once
	err  error
	db   *store.DB
	// small and large are the two wallets; ids[w] are their entries'
	// ids, newest first.
	small, large wallets.Wallet
	ids          map[string][]string
}

// TestMain deletes the benchmarks' table, if they made one, after the
// tests and benchmarks of the package.
func TestMain(m *testing.M) {
	code := m.Run()
	if benchLedger.db != nil {
		benchLedger.db.Client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(benchLedger.db.Table)})
	}
	os.Exit(code)
}

// ledgerBench returns the benchmarks' table, filling it on first use:
// 22,000 entries through BatchWriteItem, four writers at a time.
func ledgerBench(b *testing.B) *store.DB {
	b.Helper()
	benchLedger.once.Do(func() {
		ctx := context.Background()
		db := store.New(storetest.Client(b), "bench-"+storetest.RandomSuffix())
		if benchLedger.err = db.CreateTable(ctx); benchLedger.err != nil {
			return
		}
		benchLedger.db = db
		benchLedger.ids = map[string][]string{}
		start := time.Now()
		for _, w := range []struct {
			wallet *wallets.Wallet
			n      int
		}{{&benchLedger.small, 2000}, {&benchLedger.large, 20000}} {
			*w.wallet = newWallet(uuid.NewString(), "XAF", "CM")
			if benchLedger.err = moneystore.NewWallets(db).CreateWallet(ctx, *w.wallet); benchLedger.err != nil {
				return
			}
			base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
			entries := make([]wallets.Transaction, w.n)
			ids := make([]string, w.n)
			for i := range entries {
				entries[i] = fund(*w.wallet, 100, base.Add(time.Duration(i)*time.Second))
				ids[w.n-1-i] = entries[i].ID
			}
			benchLedger.ids[w.wallet.ID] = ids
			var wg sync.WaitGroup
			errs := make([]error, 4)
			for k := range 4 {
				part := entries[k*w.n/4 : (k+1)*w.n/4]
				wg.Go(func() { errs[k] = moneystore.PutLedgerForTest(ctx, db, part) })
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					benchLedger.err = err
					return
				}
			}
		}
		b.Logf("wrote 22,000 ledger entries in %v", time.Since(start).Round(time.Millisecond))
	})
	if benchLedger.err != nil {
		b.Fatal(benchLedger.err)
	}
	return benchLedger.db
}

// BenchmarkLedgerList measures GET /wallet/transactions/wallet/{id}'s read
// (ListTransactions on the wallet's GSI1 partition, limit 100) on a wallet
// of 20,000 entries and one of 2,000: page 1 (a Select COUNT of the wallet,
// then one Query of 101 items), a cursor page deep in the walk (one Query
// of 101 items: no count, no skip), page 150 by number (the count, a
// keys-only skip of 14,900 entries, the page), and, to compare, the whole
// ledger read as the lists did before (AllTransactions).
func BenchmarkLedgerList(b *testing.B) {
	db := ledgerBench(b)
	s := moneystore.NewWallets(db)
	ctx := context.Background()
	for _, w := range []wallets.Wallet{benchLedger.small, benchLedger.large} {
		ids := benchLedger.ids[w.ID]
		n := len(ids)
		q := wallets.TransactionQuery{WalletID: w.ID}
		deep := n * 3 / 4 // the cursor page starts at entry 15,000 of 20,000 (1,500 of 2,000)
		cases := []struct {
			name string
			p    page.Request
			read func(page.Request) (int, error)
		}{
			{"page=1", page.Request{Page: 1, Limit: 100}, nil},
			{"cursor", page.Request{Page: deep/100 + 1, Limit: 100, After: ids[deep-1], Total: n}, nil},
			{"page=" + fmt.Sprint(deep/100), page.Request{Page: deep / 100, Limit: 100}, nil},
			{"all", page.Request{}, func(page.Request) (int, error) {
				txs, err := s.AllTransactions(ctx, w.CompanyID)
				return len(txs), err
			}},
		}
		for _, c := range cases {
			read := c.read
			want := n
			if read == nil {
				want = 100
				read = func(p page.Request) (int, error) {
					res, err := s.ListTransactions(ctx, w.CompanyID, q, p)
					if err == nil && res.Total != n {
						err = fmt.Errorf("total %d, want %d", res.Total, n)
					}
					return len(res.Items), err
				}
			}
			b.Run(fmt.Sprintf("entries=%d/%s", n, c.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					got, err := read(c.p)
					if err != nil || got != want {
						b.Fatalf("read %d, %v; want %d", got, err, want)
					}
				}
			})
		}
	}
}
