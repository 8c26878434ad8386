package moneystore_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"payments/pkg/cards"
	"payments/pkg/events"
	"payments/pkg/ids"
	"payments/pkg/page"
	"payments/pkg/store"
	"payments/pkg/store/moneystore"
	"payments/pkg/store/schema"
	"payments/pkg/store/storetest"
	"payments/pkg/timestamp"
	"payments/pkg/vault"
	"payments/pkg/wallets"
)

// usdWallet creates the USD wallet of a new company with payout balance
// amount, credited through the ledger.
func usdWallet(t *testing.T, db *store.DB, amount int64) wallets.Wallet {
	t.Helper()
	ctx := context.Background()
	ws := moneystore.NewWallets(db)
	w := newWallet(uuid.NewString(), "USD", "US")
	if err := ws.CreateWallet(ctx, w); err != nil {
		t.Fatal(err)
	}
	if amount == 0 {
		return w
	}
	now := time.Now()
	e := fund(w, amount, now)
	e.Balance = wallets.Payout
	w, _, err := ws.ApplyChange(ctx, wallets.Change{CompanyID: w.CompanyID, WalletID: w.ID, Adjust: wallets.Adjustment{Payout: amount}, Entry: e, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// cardEvent returns an event of kind about card c at now.
func cardEvent(c cards.Card, kind events.Kind, now time.Time) events.Event {
	ev, _ := events.New(c.CompanyID, kind, map[string]string{"card_id": c.ID}, now)
	ev.Object = c.ID
	return ev
}

// movement returns the acceptance of a movement of tx.Amount (plus its
// fee) for card c from wallet w: from the wallet when wallet is set, else
// from the card.
func movement(w wallets.Wallet, c cards.Card, typ cards.TxType, amount, fee int64, fromWallet bool) cards.Accept {
	now := timestamp.Of(time.Now())
	tx := cards.Transaction{
		ID: ids.NewV7(now), CompanyID: c.CompanyID, CardID: c.ID, CustomerID: c.CustomerID, WalletID: w.ID,
		Type: typ, Status: cards.TxProcessing, Amount: amount, Fee: fee, CreatedAt: now,
	}
	a := cards.Accept{Card: c, From: []cards.Status{cards.Active}, Now: now}
	if fromWallet && amount+fee > 0 {
		tx.WalletDelta = -(amount + fee)
		a.Wallet = wallets.Adjustment{Payout: tx.WalletDelta}
		a.Entries = []wallets.Transaction{{
			ID: ids.NewV7(now), CompanyID: w.CompanyID, WalletID: w.ID, Amount: amount, AmountWithFee: amount + fee,
			FeeAmount: fee, NetAmount: amount, Currency: cards.Currency, Status: wallets.StatusSuccess,
			Type: wallets.TypeTransfer, Reference: tx.ID, Balance: wallets.Payout, Delta: tx.WalletDelta,
			CreatedAt: now, CompletedAt: &now,
		}}
	} else if !fromWallet {
		tx.CardDelta = -amount
	}
	a.Tx = tx
	a.Events = []events.Event{cardEvent(c, events.CardFund, now)}
	return a
}

// issuance returns the acceptance of a new card of customer for w's
// company, funded with amount plus fee from w.
func issuance(w wallets.Wallet, customer string, amount, fee int64, slots int) cards.Accept {
	now := timestamp.Of(time.Now())
	c := cards.Card{
		ID: ids.NewV7(now), CompanyID: w.CompanyID, CustomerID: customer, Brand: cards.Visa,
		Status: cards.Pending, CreatedAt: now, UpdatedAt: now,
	}
	a := movement(w, c, cards.TxFunding, amount, fee, true)
	a.New, a.Slots, a.From = true, slots, nil
	a.Tx.Issuance = true
	a.Events = []events.Event{cardEvent(c, events.CardCreated, now)}
	return a
}

var (
	testNumber = vault.Sealed{KeyID: "local", DataKey: []byte{1, 2, 3}, Nonce: []byte{4}, Ciphertext: []byte{5, 6, 7, 8}}
	testCVV    = vault.Sealed{KeyID: "local", DataKey: []byte{9}, Nonce: []byte{10}, Ciphertext: []byte{11, 12}}
)

// issued returns the successful settlement of issuance a.
func issued(a cards.Accept) cards.Settle {
	now := timestamp.Of(time.Now())
	tx := a.Tx
	tx.Status, tx.CardDelta, tx.CompletedAt = cards.TxSuccess, tx.Amount, &now
	return cards.Settle{
		Tx: tx, CardChange: tx.Amount, FromStatus: cards.Pending, NewStatus: cards.Active,
		Issued: &cards.Issued{
			IssuerCardID: "card_" + a.Card.ID, Last4: "4242", ExpiryMonth: 11, ExpiryYear: 2030,
			Number: testNumber, CVV: testCVV,
		},
		Events: []events.Event{cardEvent(a.Card, events.CardFund, now)}, Now: now,
	}
}

// issue writes a new ACTIVE card of customer holding amount, paid from w.
func issue(t *testing.T, s *moneystore.Cards, w wallets.Wallet, customer string, amount int64) cards.Card {
	t.Helper()
	ctx := context.Background()
	a := issuance(w, customer, amount, 0, 100)
	if err := s.Accept(ctx, a); err != nil {
		t.Fatalf("Accept: %v", err)
	}
	if err := s.Settle(ctx, issued(a)); err != nil {
		t.Fatalf("Settle: %v", err)
	}
	c, err := s.Card(ctx, w.CompanyID, a.Card.ID)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCardIssuance: an acceptance takes the money from the wallet, a slot
// and a place in the open index; its settlement issues the card; a second
// settlement of the same transaction moves nothing.
func TestCardIssuance(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	s, ws, ob := moneystore.NewCards(db), moneystore.NewWallets(db), store.NewOutbox(db)
	w := usdWallet(t, db, 10_000)
	a := issuance(w, uuid.NewString(), 1000, 100, 5)
	if err := s.Accept(ctx, a); err != nil {
		t.Fatalf("Accept: %v", err)
	}
	company, cardID := w.CompanyID, a.Card.ID
	if c, err := s.Card(ctx, company, cardID); err != nil || c.Status != cards.Pending || c.Balance != 0 || !c.Sealed.IsZero() {
		t.Fatalf("card after acceptance = %+v, %v", c, err)
	}
	if n, err := s.SlotsUsed(ctx, company); err != nil || n != 1 {
		t.Fatalf("SlotsUsed = %d, %v", n, err)
	}
	if tx, err := s.Transaction(ctx, company, a.Tx.ID); err != nil || !reflect.DeepEqual(tx, a.Tx) {
		t.Fatalf("Transaction = %+v, %v; want %+v", tx, err, a.Tx)
	}
	open, err := s.OpenTransactions(ctx, time.Now().Add(time.Second), 100)
	if err != nil || len(open) != 1 || open[0].ID != a.Tx.ID {
		t.Fatalf("OpenTransactions = %+v, %v", open, err)
	}
	if open, _ := s.OpenTransactions(ctx, a.Tx.CreatedAt, 100); len(open) != 0 {
		t.Fatalf("OpenTransactions before its creation = %+v", open)
	}
	if got, _ := ws.GetWallet(ctx, company, w.ID); got.PayoutBalance != 8900 || got.PayoutAvailable != 8900 {
		t.Fatalf("wallet after acceptance = %+v", got)
	}
	e, err := ws.GetTransaction(ctx, company, a.Entries[0].ID)
	if err != nil || e.Delta != -1100 || *e.BalanceBefore != 10_000 || *e.BalanceAfter != 8900 {
		t.Fatalf("entry = %+v, %v", e, err)
	}
	if _, err := ob.Event(ctx, company, a.Events[0].ID); err != nil {
		t.Fatalf("acceptance event: %v", err)
	}

	st := issued(a)
	if err := s.Settle(ctx, st); err != nil {
		t.Fatalf("Settle: %v", err)
	}
	c, err := s.Card(ctx, company, cardID)
	if err != nil || c.Status != cards.Active || c.Balance != 1000 || c.IssuerCardID != st.Issued.IssuerCardID ||
		c.Last4 != "4242" || c.ExpiryMonth != 11 || c.ExpiryYear != 2030 || c.MaskedPAN() != "**** **** **** 4242" ||
		c.Sealed != cards.RefsOf(testNumber, testCVV) || c.Sealed.NumberToken == "" || !c.UpdatedAt.Equal(st.Now) {
		t.Fatalf("card after settlement = %+v, %v", c, err)
	}
	if sec, err := s.CardSecrets(ctx, company, cardID); err != nil || !reflect.DeepEqual(sec, cards.Secrets{Number: testNumber, CVV: testCVV}) {
		t.Fatalf("CardSecrets = %+v, %v", sec, err)
	}
	if tx, err := s.Transaction(ctx, company, a.Tx.ID); err != nil || !reflect.DeepEqual(tx, st.Tx) {
		t.Fatalf("Transaction = %+v, %v; want %+v", tx, err, st.Tx)
	}
	if open, _ := s.OpenTransactions(ctx, time.Now().Add(time.Second), 100); len(open) != 0 {
		t.Fatalf("OpenTransactions after settlement = %+v", open)
	}
	if n := storetest.DistinctGSI2Partitions(t, db, schema.OpenCardTxIndex); n != 0 {
		t.Fatalf("%d open card transaction partitions after settlement", n)
	}
	if _, err := ob.Event(ctx, company, st.Events[0].ID); err != nil {
		t.Fatalf("settlement event: %v", err)
	}

	again := issued(a)
	if err := s.Settle(ctx, again); !errors.Is(err, cards.ErrChanged) {
		t.Fatalf("second Settle = %v, want ErrChanged", err)
	}
	if got, _ := s.Card(ctx, company, cardID); got.Balance != 1000 {
		t.Fatalf("card after the second settlement = %+v", got)
	}
	if _, err := ob.Event(ctx, company, again.Events[0].ID); !errors.Is(err, events.ErrNotFound) {
		t.Fatalf("event of the refused settlement: %v", err)
	}
	if err := wallets.VerifyLedger(ctx, ws, company); err != nil {
		t.Fatal(err)
	}
}

// TestCardFailedIssuance: a declined issuance gives the money back to the
// wallet and the slot back to the company.
func TestCardFailedIssuance(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	s, ws := moneystore.NewCards(db), moneystore.NewWallets(db)
	w := usdWallet(t, db, 5000)
	a := issuance(w, uuid.NewString(), 1000, 100, 1)
	if err := s.Accept(ctx, a); err != nil {
		t.Fatal(err)
	}
	now := timestamp.Of(time.Now())
	tx := a.Tx
	tx.Status, tx.WalletDelta, tx.Error, tx.CompletedAt = cards.TxFailed, 0, "issuer: declined", &now
	refund := a.Entries[0]
	refund.ID, refund.Type, refund.Delta, refund.CreatedAt = ids.NewV7(now), wallets.TypeRefund, 1100, now
	st := cards.Settle{
		Tx: tx, FromStatus: cards.Pending, NewStatus: cards.Failed, ReleaseSlot: true,
		Wallet: wallets.Adjustment{Payout: 1100}, Entries: []wallets.Transaction{refund}, Now: now,
	}
	if err := s.Settle(ctx, st); err != nil {
		t.Fatalf("Settle: %v", err)
	}
	c, _ := s.Card(ctx, w.CompanyID, a.Card.ID)
	got, err := s.Transaction(ctx, w.CompanyID, tx.ID)
	if c.Status != cards.Failed || c.Balance != 0 || err != nil || !reflect.DeepEqual(got, tx) {
		t.Fatalf("card %+v, transaction %+v, %v", c, got, err)
	}
	if n, _ := s.SlotsUsed(ctx, w.CompanyID); n != 0 {
		t.Fatalf("SlotsUsed = %d after a failed issuance", n)
	}
	if after, _ := ws.GetWallet(ctx, w.CompanyID, w.ID); after.PayoutBalance != 5000 {
		t.Fatalf("wallet = %+v", after)
	}
	e, err := ws.GetTransaction(ctx, w.CompanyID, refund.ID)
	if err != nil || *e.BalanceBefore != 3900 || *e.BalanceAfter != 5000 {
		t.Fatalf("refund entry = %+v, %v", e, err)
	}
	if err := wallets.VerifyLedger(ctx, ws, w.CompanyID); err != nil {
		t.Fatal(err)
	}
}

// TestCardAcceptRefusals: each failed condition is told by its item, and
// nothing is written.
func TestCardAcceptRefusals(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	s, ws := moneystore.NewCards(db), moneystore.NewWallets(db)
	w := usdWallet(t, db, 5000)
	c := issue(t, s, w, uuid.NewString(), 1000)
	w, _ = ws.GetWallet(ctx, w.CompanyID, w.ID)
	frozen := func(a cards.Accept) cards.Accept { a.From = []cards.Status{cards.Frozen}; return a }
	missing := c
	missing.ID = ids.NewV7(time.Now())
	otherWallet := w
	otherWallet.ID = uuid.NewString()
	tests := []struct {
		name   string
		accept cards.Accept
		want   error
	}{
		{"no slot left", issuance(w, uuid.NewString(), 100, 0, 1), cards.ErrNoSlots},
		{"no slots at all", issuance(w, uuid.NewString(), 100, 0, 0), cards.ErrNoSlots},
		{"wallet short", movement(w, c, cards.TxFunding, 3900, 101, true), wallets.ErrInsufficientWalletBalance},
		{"card not in From", frozen(movement(w, c, cards.TxFunding, 100, 0, true)), cards.ErrNotActive},
		{"card balance short", movement(w, c, cards.TxWithdrawal, 1001, 0, false), cards.ErrInsufficientCard},
		{"missing card", movement(w, missing, cards.TxFunding, 100, 0, true), cards.ErrNotFound},
		{"missing wallet", movement(otherWallet, c, cards.TxFunding, 100, 0, true), wallets.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := s.Accept(ctx, tt.accept); !errors.Is(err, tt.want) {
				t.Fatalf("Accept = %v, want %v", err, tt.want)
			}
		})
	}
	if got, _ := ws.GetWallet(ctx, w.CompanyID, w.ID); got.PayoutBalance != 4000 {
		t.Fatalf("wallet after refusals = %+v", got)
	}
	if got, _ := s.Card(ctx, c.CompanyID, c.ID); got.Balance != 1000 {
		t.Fatalf("card after refusals = %+v", got)
	}
	txs, err := s.Transactions(ctx, c.CompanyID)
	if n, _ := s.SlotsUsed(ctx, c.CompanyID); err != nil || len(txs) != 1 || n != 1 {
		t.Fatalf("%d transactions (%v), %d slots after refusals", len(txs), err, n)
	}
	if err := wallets.VerifyLedger(ctx, ws, w.CompanyID); err != nil {
		t.Fatal(err)
	}
}

// TestCardConcurrentAccepts: the wallet's and the slots' conditions hold
// under concurrent acceptances.
func TestCardConcurrentAccepts(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	s, ws := moneystore.NewCards(db), moneystore.NewWallets(db)
	// run calls accept n times at once and counts the outcomes.
	run := func(n int, accept func(i int) error) map[error]int {
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() { errs[i] = accept(i) })
		}
		wg.Wait()
		out := map[error]int{}
		for _, err := range errs {
			out[err]++
		}
		return out
	}

	t.Run("wallet debits", func(t *testing.T) {
		w := usdWallet(t, db, 0)
		c := issue(t, s, w, uuid.NewString(), 0)
		w = usdFund(t, ws, w, 10_000)
		got := run(20, func(int) error { return s.Accept(ctx, movement(w, c, cards.TxFunding, 1000, 0, true)) })
		if len(got) != 2 || got[nil] != 10 || got[wallets.ErrInsufficientWalletBalance] != 10 {
			t.Fatalf("outcomes = %v, want 10 successes and 10 ErrInsufficientWallet", got)
		}
		if after, _ := ws.GetWallet(ctx, w.CompanyID, w.ID); after.PayoutBalance != 0 || after.PayoutAvailable != 0 {
			t.Fatalf("wallet = %+v", after)
		}
		if err := wallets.VerifyLedger(ctx, ws, w.CompanyID); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("slots", func(t *testing.T) {
		w := usdWallet(t, db, 0)
		got := run(10, func(int) error { return s.Accept(ctx, issuance(w, uuid.NewString(), 0, 0, 3)) })
		if len(got) != 2 || got[nil] != 3 || got[cards.ErrNoSlots] != 7 {
			t.Fatalf("outcomes = %v, want 3 successes and 7 ErrNoSlots", got)
		}
		n, err := s.SlotsUsed(ctx, w.CompanyID)
		cs, _ := s.Cards(ctx, w.CompanyID)
		if err != nil || n != 3 || len(cs) != 3 {
			t.Fatalf("SlotsUsed = %d, %v; %d cards", n, err, len(cs))
		}
	})
}

// usdFund credits amount to w's payout balance through the ledger.
func usdFund(t *testing.T, ws *moneystore.Wallets, w wallets.Wallet, amount int64) wallets.Wallet {
	t.Helper()
	now := time.Now()
	e := fund(w, amount, now)
	e.Balance = wallets.Payout
	w, _, err := ws.ApplyChange(context.Background(), wallets.Change{CompanyID: w.CompanyID, WalletID: w.ID, Adjust: wallets.Adjustment{Payout: amount}, Entry: e, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// termination returns the termination of c as read, refunding to w what
// its holds do not keep.
func termination(w wallets.Wallet, c cards.Card) cards.Termination {
	now := timestamp.Of(time.Now())
	refund := c.Available()
	tx := cards.Transaction{
		ID: ids.NewV7(now), CompanyID: c.CompanyID, CardID: c.ID, CustomerID: c.CustomerID, WalletID: w.ID,
		Type: cards.TxTermination, Status: cards.TxSuccess, Amount: refund,
		CardDelta: -refund, WalletDelta: refund, CreatedAt: now, CompletedAt: &now,
	}
	t := cards.Termination{Card: c, Tx: tx, Events: []events.Event{cardEvent(c, events.CardTerminated, now)}, Now: now}
	if refund > 0 {
		t.Wallet = wallets.Adjustment{Payout: refund}
		t.Entries = []wallets.Transaction{{
			ID: ids.NewV7(now), CompanyID: c.CompanyID, WalletID: w.ID, Amount: refund, AmountWithFee: refund,
			NetAmount: refund, Currency: cards.Currency, Status: wallets.StatusSuccess, Type: wallets.TypeRefund,
			Reference: tx.ID, Balance: wallets.Payout, Delta: refund, CreatedAt: now, CompletedAt: &now,
		}}
	}
	return t
}

func TestCardTerminate(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	s, ws := moneystore.NewCards(db), moneystore.NewWallets(db)
	w := usdWallet(t, db, 5000)
	c := issue(t, s, w, uuid.NewString(), 1000)
	stale := issue(t, s, w, uuid.NewString(), 1000)
	if err := s.Accept(ctx, movement(w, stale, cards.TxWithdrawal, 200, 0, false)); err != nil {
		t.Fatal(err)
	}

	t.Run("refund", func(t *testing.T) {
		term := termination(w, c)
		if err := s.Terminate(ctx, term); err != nil {
			t.Fatalf("Terminate: %v", err)
		}
		got, _ := s.Card(ctx, c.CompanyID, c.ID)
		tx, err := s.Transaction(ctx, c.CompanyID, term.Tx.ID)
		if got.Status != cards.Terminated || got.Balance != 0 || err != nil || !reflect.DeepEqual(tx, term.Tx) {
			t.Fatalf("card %+v, transaction %+v, %v", got, tx, err)
		}
		if after, _ := ws.GetWallet(ctx, w.CompanyID, w.ID); after.PayoutBalance != 4000 {
			t.Fatalf("wallet after refund = %+v", after)
		}
		if n, _ := s.SlotsUsed(ctx, c.CompanyID); n != 1 {
			t.Fatalf("SlotsUsed = %d, want 1", n)
		}
	})

	terminated, missing := c, c
	terminated.Status = cards.Terminated
	missing.ID = uuid.NewString()
	tests := []struct {
		name string
		term cards.Termination
		want error
	}{
		{"balance changed since read", termination(w, stale), cards.ErrChanged},
		{"status changed since read", termination(w, c), cards.ErrChanged},
		{"already terminated", termination(w, terminated), cards.ErrTerminated},
		{"missing card", termination(w, missing), cards.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := s.Terminate(ctx, tt.term); !errors.Is(err, tt.want) {
				t.Fatalf("Terminate = %v, want %v", err, tt.want)
			}
		})
	}
	if after, _ := ws.GetWallet(ctx, w.CompanyID, w.ID); after.PayoutBalance != 4000 {
		t.Fatalf("wallet after refusals = %+v", after)
	}
	if n, _ := s.SlotsUsed(ctx, c.CompanyID); n != 1 {
		t.Fatalf("SlotsUsed after refusals = %d, want 1", n)
	}
	if err := wallets.VerifyLedger(ctx, ws, w.CompanyID); err != nil {
		t.Fatal(err)
	}
}

func TestCardSetStatus(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	s := moneystore.NewCards(db)
	w := usdWallet(t, db, 0)
	c := issue(t, s, w, uuid.NewString(), 0)
	tests := []struct {
		name     string
		company  string
		id       string
		from, to cards.Status
		locked   bool
		want     error
	}{
		{"freeze and lock", c.CompanyID, c.ID, cards.Active, cards.Frozen, true, nil},
		{"freeze again", c.CompanyID, c.ID, cards.Active, cards.Frozen, false, cards.ErrChanged},
		{"unfreeze", c.CompanyID, c.ID, cards.Frozen, cards.Active, false, nil},
		{"missing card", c.CompanyID, uuid.NewString(), cards.Active, cards.Frozen, false, cards.ErrNotFound},
		{"another company's card", uuid.NewString(), c.ID, cards.Active, cards.Frozen, false, cards.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := timestamp.Of(time.Now())
			got, err := s.SetStatus(ctx, tt.company, tt.id, tt.from, tt.to, tt.locked, now)
			if !errors.Is(err, tt.want) {
				t.Fatalf("SetStatus = %v, want %v", err, tt.want)
			}
			if err != nil {
				return
			}
			read, _ := s.Card(ctx, tt.company, tt.id)
			if got.Status != tt.to || got.IsLocked != tt.locked || !got.UpdatedAt.Equal(now) || !reflect.DeepEqual(got, read) {
				t.Fatalf("SetStatus = %+v; read %+v", got, read)
			}
		})
	}
	if _, err := s.SetStatus(ctx, c.CompanyID, c.ID, cards.Active, cards.Terminated, false, time.Now()); err == nil {
		t.Fatal("SetStatus to TERMINATED, which frees a slot, was accepted")
	}
}

func TestCardReveals(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	s := moneystore.NewCards(db)
	company, card := uuid.NewString(), uuid.NewString()
	base := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	var want []string // newest first
	for i := range 5 {
		at := base.Add(time.Duration(i) * time.Minute)
		r := cards.Reveal{ID: ids.NewV7(at), CompanyID: company, CardID: card, KeyID: "local", SourceIP: "198.51.100.7", UserAgent: "test", RequestID: "req", CreatedAt: at}
		if err := s.PutReveal(ctx, r); err != nil {
			t.Fatal(err)
		}
		want = append([]string{r.ID}, want...)
	}
	other := cards.Reveal{ID: ids.NewV7(base), CompanyID: company, CardID: uuid.NewString(), CreatedAt: base}
	if err := s.PutReveal(ctx, other); err != nil {
		t.Fatal(err)
	}
	var got []string
	req := page.Request{Page: 1, Limit: 2}
	for range 4 {
		res, err := s.Reveals(ctx, company, card, req)
		if err != nil || res.Total != 5 {
			t.Fatalf("Reveals = %+v, %v", res, err)
		}
		for _, r := range res.Items {
			if r.CardID != card || r.SourceIP != "198.51.100.7" {
				t.Fatalf("reveal %+v", r)
			}
			got = append(got, r.ID)
		}
		if res.Next == "" {
			break
		}
		req = page.Request{Page: req.Page + 1, Limit: 2, After: res.Next, Total: res.Total}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("reveals %v, want %v", got, want)
	}
}

// TestCardLists: a customer's cards, the company's cards and
// transactions, and nothing of another company.
func TestCardLists(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	s := moneystore.NewCards(db)
	w := usdWallet(t, db, 0)
	alice, bob := uuid.NewString(), uuid.NewString()
	a1, b1, a2 := issue(t, s, w, alice, 0), issue(t, s, w, bob, 0), issue(t, s, w, alice, 0)
	idsOf := func(cs []cards.Card, err error) []string {
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	if got := idsOf(s.CustomerCards(ctx, w.CompanyID, alice)); !slices.Equal(got, []string{a1.ID, a2.ID}) {
		t.Fatalf("CustomerCards = %v", got)
	}
	if got := idsOf(s.Cards(ctx, w.CompanyID)); !slices.Equal(got, []string{a1.ID, b1.ID, a2.ID}) {
		t.Fatalf("Cards = %v", got)
	}
	txs, err := s.Transactions(ctx, w.CompanyID)
	if err != nil || len(txs) != 3 || txs[1].CardID != b1.ID {
		t.Fatalf("Transactions = %+v, %v", txs, err)
	}

	other := uuid.NewString()
	if _, err := s.Card(ctx, other, a1.ID); !errors.Is(err, cards.ErrNotFound) {
		t.Fatalf("another company's card: %v", err)
	}
	if _, err := s.Transaction(ctx, other, txs[0].ID); !errors.Is(err, cards.ErrTransactionNotFound) {
		t.Fatalf("another company's transaction: %v", err)
	}
	if cs, err := s.Cards(ctx, other); err != nil || len(cs) != 0 {
		t.Fatalf("another company's cards: %v, %v", cs, err)
	}
	if n, err := s.SlotsUsed(ctx, other); err != nil || n != 0 {
		t.Fatalf("another company's slots: %d, %v", n, err)
	}
}

// TestCardAcceptRetriesConflicts: an acceptance cancelled for a conflict
// is tried again, and written once.
func TestCardAcceptRetriesConflicts(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	w := usdWallet(t, db, 5000)
	conflicting, calls := storetest.WithConflicts(db, 2)
	a := issuance(w, uuid.NewString(), 1000, 0, 5)
	if err := moneystore.NewCards(conflicting).Accept(ctx, a); err != nil || calls.Load() != 3 {
		t.Fatalf("Accept = %v after %d calls, want success after 3", err, calls.Load())
	}
	s := moneystore.NewCards(db)
	if n, _ := s.SlotsUsed(ctx, w.CompanyID); n != 1 {
		t.Fatalf("SlotsUsed = %d", n)
	}
	if err := wallets.VerifyLedger(ctx, moneystore.NewWallets(db), w.CompanyID); err != nil {
		t.Fatal(err)
	}
}
