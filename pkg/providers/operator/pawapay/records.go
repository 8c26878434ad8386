package pawapay

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"payments/pkg/money"
	"payments/pkg/providers/operator"
)

var _ operator.Records = (*Client)(nil)

// recorded is the part of a status check's data the reconciliation reads:
// the amount, a decimal string in major units, and its currency.
type recorded struct {
	Data *struct {
		Amount   string `json:"amount"`
		Currency string `json:"currency"`
	} `json:"data"`
}

// Payment checks the payout or deposit submitted with our reference, as
// Lookup does (GET /v2/payouts/{id}, GET /v2/deposits/{id}), and reads the
// amount and currency pawaPay holds for it.
func (c *Client) Payment(ctx context.Context, k operator.Kind, reference string) (operator.Record, error) {
	res, err := c.Lookup(ctx, k, reference)
	if err != nil {
		return operator.Record{}, err
	}
	var r recorded
	if err := json.Unmarshal(res.Raw, &r); err != nil || r.Data == nil || r.Data.Currency == "" {
		return operator.Record{}, fmt.Errorf("%w: pawapay: a status answer without its amount", operator.ErrUnavailable)
	}
	amount, err := money.ParseMajor(r.Data.Amount, r.Data.Currency)
	if err != nil {
		return operator.Record{}, fmt.Errorf("%w: pawapay: the amount %q %s: %v", operator.ErrUnavailable, r.Data.Amount, r.Data.Currency, err)
	}
	return operator.Record{Result: res, Amount: amount, Currency: r.Data.Currency}, nil
}

// walletBalances is pawaPay's answer to GET /v2/wallet-balances.
type walletBalances struct {
	Balances []struct {
		Country  string `json:"country"`
		Balance  string `json:"balance"`
		Currency string `json:"currency"`
	} `json:"balances"`
}

// Balances reads the balances of the account's wallets (GET
// /v2/wallet-balances, the v2 wallet balances page): one per country, or per
// provider for a wallet a single provider pays from. A wallet in a
// currency we do not serve holds none of our money and is left out.
func (c *Client) Balances(ctx context.Context) ([]operator.Balance, error) {
	code, raw, err := c.call(ctx, http.MethodGet, "/v2/wallet-balances", nil)
	if err != nil {
		return nil, err
	}
	if code != http.StatusOK {
		return nil, fmt.Errorf("%w: pawapay: wallet balances answered %d", operator.ErrUnavailable, code)
	}
	var a walletBalances
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, fmt.Errorf("%w: pawapay: malformed wallet balances", operator.ErrUnavailable)
	}
	var out []operator.Balance
	for _, b := range a.Balances {
		if !money.Supported(b.Currency) {
			continue
		}
		amount, err := money.ParseMajor(b.Balance, b.Currency)
		if err != nil {
			return nil, fmt.Errorf("%w: pawapay: the balance %q %s of %s: %v", operator.ErrUnavailable, b.Balance, b.Currency, b.Country, err)
		}
		out = append(out, operator.Balance{Country: b.Country, Currency: b.Currency, Amount: amount})
	}
	return out, nil
}
