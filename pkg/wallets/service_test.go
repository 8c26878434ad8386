package wallets_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"payments/pkg/httpapi"
	"payments/pkg/store"
	"payments/pkg/store/storetest"
	"payments/pkg/wallets"
)

// approved is a fake of wallets.Companies: the set of approved company ids.
type approved map[string]bool

func (a approved) KYBApproved(_ context.Context, id string) (bool, error) { return a[id], nil }

// newService returns a service over a fresh table, for which company is
// KYB approved, and a store to check the ledger with.
func newService(t *testing.T, company string) (*wallets.Service, *store.Wallets) {
	t.Helper()
	s := store.NewWallets(storetest.NewDB(t))
	return wallets.NewService(s, approved{company: true}), s
}

func mustCreate(t *testing.T, svc *wallets.Service, company, currency, country, iso, phone string) wallets.Wallet {
	t.Helper()
	w, err := svc.Create(context.Background(), company, wallets.CreateInput{
		Currency: currency, Country: country, CountryISOCode: iso, CountryPhoneCode: phone,
	})
	if err != nil {
		t.Fatalf("Create %s %s: %v", iso, currency, err)
	}
	return w
}

func verify(t *testing.T, r wallets.LedgerReader, company string) {
	t.Helper()
	if err := wallets.VerifyLedger(context.Background(), r, company); err != nil {
		t.Fatalf("VerifyLedger: %v", err)
	}
}

func fieldOf(err error) string {
	var fe *httpapi.FieldError
	if errors.As(err, &fe) {
		return fe.Field
	}
	return ""
}

func TestCreditValidation(t *testing.T) {
	company := uuid.NewString()
	svc, s := newService(t, company)
	xaf := mustCreate(t, svc, company, "XAF", "Cameroon", "CM", "+237")
	usd := mustCreate(t, svc, company, "USD", "United States", "US", "+1")
	tests := []struct {
		name      string
		wallet    string
		in        wallets.CreditInput
		wantErr   error
		wantField string
	}{
		{"no balance", xaf.ID, wallets.CreditInput{Amount: "10"}, nil, "balance"},
		{"bad balance", xaf.ID, wallets.CreditInput{Balance: "both", Amount: "10"}, nil, "balance"},
		{"no amount", xaf.ID, wallets.CreditInput{Balance: wallets.Payin}, nil, "amount"},
		{"zero", xaf.ID, wallets.CreditInput{Balance: wallets.Payin, Amount: "0"}, nil, "amount"},
		{"negative", xaf.ID, wallets.CreditInput{Balance: wallets.Payin, Amount: "-5"}, nil, "amount"},
		{"decimals on XAF", xaf.ID, wallets.CreditInput{Balance: wallets.Payin, Amount: "1.5"}, nil, "amount"},
		{"three decimals on USD", usd.ID, wallets.CreditInput{Balance: wallets.Payout, Amount: "1.005"}, nil, "amount"},
		{"too large", usd.ID, wallets.CreditInput{Balance: wallets.Payout, Amount: "1e13"}, nil, "amount"},
		{"below 1", usd.ID, wallets.CreditInput{Balance: wallets.Payout, Amount: "0.99"}, nil, "amount"},
		{"a string", usd.ID, wallets.CreditInput{Balance: wallets.Payout, Amount: `"10"`}, nil, "amount"},
		{"reference too long", xaf.ID, wallets.CreditInput{Balance: wallets.Payin, Amount: "1", Reference: strings.Repeat("r", 256)}, nil, "reference"},
		{"reference not ASCII", xaf.ID, wallets.CreditInput{Balance: wallets.Payin, Amount: "1", Reference: "réf"}, nil, "reference"},
		{"unknown wallet", uuid.NewString(), wallets.CreditInput{Balance: wallets.Payin, Amount: "1"}, wallets.ErrNotFound, ""},
		{"not a wallet id", "WALLET#x", wallets.CreditInput{Balance: wallets.Payin, Amount: "1"}, wallets.ErrNotFound, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := svc.Credit(context.Background(), tt.wallet, tt.in)
			if err == nil {
				t.Fatal("Credit succeeded")
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if got := fieldOf(err); got != tt.wantField {
				t.Fatalf("field = %q (%v), want %q", got, err, tt.wantField)
			}
		})
	}
	verify(t, s, company)
}

func TestCredit(t *testing.T) {
	company := uuid.NewString()
	svc, s := newService(t, company)
	ctx := context.Background()
	usd := mustCreate(t, svc, company, "USD", "United States", "US", "+1")
	tests := []struct {
		name                      string
		in                        wallets.CreditInput
		wantPayin, wantPayout     int64
		wantBefore, wantAfter     int64
		wantReference, wantAmount string
	}{
		{"payout", wallets.CreditInput{Balance: wallets.Payout, Amount: "12.34", Reference: "dep-1"}, 0, 1234, 0, 1234, "dep-1", "12.34"},
		{"payin", wallets.CreditInput{Balance: wallets.Payin, Amount: "1e2"}, 10000, 1234, 0, 10000, "", "100"},
		{"payout again", wallets.CreditInput{Balance: wallets.Payout, Amount: "1.66"}, 10000, 1400, 1234, 1400, "", "1.66"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, e, err := svc.Credit(ctx, usd.ID, tt.in)
			if err != nil {
				t.Fatalf("Credit: %v", err)
			}
			if w.PayinBalance != tt.wantPayin || w.PayoutBalance != tt.wantPayout || w.PayoutAvailable != tt.wantPayout {
				t.Fatalf("wallet = %+v", w)
			}
			stored, err := s.GetWallet(ctx, company, usd.ID)
			if err != nil || stored != w {
				t.Fatalf("stored wallet = %+v, %v; returned %+v", stored, err, w)
			}
			if *e.BalanceBefore != tt.wantBefore || *e.BalanceAfter != tt.wantAfter || e.Type != wallets.TypeFund ||
				e.Status != wallets.StatusSuccess || e.CompletedAt == nil || e.Balance != tt.in.Balance {
				t.Fatalf("entry = %+v", e)
			}
			if tt.wantReference != "" && e.Reference != tt.wantReference || e.Reference == "" {
				t.Fatalf("reference = %q, want %q", e.Reference, tt.wantReference)
			}
			if got := string(e.Response().Amount); got != tt.wantAmount {
				t.Fatalf("amount = %s, want %s", got, tt.wantAmount)
			}
			verify(t, s, company)
		})
	}
}

func TestCreditConcurrent(t *testing.T) {
	company := uuid.NewString()
	svc, s := newService(t, company)
	ctx := context.Background()
	w := mustCreate(t, svc, company, "XAF", "Cameroon", "CM", "+237")
	const n = 20
	var wg sync.WaitGroup
	errs := make([]error, n)
	var payin, payout int64
	for i := range n {
		amount := int64(i + 1)
		balance := wallets.Payin
		if i%2 == 1 {
			balance = wallets.Payout
			payout += amount
		} else {
			payin += amount
		}
		wg.Go(func() {
			_, _, errs[i] = svc.Credit(ctx, w.ID, wallets.CreditInput{Balance: balance, Amount: fmt.Sprint(amount)})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("credit %d: %v", i, err)
		}
	}
	got, err := s.GetWallet(ctx, company, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.PayinBalance != payin || got.PayoutBalance != payout || got.PayoutAvailable != payout || got.Version != n+1 {
		t.Fatalf("wallet = %+v, want payin %d payout %d", got, payin, payout)
	}
	entries, err := svc.WalletTransactions(ctx, company, w.ID)
	if err != nil || len(entries) != n {
		t.Fatalf("%d entries, %v; want %d", len(entries), err, n)
	}
	verify(t, s, company)
}

func TestCreditReferenceOnce(t *testing.T) {
	company := uuid.NewString()
	svc, s := newService(t, company)
	ctx := context.Background()
	a := mustCreate(t, svc, company, "XAF", "Cameroon", "CM", "+237")
	b := mustCreate(t, svc, company, "XOF", "Senegal", "SN", "+221")
	const n = 10
	var wg sync.WaitGroup
	var ok, dup atomic.Int32
	for i := range n {
		wallet := a.ID
		if i%2 == 1 {
			wallet = b.ID // a reference is unique per company, across wallets
		}
		wg.Go(func() {
			_, _, err := svc.Credit(ctx, wallet, wallets.CreditInput{Balance: wallets.Payout, Amount: "500", Reference: "bank-transfer-42"})
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, wallets.ErrDuplicateReference):
				dup.Add(1)
			default:
				t.Errorf("Credit: %v", err)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 1 || dup.Load() != n-1 {
		t.Fatalf("%d credits, %d refused; want 1 and %d", ok.Load(), dup.Load(), n-1)
	}
	wa, _ := s.GetWallet(ctx, company, a.ID)
	wb, _ := s.GetWallet(ctx, company, b.ID)
	if wa.PayoutBalance+wb.PayoutBalance != 500 {
		t.Fatalf("payout balances %d + %d, want 500 once", wa.PayoutBalance, wb.PayoutBalance)
	}
	verify(t, s, company)

	t.Run("another company may use the same reference", func(t *testing.T) {
		other := uuid.NewString()
		svc2 := wallets.NewService(s, approved{other: true})
		w := mustCreate(t, svc2, other, "XAF", "Cameroon", "CM", "+237")
		if _, _, err := svc2.Credit(ctx, w.ID, wallets.CreditInput{Balance: wallets.Payin, Amount: "1", Reference: "bank-transfer-42"}); err != nil {
			t.Fatalf("Credit: %v", err)
		}
		verify(t, s, other)
	})
}

// staleStore fails the first fail calls of ApplyChange with ErrStale, as
// DynamoDB does on a TransactionConflict, which DynamoDB Local never raises.
type staleStore struct {
	wallets.Store
	fail  int
	calls atomic.Int32
}

func (s *staleStore) ApplyChange(ctx context.Context, c wallets.Change) error {
	if int(s.calls.Add(1)) <= s.fail {
		return fmt.Errorf("injected: %w", wallets.ErrStale)
	}
	return s.Store.ApplyChange(ctx, c)
}

func TestCreditRetries(t *testing.T) {
	company := uuid.NewString()
	base := store.NewWallets(storetest.NewDB(t))
	w := mustCreate(t, wallets.NewService(base, approved{company: true}), company, "XAF", "Cameroon", "CM", "+237")
	tests := []struct {
		name      string
		fail      int
		wantErr   error
		wantCalls int
	}{
		{"wins on the fourth attempt", 3, nil, 4},
		{"gives up after MaxAttempts", 1000, wallets.ErrBusy, wallets.MaxAttempts},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &staleStore{Store: base, fail: tt.fail}
			svc := wallets.NewService(st, approved{company: true})
			svc.Backoff = func(int) time.Duration { return 0 }
			_, _, err := svc.Credit(context.Background(), w.ID, wallets.CreditInput{Balance: wallets.Payin, Amount: "7"})
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Credit = %v, want %v", err, tt.wantErr)
			}
			if got := int(st.calls.Load()); got != tt.wantCalls {
				t.Fatalf("%d calls of ApplyChange, want %d", got, tt.wantCalls)
			}
			verify(t, base, company)
		})
	}
}

// ledger is a fake wallets.LedgerReader.
type ledger struct {
	ws  []wallets.Wallet
	txs []wallets.Transaction
}

func (l ledger) ListWallets(context.Context, string) ([]wallets.Wallet, error) { return l.ws, nil }
func (l ledger) ListTransactions(context.Context, string, wallets.TransactionQuery) ([]wallets.Transaction, error) {
	return l.txs, nil
}

func TestVerifyLedger(t *testing.T) {
	wallet := func(payin, payout, reserved, available int64) wallets.Wallet {
		return wallets.Wallet{ID: "w", Currency: "XAF", PayinBalance: payin, PayoutBalance: payout,
			PayoutReserved: reserved, PayoutAvailable: available}
	}
	entry := func(b wallets.SubBalance, delta, reserved int64, status wallets.Status) wallets.Transaction {
		return wallets.Transaction{ID: uuid.NewString(), WalletID: "w", Currency: "XAF", Balance: b,
			Delta: delta, Reserved: reserved, Status: status}
	}
	ok := wallets.StatusSuccess
	tests := []struct {
		name    string
		l       ledger
		wantErr bool
	}{
		{"empty", ledger{}, false},
		{"balanced", ledger{[]wallets.Wallet{wallet(100, 50, 0, 50)},
			[]wallets.Transaction{entry(wallets.Payin, 100, 0, ok), entry(wallets.Payout, 80, 0, ok), entry(wallets.Payout, -30, 0, ok)}}, false},
		{"open reservation", ledger{[]wallets.Wallet{wallet(0, 50, 20, 30)},
			[]wallets.Transaction{entry(wallets.Payout, 50, 0, ok), entry(wallets.Payout, 0, 20, wallets.StatusPending),
				entry(wallets.Payout, 0, 5, wallets.StatusFailed)}}, false},
		{"payin differs", ledger{[]wallets.Wallet{wallet(101, 0, 0, 0)}, []wallets.Transaction{entry(wallets.Payin, 100, 0, ok)}}, true},
		{"payout differs", ledger{[]wallets.Wallet{wallet(0, 10, 0, 10)}, nil}, true},
		{"reserved differs", ledger{[]wallets.Wallet{wallet(0, 50, 0, 50)},
			[]wallets.Transaction{entry(wallets.Payout, 50, 0, ok), entry(wallets.Payout, 0, 20, wallets.StatusProcessing)}}, true},
		{"available wrong", ledger{[]wallets.Wallet{wallet(0, 50, 0, 40)}, []wallets.Transaction{entry(wallets.Payout, 50, 0, ok)}}, true},
		{"negative", ledger{[]wallets.Wallet{wallet(-5, 0, 0, 0)}, []wallets.Transaction{entry(wallets.Payin, -5, 0, ok)}}, true},
		{"entry of no wallet", ledger{nil, []wallets.Transaction{entry(wallets.Payin, 0, 0, ok)}}, true},
		{"entry in another currency", ledger{[]wallets.Wallet{wallet(0, 0, 0, 0)},
			[]wallets.Transaction{{ID: "x", WalletID: "w", Currency: "XOF", Balance: wallets.Payin}}}, true},
		{"entry on no sub-balance", ledger{[]wallets.Wallet{wallet(0, 0, 0, 0)}, []wallets.Transaction{entry("", 0, 0, ok)}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := wallets.VerifyLedger(context.Background(), tt.l, "c")
			if (err != nil) != tt.wantErr {
				t.Fatalf("VerifyLedger = %v, want error %v", err, tt.wantErr)
			}
			if err != nil && !errors.Is(err, wallets.ErrLedgerMismatch) {
				t.Fatalf("err %v does not wrap ErrLedgerMismatch", err)
			}
		})
	}
}
