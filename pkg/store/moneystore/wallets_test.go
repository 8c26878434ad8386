package moneystore_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"payments/pkg/store/moneystore"
	"payments/pkg/store/storetest"
	"payments/pkg/wallets"
)

func newWallet(companyID, currency, iso string) wallets.Wallet {
	now := time.Date(2025, 3, 1, 12, 0, 0, 123_000_000, time.UTC)
	return wallets.Wallet{
		ID:               uuid.NewString(),
		CompanyID:        companyID,
		Currency:         currency,
		Country:          "Somewhere",
		CountryISOCode:   iso,
		CountryPhoneCode: "+237",
		IsActive:         true,
		Version:          1,
		CreatedAt:        now,
		UpdatedAt:        now,
	}
}

func TestWalletsStore(t *testing.T) {
	db := storetest.NewDB(t)
	s := moneystore.NewWallets(db)
	ctx := context.Background()
	companyA, companyB := uuid.NewString(), uuid.NewString()
	xaf := newWallet(companyA, "XAF", "CM")
	usd := newWallet(companyA, "USD", "US")
	for _, w := range []wallets.Wallet{xaf, usd} {
		if err := s.CreateWallet(ctx, w); err != nil {
			t.Fatalf("CreateWallet %s: %v", w.Currency, err)
		}
	}

	t.Run("pair is unique within a company", func(t *testing.T) {
		tests := []struct {
			name string
			w    wallets.Wallet
			want error
		}{
			{"same pair", newWallet(companyA, "XAF", "CM"), wallets.ErrExists},
			{"same currency other country", newWallet(companyA, "XAF", "GA"), nil},
			{"same pair other company", newWallet(companyB, "XAF", "CM"), nil},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if err := s.CreateWallet(ctx, tt.w); !errors.Is(err, tt.want) {
					t.Fatalf("CreateWallet = %v, want %v", err, tt.want)
				}
			})
		}
	})

	t.Run("concurrent creation of one pair makes one wallet", func(t *testing.T) {
		company := uuid.NewString()
		var wg sync.WaitGroup
		errs := make([]error, 10)
		for i := range errs {
			wg.Go(func() { errs[i] = s.CreateWallet(ctx, newWallet(company, "XOF", "CI")) })
		}
		wg.Wait()
		created := 0
		for _, err := range errs {
			switch {
			case err == nil:
				created++
			case !errors.Is(err, wallets.ErrExists):
				t.Errorf("CreateWallet: %v", err)
			}
		}
		ws, err := s.ListWallets(ctx, company)
		if created != 1 || err != nil || len(ws) != 1 {
			t.Fatalf("created %d, listed %d (%v), want 1", created, len(ws), err)
		}
	})

	t.Run("get, list and lookup", func(t *testing.T) {
		got, err := s.GetWallet(ctx, companyA, xaf.ID)
		if err != nil {
			t.Fatalf("GetWallet: %v", err)
		}
		if got != xaf {
			t.Fatalf("GetWallet = %+v, want %+v", got, xaf)
		}
		ws, err := s.ListWallets(ctx, companyA)
		if err != nil || len(ws) != 3 {
			t.Fatalf("ListWallets = %d wallets, %v; want 3", len(ws), err)
		}
		cid, err := s.WalletCompany(ctx, usd.ID)
		if err != nil || cid != companyA {
			t.Fatalf("WalletCompany = %q, %v", cid, err)
		}
	})

	t.Run("another company's wallet is not found", func(t *testing.T) {
		tests := []struct {
			name string
			get  func() error
		}{
			{"GetWallet", func() error { _, err := s.GetWallet(ctx, companyB, xaf.ID); return err }},
			{"GetWallet unknown", func() error { _, err := s.GetWallet(ctx, companyA, uuid.NewString()); return err }},
			{"WalletCompany unknown", func() error { _, err := s.WalletCompany(ctx, uuid.NewString()); return err }},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if err := tt.get(); !errors.Is(err, wallets.ErrNotFound) {
					t.Fatalf("err = %v, want ErrNotFound", err)
				}
			})
		}
		ws, err := s.ListWallets(ctx, uuid.NewString())
		if err != nil || len(ws) != 0 {
			t.Fatalf("ListWallets of a company without wallets = %v, %v", ws, err)
		}
	})
}
