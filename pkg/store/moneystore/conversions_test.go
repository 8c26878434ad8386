package moneystore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"payments/pkg/events"
	"payments/pkg/fx"
	"payments/pkg/ids"
	"payments/pkg/store/moneystore"
	"payments/pkg/store/storetest"
	"payments/pkg/timestamp"
	"payments/pkg/wallets"
)

// TestMoveChecksItsConditions moves money from an XAF wallet's payin
// balance to a USD wallet's payout balance: at a rate version no longer
// current the transaction's ConditionCheck refuses it (fx.ErrRateChanged),
// past the payin balance the wallet's condition does
// (wallets.ErrInsufficientWalletBalance), and neither moves anything; at the current
// version it moves both balances and writes both entries.
func TestMoveChecksItsConditions(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	ws, rates, mover := moneystore.NewWallets(db), moneystore.NewRates(db), moneystore.NewConversions(db)
	company := uuid.NewString()
	xaf, usd := newWallet(company, "XAF", "CM"), newWallet(company, "USD", "US")
	now := time.Now().UTC().Truncate(time.Millisecond)
	for _, w := range []wallets.Wallet{xaf, usd} {
		if err := ws.CreateWallet(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := ws.ApplyChange(ctx, wallets.Change{
		CompanyID: company, WalletID: xaf.ID, Adjust: wallets.Adjustment{Payin: 1000}, Now: now,
		Entry: wallets.Transaction{ID: ids.NewV7(now), CompanyID: company, WalletID: xaf.ID, Amount: 1000, Currency: "XAF",
			Status: wallets.StatusSuccess, Type: wallets.TypeFund, Reference: "opening", Balance: wallets.Payin, Delta: 1000, CreatedAt: now},
	}); err != nil {
		t.Fatal(err)
	}
	rate := func(value string) fx.Rate {
		return fx.Rate{CompanyID: company, From: "XAF", To: "USD", Value: decimal.RequireFromString(value), ID: ids.NewV7(now), UpdatedAt: now}
	}
	stale, current := rate("0.0016"), rate("0.0017")
	if err := rates.PutRate(ctx, stale, ""); err != nil {
		t.Fatal(err)
	}
	if err := rates.PutRate(ctx, current, stale.ID); err != nil {
		t.Fatal(err)
	}
	movement := func(r fx.Rate, debit, credit int64) fx.Movement {
		id := ids.NewV7(now)
		entry := func(w wallets.Wallet, b wallets.SubBalance, delta int64) wallets.Transaction {
			return wallets.Transaction{ID: ids.NewV7(now), CompanyID: company, WalletID: w.ID, Amount: max(delta, -delta), Currency: w.Currency,
				Status: wallets.StatusSuccess, Type: wallets.TypeTransfer, Reference: id, Balance: b, Delta: delta, CreatedAt: now}
		}
		ev, err := events.Build(company, events.WalletConversionCompletedData{ConversionID: id, CompletedAt: timestamp.Format(now)}, now)
		if err != nil {
			t.Fatal(err)
		}
		return fx.Movement{ID: id, CompanyID: company, Rate: r, Source: entry(xaf, wallets.Payin, -debit),
			Destination: entry(usd, wallets.Payout, credit), Event: ev, Now: now}
	}

	tests := []struct {
		name          string
		m             fx.Movement
		want          error
		payin, payout int64 // after
		returnedPayin int64
	}{
		{"at a stale version", movement(stale, 500, 80), fx.ErrRateChanged, 1000, 0, 0},
		{"past the payin balance", movement(current, 1001, 170), wallets.ErrInsufficientWalletBalance, 1000, 0, 0},
		{"at the current version", movement(current, 500, 85), nil, 500, 85, 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, _, err := mover.Move(ctx, tt.m)
			if !errors.Is(err, tt.want) || src.PayinBalance != tt.returnedPayin {
				t.Fatalf("Move: %v, source after %d; want %v, %d", err, src.PayinBalance, tt.want, tt.returnedPayin)
			}
			x, _ := ws.GetWallet(ctx, company, xaf.ID)
			u, _ := ws.GetWallet(ctx, company, usd.ID)
			if x.PayinBalance != tt.payin || u.PayoutBalance != tt.payout || u.PayoutAvailable != tt.payout {
				t.Errorf("payin %d, payout %d (available %d); want %d, %d", x.PayinBalance, u.PayoutBalance, u.PayoutAvailable, tt.payin, tt.payout)
			}
			if err := wallets.VerifyLedger(ctx, ws, company); err != nil {
				t.Error(err)
			}
		})
	}
}
