package moneystore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"payments/pkg/fx"
	"payments/pkg/ids"
	"payments/pkg/store/moneystore"
	"payments/pkg/store/storetest"
)

// TestRateVersions sets a pair's rate twice: the pair has one current
// rate, every version stays readable by its id, a write conditioned on a
// version no longer current is fx.ErrChanged, and an id that was never a
// version of the company is fx.ErrNoRate.
func TestRateVersions(t *testing.T) {
	ctx := context.Background()
	rates := moneystore.NewRates(storetest.NewDB(t))
	company := uuid.NewString()
	now := time.Now().UTC().Truncate(time.Millisecond)
	rate := func(value string) fx.Rate {
		return fx.Rate{CompanyID: company, From: "XAF", To: "USD", Value: decimal.RequireFromString(value), ID: ids.NewV7(now), UpdatedAt: now}
	}
	first, second := rate("0.0016"), rate("0.0017")
	if err := rates.PutRate(ctx, first, ""); err != nil {
		t.Fatal(err)
	}
	if err := rates.PutRate(ctx, second, first.ID); err != nil {
		t.Fatal(err)
	}
	if err := rates.PutRate(ctx, rate("0.0018"), first.ID); !errors.Is(err, fx.ErrChanged) {
		t.Errorf("a write at a version no longer current: %v", err)
	}
	if cur, err := rates.Rate(ctx, company, "XAF", "USD"); err != nil || cur.ID != second.ID || cur.Value.String() != "0.0017" {
		t.Errorf("current rate %+v, %v", cur, err)
	}
	if all, err := rates.Rates(ctx, company); err != nil || len(all) != 1 {
		t.Errorf("rates %+v, %v: the versions are not current rates", all, err)
	}
	for _, want := range []fx.Rate{first, second} {
		got, err := rates.Version(ctx, company, want.ID)
		if err != nil || got.ID != want.ID || !got.Value.Equal(want.Value) || got.From != "XAF" || got.To != "USD" || got.CompanyID != company {
			t.Errorf("version %s: %+v, %v", want.ID, got, err)
		}
	}
	if _, err := rates.Version(ctx, company, ids.NewV7(now)); !errors.Is(err, fx.ErrNoRate) {
		t.Errorf("an unknown version: %v", err)
	}
	if _, err := rates.Version(ctx, uuid.NewString(), first.ID); !errors.Is(err, fx.ErrNoRate) {
		t.Errorf("another company's version: %v", err)
	}
}
