// Package fx holds each company's exchange rates and prices conversions
// between its wallets' currencies.
//
// A company has at most one current rate per (from, to) currency pair, set
// by the operator console. Each rate has a version, its ID
// (exchangeRateId): a new UUID every time the rate changes. A quote names
// the version it was made at, and money moves only at that version: the
// DynamoDB transaction that moves it checks that the pair's version is
// still the quoted one (a ConditionCheck), so a rate change racing with a
// conversion either comes before it (the conversion is refused:
// ErrRateChanged) or after it (the conversion ran at the quoted rate).
//
// Rates are exact decimals (money.ParseRate); a converted amount is
// amount × rate rounded to the destination currency's minor unit by the
// one rule of pkg/money (money.Convert).
package fx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"payments/pkg/fees"
	"payments/pkg/field"
	"payments/pkg/ids"
	"payments/pkg/money"
	"payments/pkg/timestamp"
)

// Errors of this package; the catalogue (pkg/function/errors.go) maps them to HTTP.
var (
	// ErrNoRate is a pair with no rate configured (spec §7: "no exchange
	// rate configured for the pair").
	ErrNoRate = errors.New("fx: no exchange rate configured for the pair")
	// ErrRateChanged is a quote whose rate version is no longer current.
	ErrRateChanged = errors.New("fx: exchange rate has changed; request a new quote")
	// ErrChanged is a rate another request changed first; the request may
	// be repeated.
	ErrChanged = errors.New("fx: rate changed by another request")
)

// Rate is the current exchange rate of a company's currency pair: Value
// units of To per unit of From.
type Rate struct {
	CompanyID string
	From, To  string
	Value     decimal.Decimal
	// ID is the rate's version, the exchangeRateId of its quotes.
	ID        string
	UpdatedAt time.Time
}

// Store keeps the rates.
type Store interface {
	// Rate reads the company's current rate of from → to; ErrNoRate when
	// there is none.
	Rate(ctx context.Context, companyID, from, to string) (Rate, error)
	// Rates reads every current rate of the company.
	Rates(ctx context.Context, companyID string) ([]Rate, error)
	// PutRate makes r the current rate of its pair on the condition that
	// the pair's version is still previous ("" for a pair with no rate),
	// ErrChanged otherwise, and keeps r as version r.ID.
	PutRate(ctx context.Context, r Rate, previous string) error
	// Version reads version id of one of the company's rates, as it was
	// made current, current or not; ErrNoRate when there is none.
	Version(ctx context.Context, companyID, id string) (Rate, error)
}

// Fees prices an operation.
type Fees interface {
	Quote(ctx context.Context, companyID, typ, operator, country, currency string, amount int64) (fees.Quote, error)
}

// Service reads, sets and quotes rates.
type Service struct {
	Store Store
	Fees  Fees
	// Now returns the current time; tests may replace it.
	Now func() time.Time
}

// NewService returns a Service over store, pricing conversions with fs.
func NewService(store Store, fs Fees) *Service {
	return &Service{Store: store, Fees: fs, Now: time.Now}
}

// RateInput is one rate of PUT /admin/companies/{id}/exchange-rates.
type RateInput struct {
	FromCurrency string          `json:"from_currency"`
	ToCurrency   string          `json:"to_currency"`
	Rate         json.RawMessage `json:"rate"`
}

// SetRatesInput is the body of PUT /admin/companies/{id}/exchange-rates.
type SetRatesInput struct {
	Rates []RateInput `json:"rates"`
}

// maxRates bounds the rates of one PUT.
const maxRates = 50

// SetRates upserts the company's rates: a pair whose rate changes gets a new
// version, an unchanged one keeps its own. Every rate is checked before any
// is written; each pair is written on its own, conditioned on its version.
// It returns the company's current rates.
func (s *Service) SetRates(ctx context.Context, companyID string, in SetRatesInput) ([]Rate, error) {
	switch {
	case in.Rates == nil:
		return nil, field.Invalid("rates", "is required")
	case len(in.Rates) > maxRates:
		return nil, field.Invalid("rates", fmt.Sprintf("must hold at most %d rates", maxRates))
	}
	now := timestamp.Of(s.Now())
	rates := make([]Rate, len(in.Rates))
	seen := map[[2]string]bool{}
	for i, ri := range in.Rates {
		r, err := parseRate(i, ri)
		if err != nil {
			return nil, err
		}
		pair := [2]string{r.From, r.To}
		if seen[pair] {
			return nil, field.Invalid(fmt.Sprintf("rates[%d]", i), "names a pair named before")
		}
		seen[pair] = true
		r.CompanyID, r.UpdatedAt = companyID, now
		rates[i] = r
	}
	for _, r := range rates {
		cur, err := s.Store.Rate(ctx, companyID, r.From, r.To)
		switch {
		case errors.Is(err, ErrNoRate):
		case err != nil:
			return nil, err
		case cur.Value.Equal(r.Value):
			continue
		}
		r.ID = ids.NewV7(now)
		if err := s.Store.PutRate(ctx, r, cur.ID); err != nil {
			return nil, err
		}
	}
	return s.Store.Rates(ctx, companyID)
}

// parseRate reads rate i of a PUT.
func parseRate(i int, ri RateInput) (Rate, error) {
	at := func(name string) string { return fmt.Sprintf("rates[%d].%s", i, name) }
	from, to := ri.FromCurrency, ri.ToCurrency
	switch {
	case !money.Supported(from):
		return Rate{}, field.Invalid(at("from_currency"), "must be one of "+currencies())
	case !money.Supported(to):
		return Rate{}, field.Invalid(at("to_currency"), "must be one of "+currencies())
	case from == to:
		return Rate{}, field.Invalid(at("to_currency"), "must differ from from_currency")
	}
	text, err := money.Number(ri.Rate)
	if err != nil {
		return Rate{}, field.Invalid(at("rate"), err.Error())
	}
	if text == "" {
		return Rate{}, field.Invalid(at("rate"), "is required")
	}
	v, err := money.ParseRate(text)
	if err != nil {
		return Rate{}, field.Invalid(at("rate"), strings.TrimPrefix(err.Error(), money.ErrInvalidRate.Error()+": "))
	}
	return Rate{From: from, To: to, Value: v}, nil
}

// currencies lists the supported currencies, for messages.
func currencies() string { return strings.Join(money.Currencies(), ", ") }

// FeeIn is where a movement between two currencies charges its CONVERSION
// fee.
type FeeIn int

const (
	// FeeInSource charges the fee in the source's currency, on the amount,
	// on top of it: the source is debited the amount plus the fee and the
	// destination credited all the amount converts to. A deposit (spec
	// §4.9) and its quote (§4.10) are priced so.
	FeeInSource FeeIn = iota
	// FeeInDestination charges the fee in the destination's currency, on
	// the converted amount, out of it (at most all of it): the source is
	// debited the amount and the destination credited the converted amount
	// less the fee. A conversion to the USD wallet (spec §4.8) and its
	// preview are priced so.
	FeeInDestination
)

// Quote is the price of converting Amount of From into To at Rate, with
// the CONVERSION fee charged in FeeCurrency (From or To, as FeeIn says).
// Amounts are in minor units.
type Quote struct {
	Rate Rate
	// Amount is what is converted, in From; Converted is Amount × Rate, in
	// To.
	Amount    int64
	Converted int64
	// Fee is the CONVERSION fee, in FeeCurrency.
	Fee         int64
	FeeCurrency string
	// Total is what leaves the source, in From: Amount, plus Fee when the
	// fee is charged in From. Net is what reaches the destination, in To:
	// Converted, less Fee when the fee is charged in To.
	Total int64
	Net   int64
}

// Rate returns the company's current rate of from → to; ErrNoRate when
// there is none.
func (s *Service) Rate(ctx context.Context, companyID, from, to string) (Rate, error) {
	return s.Store.Rate(ctx, companyID, from, to)
}

// Quote prices the deposit of amount (minor units of from) into to at the
// company's current rate (POST /company/exchange-rates/convert): the
// CONVERSION fee in from, on top of the amount.
func (s *Service) Quote(ctx context.Context, companyID, from, to string, amount int64) (Quote, error) {
	r, err := s.Store.Rate(ctx, companyID, from, to)
	if err != nil {
		return Quote{}, err
	}
	q, err := s.price(ctx, r, amount, FeeInSource)
	if errors.Is(err, money.ErrOutOfRange) {
		return Quote{}, field.Invalid("amount", err.Error())
	}
	return q, err
}

// price prices amount (minor units of r.From) at rate r, the CONVERSION
// fee charged as in says, rounded by the one rule of pkg/money: the one
// place a quote, a deposit, a conversion and its preview are priced, so
// that each moves what its quote showed. A converted amount too large is
// money.ErrOutOfRange.
func (s *Service) price(ctx context.Context, r Rate, amount int64, in FeeIn) (Quote, error) {
	converted, err := money.Convert(amount, r.From, r.To, r.Value)
	if err != nil {
		return Quote{}, err
	}
	q := Quote{Rate: r, Amount: amount, Converted: converted, FeeCurrency: r.From, Total: amount, Net: converted}
	on := amount
	if in == FeeInDestination {
		q.FeeCurrency, on = r.To, converted
	}
	f, err := s.Fees.Quote(ctx, r.CompanyID, fees.TypeConversion, "", "", q.FeeCurrency, on)
	if err != nil {
		return Quote{}, fmt.Errorf("fx: price the conversion: %w", err)
	}
	switch in {
	case FeeInDestination:
		q.Fee = min(f.Fee, converted)
		q.Net -= q.Fee
	default:
		q.Fee = f.Fee
		q.Total += q.Fee
	}
	return q, nil
}
