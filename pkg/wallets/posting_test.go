package wallets_test

import (
	"errors"
	"testing"
	"time"

	"payments/pkg/wallets"
)

func TestNewPosting(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	w := wallets.Wallet{ID: "w1", CompanyID: "c1", Currency: "XAF"}
	other := wallets.Wallet{ID: "w2", CompanyID: "c1", Currency: "USD"}
	debit := wallets.Completed("e1", w, wallets.TypeTransfer, "t1", wallets.Payin, -300, now)
	credit := wallets.Completed("e2", w, wallets.TypeTransfer, "t1", wallets.Payout, 300, now)
	reserve := wallets.Transaction{ID: "e3", CompanyID: "c1", WalletID: "w1", Status: wallets.StatusPending, Balance: wallets.Payout, Reserved: 500}
	settle := wallets.EntryUpdate{ID: "e3", Balance: wallets.Payout, From: wallets.StatusProcessing, To: wallets.StatusSuccess, Delta: -500, Held: 500}
	processing := wallets.EntryUpdate{ID: "e3", Balance: wallets.Payout, From: wallets.StatusPending, To: wallets.StatusProcessing, Held: 500, Reserved: 500}
	tests := []struct {
		name string
		legs []wallets.Leg
		ok   bool
	}{
		{"a transfer between sub-balances", []wallets.Leg{{WalletID: "w1", Adjust: wallets.Adjustment{Payin: -300, Payout: 300}, Entries: []wallets.Transaction{debit, credit}}}, true},
		{"a reservation", []wallets.Leg{{WalletID: "w1", Adjust: wallets.Adjustment{Reserved: 500}, Entries: []wallets.Transaction{reserve}}}, true},
		{"a reservation settled", []wallets.Leg{{WalletID: "w1", Adjust: wallets.Adjustment{Payout: -500, Reserved: -500}, Updates: []wallets.EntryUpdate{settle}}}, true},
		{"a reservation that stays open", []wallets.Leg{{WalletID: "w1", Updates: []wallets.EntryUpdate{processing}}}, true},
		{"two wallets", []wallets.Leg{
			{WalletID: "w1", Adjust: wallets.Adjustment{Payin: -300}, Entries: []wallets.Transaction{debit}},
			{WalletID: "w2", Adjust: wallets.Adjustment{Payout: 300}, Entries: []wallets.Transaction{wallets.Completed("e4", other, wallets.TypeTransfer, "t1", wallets.Payout, 300, now)}},
		}, true},
		{"an entry short of the adjustment", []wallets.Leg{{WalletID: "w1", Adjust: wallets.Adjustment{Payin: -301}, Entries: []wallets.Transaction{debit}}}, false},
		{"an adjustment without its entry", []wallets.Leg{{WalletID: "w1", Adjust: wallets.Adjustment{Payout: 300}}}, false},
		{"a reservation that is not held", []wallets.Leg{{WalletID: "w1", Adjust: wallets.Adjustment{Reserved: 1}, Entries: []wallets.Transaction{credit}}}, false},
		{"a settlement whose adjustment keeps the reservation", []wallets.Leg{{WalletID: "w1", Adjust: wallets.Adjustment{Payout: -500}, Updates: []wallets.EntryUpdate{{ID: "e3", Balance: wallets.Payout, From: wallets.StatusPending, To: wallets.StatusSuccess, Delta: -500, Held: 500}}}}, false},
		{"a final entry updated", []wallets.Leg{{WalletID: "w1", Updates: []wallets.EntryUpdate{{ID: "e3", Balance: wallets.Payout, From: wallets.StatusSuccess, To: wallets.StatusFailed}}}}, false},
		{"another wallet's entry", []wallets.Leg{{WalletID: "w2", Adjust: wallets.Adjustment{Payin: -300}, Entries: []wallets.Transaction{debit}}}, false},
		{"an entry on no sub-balance", []wallets.Leg{{WalletID: "w1", Entries: []wallets.Transaction{{ID: "e5", CompanyID: "c1", WalletID: "w1", Status: wallets.StatusSuccess}}}}, false},
		{"a wallet twice", []wallets.Leg{{WalletID: "w1"}, {WalletID: "w1"}}, false},
		{"a bulk item settled out of its batch's reservation", []wallets.Leg{{WalletID: "w1", Adjust: wallets.Adjustment{Payout: -500, Reserved: -500},
			Entries: []wallets.Transaction{wallets.Completed("e6", w, wallets.TypeWithdraw, "x1", wallets.Payout, -500, now)},
			Draws:   []wallets.EntryDraw{{ID: "b1", Amount: 500}}}}, true},
		{"a draw the adjustment does not release", []wallets.Leg{{WalletID: "w1", Draws: []wallets.EntryDraw{{ID: "b1", Amount: 500}}}}, false},
		{"a draw of nothing", []wallets.Leg{{WalletID: "w1", Draws: []wallets.EntryDraw{{ID: "b1"}}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := wallets.NewPosting("c1", now, tt.legs...)
			if tt.ok != (err == nil) || (!tt.ok && !errors.Is(err, wallets.ErrUnbalanced)) {
				t.Fatalf("NewPosting = %v, want ok %v", err, tt.ok)
			}
			if tt.ok && (p.CompanyID != "c1" || !p.Now.Equal(now) || len(p.Legs) != len(tt.legs)) {
				t.Fatalf("posting = %+v", p)
			}
		})
	}
}

func TestCompleted(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	w := wallets.Wallet{ID: "w1", CompanyID: "c1", Currency: "USD"}
	e := wallets.Completed("e1", w, wallets.TypeFee, "d1", wallets.Payout, -250, now)
	want := wallets.Transaction{
		ID: "e1", CompanyID: "c1", WalletID: "w1", Amount: 250, AmountWithFee: 250, NetAmount: 250, Currency: "USD",
		Status: wallets.StatusSuccess, Type: wallets.TypeFee, Reference: "d1", Balance: wallets.Payout, Delta: -250,
		CreatedAt: now, CompletedAt: &now,
	}
	if e.CompletedAt == nil || !e.CompletedAt.Equal(now) {
		t.Fatalf("CompletedAt = %v", e.CompletedAt)
	}
	e.CompletedAt, want.CompletedAt = nil, nil
	if e != want {
		t.Fatalf("Completed = %+v, want %+v", e, want)
	}
}
