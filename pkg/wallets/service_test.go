package wallets_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"payments/pkg/events"
	"payments/pkg/fees"
	"payments/pkg/field"
	"payments/pkg/httpapi"
	"payments/pkg/page"
	"payments/pkg/providers/bank"
	"payments/pkg/store/moneystore"
	"payments/pkg/store/schema"
	"payments/pkg/store/storetest"
	"payments/pkg/wallets"
	"payments/pkg/wallets/walletshttp"
)

// approved is a fake of wallets.Companies: the set of approved company ids.
type approved map[string]bool

func (a approved) KYBApproved(_ context.Context, id string) (bool, error) { return a[id], nil }

// noFees prices nothing: these tests move no money between wallets.
type noFees struct{}

func (noFees) Quote(context.Context, string, string, string, string, string, int64) (fees.Quote, error) {
	return fees.Quote{}, errors.New("no fee schedule in this test")
}

// noEvents publishes nothing: the events stay in the outbox.
type noEvents struct{}

func (noEvents) Publish(context.Context, ...events.Event) error { return nil }

// creditService returns a service over s, for which the companies of c are
// KYB approved, that admits sandbox credits and has no bank.
func creditService(t testing.TB, s wallets.Store, c approved) *wallets.Service {
	t.Helper()
	svc, err := wallets.NewService(wallets.Deps{
		Store: s, Companies: c, Fees: noFees{}, Events: noEvents{}, Bank: bank.None, CreditEnabled: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// newService returns a service over a fresh table, for which company is
// KYB approved, and a store to check the ledger with.
func newService(t *testing.T, company string) (*wallets.Service, *moneystore.Wallets) {
	t.Helper()
	s := moneystore.NewWallets(storetest.NewDB(t))
	svc := creditService(t, s, approved{company: true})
	return svc, s
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
	var fe *field.Error
	if errors.As(err, &fe) {
		return fe.Field
	}
	return ""
}

func TestCreditValidation(t *testing.T) {
	t.Parallel()
	company := uuid.NewString()
	svc, s := newService(t, company)
	xaf := mustCreate(t, svc, company, "XAF", "Cameroon", "CM", "+237")
	usd := mustCreate(t, svc, company, "USD", "United States", "US", "+1")
	in := func(b wallets.SubBalance, amount, ref string) wallets.CreditInput {
		return wallets.CreditInput{Balance: b, Amount: amount, Reference: ref}
	}
	tests := []struct {
		name      string
		wallet    string
		in        wallets.CreditInput
		wantErr   error
		wantField string
	}{
		{"no balance", xaf.ID, in("", "10", "r"), nil, "balance"},
		{"bad balance", xaf.ID, in("both", "10", "r"), nil, "balance"},
		{"no amount", xaf.ID, in(wallets.Payin, "", "r"), nil, "amount"},
		{"zero", xaf.ID, in(wallets.Payin, "0", "r"), nil, "amount"},
		{"negative", xaf.ID, in(wallets.Payin, "-5", "r"), nil, "amount"},
		{"decimals on XAF", xaf.ID, in(wallets.Payin, "1.5", "r"), nil, "amount"},
		{"three decimals on USD", usd.ID, in(wallets.Payout, "1.005", "r"), nil, "amount"},
		{"too large", usd.ID, in(wallets.Payout, "1e13", "r"), nil, "amount"},
		{"below 1", usd.ID, in(wallets.Payout, "0.99", "r"), nil, "amount"},
		{"a string", usd.ID, in(wallets.Payout, `"10"`, "r"), nil, "amount"},
		{"no reference", xaf.ID, in(wallets.Payin, "1", ""), nil, "reference"},
		{"reference too long", xaf.ID, in(wallets.Payin, "1", strings.Repeat("r", 256)), nil, "reference"},
		{"reference not ASCII", xaf.ID, in(wallets.Payin, "1", "réf"), nil, "reference"},
		{"unknown wallet", uuid.NewString(), in(wallets.Payin, "1", "r"), wallets.ErrNotFound, ""},
		{"not a wallet id", schema.WalletSK("x"), in(wallets.Payin, "1", "r"), wallets.ErrNotFound, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := svc.Credit(context.Background(), tt.wallet, tt.in)
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

	t.Run("disabled", func(t *testing.T) {
		svc.CreditEnabled = false
		defer func() { svc.CreditEnabled = true }()
		if _, err := svc.Credit(context.Background(), xaf.ID, in(wallets.Payin, "1", "r")); !errors.Is(err, wallets.ErrCreditDisabled) {
			t.Fatalf("Credit = %v, want ErrCreditDisabled", err)
		}
	})
}

func TestCredit(t *testing.T) {
	t.Parallel()
	company := uuid.NewString()
	svc, s := newService(t, company)
	ctx := context.Background()
	usd := mustCreate(t, svc, company, "USD", "United States", "US", "+1")
	tests := []struct {
		name                  string
		in                    wallets.CreditInput
		wantPayin, wantPayout int64
		wantBefore, wantAfter int64
		wantAmount            string
	}{
		{"payout", wallets.CreditInput{Balance: wallets.Payout, Amount: "12.34", Reference: "dep-1"}, 0, 1234, 0, 1234, "12.34"},
		{"payin", wallets.CreditInput{Balance: wallets.Payin, Amount: "1e2", Reference: "dep-2"}, 10000, 1234, 0, 10000, "100"},
		{"payout again", wallets.CreditInput{Balance: wallets.Payout, Amount: "1.66", Reference: "dep-3"}, 10000, 1400, 1234, 1400, "1.66"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := svc.Credit(ctx, usd.ID, tt.in)
			if err != nil || c.Replayed {
				t.Fatalf("Credit: %+v, %v", c, err)
			}
			w, e := c.Wallet, c.Transaction
			if w.PayinBalance != tt.wantPayin || w.PayoutBalance != tt.wantPayout || w.PayoutAvailable != tt.wantPayout {
				t.Fatalf("wallet = %+v", w)
			}
			stored, err := s.GetWallet(ctx, company, usd.ID)
			if err != nil || stored != w {
				t.Fatalf("stored wallet = %+v, %v; returned %+v", stored, err, w)
			}
			if *e.BalanceBefore != tt.wantBefore || *e.BalanceAfter != tt.wantAfter || e.Type != wallets.TypeFund ||
				e.Status != wallets.StatusSuccess || e.CompletedAt == nil || e.Balance != tt.in.Balance || e.Reference != tt.in.Reference {
				t.Fatalf("entry = %+v", e)
			}
			if got := string(walletshttp.NewTransactionResponse(e).Amount); got != tt.wantAmount {
				t.Fatalf("amount = %s, want %s", got, tt.wantAmount)
			}
			verify(t, s, company)
		})
	}
}

func TestCreditConcurrent(t *testing.T) {
	t.Parallel()
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
			_, errs[i] = svc.Credit(ctx, w.ID, wallets.CreditInput{Balance: balance, Amount: fmt.Sprint(amount), Reference: fmt.Sprint("c-", i)})
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
	entries, err := svc.WalletTransactions(ctx, company, w.ID, page.Request{Page: 1, Limit: httpapi.MaxLimit})
	if err != nil || len(entries.Items) != n || entries.Total != n {
		t.Fatalf("%d entries (total %d), %v; want %d", len(entries.Items), entries.Total, err, n)
	}
	verify(t, s, company)
}

// TestCreditIsIdempotentOnItsReference: concurrent retries of one credit
// apply it once and answer every retry with it; the same reference for
// another credit (amount, wallet or sub-balance) is refused.
func TestCreditIsIdempotentOnItsReference(t *testing.T) {
	t.Parallel()
	company := uuid.NewString()
	svc, s := newService(t, company)
	ctx := context.Background()
	a := mustCreate(t, svc, company, "XAF", "Cameroon", "CM", "+237")
	b := mustCreate(t, svc, company, "XOF", "Senegal", "SN", "+221")
	const n = 10
	var wg sync.WaitGroup
	var applied, replayed atomic.Int32
	var first sync.Map
	for range n {
		wg.Go(func() {
			c, err := svc.Credit(ctx, a.ID, wallets.CreditInput{Balance: wallets.Payout, Amount: "500", Reference: "bank-transfer-42"})
			switch {
			case err != nil:
				t.Errorf("Credit: %v", err)
			case c.Replayed:
				replayed.Add(1)
			default:
				applied.Add(1)
			}
			first.Store(c.Transaction.ID, true)
		})
	}
	wg.Wait()
	entries := 0
	first.Range(func(any, any) bool { entries++; return true })
	if applied.Load() != 1 || replayed.Load() != n-1 || entries != 1 {
		t.Fatalf("%d applied, %d replayed, %d distinct entries; want 1, %d, 1", applied.Load(), replayed.Load(), entries, n-1)
	}
	wa, _ := s.GetWallet(ctx, company, a.ID)
	if wa.PayoutBalance != 500 {
		t.Fatalf("payout balance %d, want 500 once", wa.PayoutBalance)
	}
	for _, tt := range []struct {
		name   string
		wallet string
		in     wallets.CreditInput
	}{
		{"another amount", a.ID, wallets.CreditInput{Balance: wallets.Payout, Amount: "501", Reference: "bank-transfer-42"}},
		{"another sub-balance", a.ID, wallets.CreditInput{Balance: wallets.Payin, Amount: "500", Reference: "bank-transfer-42"}},
		{"another wallet of the company", b.ID, wallets.CreditInput{Balance: wallets.Payout, Amount: "500", Reference: "bank-transfer-42"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := svc.Credit(ctx, tt.wallet, tt.in); !errors.Is(err, wallets.ErrDuplicateReference) {
				t.Fatalf("Credit = %v, want ErrDuplicateReference", err)
			}
		})
	}
	verify(t, s, company)

	t.Run("another company may use the same reference", func(t *testing.T) {
		other := uuid.NewString()
		svc2 := creditService(t, s, approved{other: true})
		w := mustCreate(t, svc2, other, "XAF", "Cameroon", "CM", "+237")
		if _, err := svc2.Credit(ctx, w.ID, wallets.CreditInput{Balance: wallets.Payin, Amount: "1", Reference: "bank-transfer-42"}); err != nil {
			t.Fatalf("Credit: %v", err)
		}
		verify(t, s, other)
	})
}

// ledger is a fake wallets.LedgerReader.
type ledger struct {
	ws  []wallets.Wallet
	txs []wallets.Transaction
}

func (l ledger) ListWallets(context.Context, string) ([]wallets.Wallet, error) { return l.ws, nil }
func (l ledger) AllTransactions(context.Context, string) ([]wallets.Transaction, error) {
	return l.txs, nil
}

func TestVerifyLedger(t *testing.T) {
	t.Parallel()
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

// TestCreditRetryAfterDeactivation: a wallet deactivated after a credit
// refuses new credits, but a retry of that credit is still answered with it.
func TestCreditRetryAfterDeactivation(t *testing.T) {
	t.Parallel()
	company := uuid.NewString()
	db := storetest.NewDB(t)
	s := moneystore.NewWallets(db)
	svc := creditService(t, s, approved{company: true})
	ctx := context.Background()
	w := mustCreate(t, svc, company, "XAF", "Cameroon", "CM", "+237")
	first, err := svc.Credit(ctx, w.ID, wallets.CreditInput{Balance: wallets.Payout, Amount: "500", Reference: "wire-9"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(db.Table),
		Key: map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: schema.CompanyPK(company)}, "SK": &types.AttributeValueMemberS{Value: schema.WalletSK(w.ID)},
		},
		UpdateExpression:          aws.String("SET is_active = :f"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":f": &types.AttributeValueMemberBOOL{Value: false}},
	}); err != nil {
		t.Fatal(err)
	}
	again, err := svc.Credit(ctx, w.ID, wallets.CreditInput{Balance: wallets.Payout, Amount: "500", Reference: "wire-9"})
	if err != nil || !again.Replayed || again.Transaction.ID != first.Transaction.ID {
		t.Fatalf("retry = %+v, %v", again, err)
	}
	if _, err := svc.Credit(ctx, w.ID, wallets.CreditInput{Balance: wallets.Payout, Amount: "500", Reference: "wire-10"}); !errors.Is(err, wallets.ErrInactive) {
		t.Fatalf("a new credit = %v, want ErrInactive", err)
	}
	verify(t, s, company)
}
