package fx_test

import (
	"strings"
	"testing"

	"payments/pkg/fx"
	"payments/pkg/store/moneystore"
	"payments/pkg/wallets"
)

// TestNewConverterRefusesMissingDeps: the converter, which moves money, is
// never built without a dependency it needs, and the error names it; its
// events may be left to the sweeper.
func TestNewConverterRefusesMissingDeps(t *testing.T) {
	t.Parallel()
	rates := fx.NewService(moneystore.NewRates(nil), nil)
	var ws *wallets.Service // the interface holds a value: only a missing one is refused
	mover := moneystore.NewConversions(nil)
	if c, err := fx.NewConverter(rates, ws, mover, nil); err != nil || c == nil {
		t.Fatalf("every dependency given, no events: %v, %v", c, err)
	}
	tests := []struct {
		missing string
		build   func() (*fx.Converter, error)
	}{
		{"Rates", func() (*fx.Converter, error) { return fx.NewConverter(nil, ws, mover, nil) }},
		{"Wallets", func() (*fx.Converter, error) { return fx.NewConverter(rates, nil, mover, nil) }},
		{"Store", func() (*fx.Converter, error) { return fx.NewConverter(rates, ws, nil, nil) }},
	}
	for _, tt := range tests {
		if c, err := tt.build(); err == nil || c != nil || !strings.Contains(err.Error(), tt.missing) {
			t.Errorf("NewConverter without %s = %v, %v; want an error naming it", tt.missing, c, err)
		}
	}
}
