package pawapaysim

import (
	"cmp"
	"net/http"
	"slices"

	"payments/pkg/money"
)

// DefaultFloat is what each country wallet of simulated pawaPay holds
// before any payment, in major units of its currency, when Config.Float is
// zero.
const DefaultFloat = 100_000_000

// wallet is one country wallet of the simulation.
type wallet struct{ country, currency string }

// balances answers GET /v2/wallet-balances (the v2 wallet balances page):
// {"balances": [{"country", "balance", "currency", "provider"}]}, one
// wallet per country of the providers it serves, each holding the float
// less the payouts it completed, plus the deposits it completed; the
// balance is a decimal string in major units, provider "" (a wallet every
// provider of the country pays from).
func (s *Sim) balances(w http.ResponseWriter, _ *http.Request) {
	held := map[wallet]int64{}
	for _, p := range providers {
		exp, err := money.Exponent(p.currency)
		if err != nil {
			continue
		}
		held[wallet{p.country, p.currency}] = s.cfg.Float * pow10(exp)
	}
	s.mu.Lock()
	for _, r := range s.held {
		p := providers[r.in.provider]
		if r.status != "COMPLETED" {
			continue
		}
		amount, err := money.ParseMajor(r.in.amount, p.currency)
		if err != nil {
			continue
		}
		if r.kind == "payout" {
			amount = -amount
		}
		held[wallet{p.country, p.currency}] += amount
	}
	s.mu.Unlock()
	wallets := make([]wallet, 0, len(held))
	for wl := range held {
		wallets = append(wallets, wl)
	}
	slices.SortFunc(wallets, func(a, b wallet) int { return cmp.Compare(a.country, b.country) })
	out := make([]map[string]string, len(wallets))
	for i, wl := range wallets {
		out[i] = map[string]string{"country": wl.country, "balance": money.Format(held[wl], wl.currency),
			"currency": wl.currency, "provider": ""}
	}
	writeJSON(w, http.StatusOK, map[string]any{"balances": out})
}

func pow10(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}
