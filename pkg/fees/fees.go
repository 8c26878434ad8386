// Package fees holds each company's fee schedule and computes fees.
//
// A fee is fixed + percent of the amount. The percent part is rounded by the
// one rule of pkg/money (half away from zero, at the minor unit); the fixed
// part is in the rule's currency. A schedule is a list of rules; for a given
// (type, operator, country, currency) the most specific matching rule wins,
// where a rule's empty operator, country or currency matches any.
package fees

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"payments/pkg/cache"
	"payments/pkg/countries"
	"payments/pkg/field"
	"payments/pkg/money"
)

// Fee types: what the fee is charged on.
const (
	TypePayout     = "PAYOUT"
	TypeCollection = "COLLECTION"
	// TypeCardIssuance is charged on issuing a card, TypeCardFunding on
	// moving money from the USD wallet onto a card, TypeCardWithdrawal on
	// moving it back; all in USD.
	TypeCardIssuance   = "CARD_ISSUANCE"
	TypeCardFunding    = "CARD_FUNDING"
	TypeCardWithdrawal = "CARD_WITHDRAWAL"
	// TypeCardPaymentFailure is charged on a declined card authorization
	// (fee.payment_failure.charged), TypeCardCrossBorder on a card
	// settlement at a merchant outside the card's country
	// (fee.crossborder.charged); both in USD.
	TypeCardPaymentFailure = "CARD_PAYMENT_FAILURE"
	TypeCardCrossBorder    = "CARD_CROSS_BORDER"
	// TypeConversion is charged on converting money between two wallets
	// of a company in different currencies.
	TypeConversion = "CONVERSION"
	// TypeTransfer is charged on moving money between the two
	// sub-balances of one wallet (POST /wallets/{id}/transfer-internal).
	TypeTransfer = "TRANSFER"
)

// Types lists the fee types a rule may have.
var Types = []string{TypePayout, TypeCollection, TypeCardIssuance, TypeCardFunding, TypeCardWithdrawal,
	TypeCardPaymentFailure, TypeCardCrossBorder, TypeConversion, TypeTransfer}

// ErrNoRule reports a prospective operation no rule prices. It cannot happen
// with the default schedule, whose rules match any operator and country.
var ErrNoRule = errors.New("fees: no fee rule applies")

// Rule prices one kind of operation. Fixed is in minor units of Currency, so
// a rule with a fixed part names its currency.
type Rule struct {
	Type       string `json:"type" dynamodbav:"type"`
	Operator   string `json:"operator,omitempty" dynamodbav:"operator,omitempty"`
	Country    string `json:"country,omitempty" dynamodbav:"country,omitempty"`
	Currency   string `json:"currency,omitempty" dynamodbav:"currency,omitempty"`
	Fixed      int64  `json:"-" dynamodbav:"fixed"`
	PercentBps int64  `json:"-" dynamodbav:"percent_bps"`
}

// Schedule is a company's fee rules.
type Schedule struct {
	Rules []Rule `dynamodbav:"rules"`
	// Default is true when the company has set no schedule of its own.
	Default bool `dynamodbav:"-"`
}

// DefaultSchedule applies to a company that has set none, and to the types
// a company's schedule has no rule of: payouts cost 1.5 % of the amount,
// collections 1 %, issuing a card 1.00 USD, funding a card and withdrawing
// from it nothing, a declined card payment 0.50 USD, a card settlement
// abroad 2.5 % of its amount plus 0.50 USD, a conversion 1 % of the amount
// it credits, a transfer between a wallet's sub-balances nothing.
func DefaultSchedule() Schedule {
	return Schedule{Default: true, Rules: []Rule{
		{Type: TypePayout, PercentBps: 150},
		{Type: TypeCollection, PercentBps: 100},
		{Type: TypeCardIssuance, Currency: "USD", Fixed: 100},
		{Type: TypeCardFunding, Currency: "USD"},
		{Type: TypeCardWithdrawal, Currency: "USD"},
		{Type: TypeCardPaymentFailure, Currency: "USD", Fixed: 50},
		{Type: TypeCardCrossBorder, Currency: "USD", Fixed: 50, PercentBps: 250},
		{Type: TypeConversion, PercentBps: 100},
		{Type: TypeTransfer},
	}}
}

// Match returns the most specific rule of s for the operation.
func (s Schedule) Match(typ, operator, country, currency string) (Rule, error) {
	best, bestScore := Rule{}, -1
	for _, r := range s.Rules {
		if r.Type != typ ||
			(r.Operator != "" && r.Operator != operator) ||
			(r.Country != "" && r.Country != country) ||
			(r.Currency != "" && r.Currency != currency) {
			continue
		}
		score := 0
		for _, f := range []string{r.Operator, r.Country, r.Currency} {
			if f != "" {
				score++
			}
		}
		if score > bestScore {
			best, bestScore = r, score
		}
	}
	if bestScore < 0 {
		return Rule{}, fmt.Errorf("%w: %s %s %s %s", ErrNoRule, typ, operator, country, currency)
	}
	return best, nil
}

// Fee returns the fee of rule r on amount (minor units).
func (r Rule) Fee(amount int64) int64 {
	return r.Fixed + money.Percent(amount, r.PercentBps)
}

// Quote is the price of one prospective operation.
type Quote struct {
	Amount int64
	Fee    int64
	Rule   Rule
}

// Total is amount plus fee: what a payout reserves.
func (q Quote) Total() int64 { return q.Amount + q.Fee }

// Store keeps fee schedules.
type Store interface {
	// FeeSchedule returns the company's schedule and whether one was set.
	FeeSchedule(ctx context.Context, companyID string) (Schedule, bool, error)
	// PutFeeSchedule replaces the company's schedule.
	PutFeeSchedule(ctx context.Context, companyID string, s Schedule) error
}

// Service reads, sets and applies fee schedules.
type Service struct {
	store Store
}

// CachedStore returns s reading schedules through c, the function's
// schedule cache: a schedule read, or the absence of one, is trusted for
// c's time (cache.Staleness), so a change made by another process takes
// effect within it; a change made through a store over c (this one, or
// Forgetting's), at once.
func CachedStore(s Store, c *cache.Cache[Schedule]) Store { return cachedStore{s, c} }

// cachedStore reads through a cache; a schedule the company has not set is
// kept as one with Default set.
type cachedStore struct {
	Store
	cache *cache.Cache[Schedule]
}

// FeeSchedule returns the company's schedule from the cache, or from the
// store.
func (s cachedStore) FeeSchedule(ctx context.Context, companyID string) (Schedule, bool, error) {
	sch, err := s.cache.Read(ctx, companyID, func(ctx context.Context) (Schedule, error) {
		sch, ok, err := s.Store.FeeSchedule(ctx, companyID)
		sch.Default = !ok
		return sch, err
	})
	if err != nil {
		return Schedule{}, false, err
	}
	if sch.Default {
		return Schedule{}, false, nil
	}
	return sch, true, nil
}

// PutFeeSchedule replaces the company's schedule and forgets the cached
// one.
func (s cachedStore) PutFeeSchedule(ctx context.Context, companyID string, sch Schedule) error {
	err := s.Store.PutFeeSchedule(ctx, companyID, sch)
	s.cache.Forget(companyID)
	return err
}

// Forgetting returns s telling c to forget a company's schedule it
// replaces: the operator console's store, over the schedule cache of its
// process, so that where the console and the functions that price share a
// process (the local dev server, the tests) a new schedule takes effect at
// once. Its reads are not cached.
func Forgetting(s Store, c Forgetter) Store { return forgetting{s, c} }

// Forgetter is a cache of schedules (cache.Cache) that can be told to
// forget a company's.
type Forgetter interface {
	Forget(companyID string)
}

// forgetting is a Store whose changes are forgotten from a cache.
type forgetting struct {
	Store
	cache Forgetter
}

// PutFeeSchedule replaces the company's schedule and forgets it.
func (s forgetting) PutFeeSchedule(ctx context.Context, companyID string, sch Schedule) error {
	if err := s.Store.PutFeeSchedule(ctx, companyID, sch); err != nil {
		return err
	}
	s.cache.Forget(companyID)
	return nil
}

// NewService returns a Service on store.
func NewService(store Store) *Service { return &Service{store: store} }

// Schedule returns the company's schedule, or DefaultSchedule when it has
// none.
func (s *Service) Schedule(ctx context.Context, companyID string) (Schedule, error) {
	sch, ok, err := s.store.FeeSchedule(ctx, companyID)
	if err != nil {
		return Schedule{}, fmt.Errorf("fees: read schedule: %w", err)
	}
	if !ok {
		return DefaultSchedule(), nil
	}
	return sch, nil
}

// SetSchedule replaces the company's schedule after validating it.
func (s *Service) SetSchedule(ctx context.Context, companyID string, sch Schedule) error {
	if err := sch.Validate(); err != nil {
		return err
	}
	if err := s.store.PutFeeSchedule(ctx, companyID, sch); err != nil {
		return fmt.Errorf("fees: write schedule: %w", err)
	}
	return nil
}

// Quote prices an operation of amount (minor units of currency) by the
// company's schedule or, when it has no rule of typ, by the default one.
func (s *Service) Quote(ctx context.Context, companyID, typ, operator, country, currency string, amount int64) (Quote, error) {
	sch, err := s.Schedule(ctx, companyID)
	if err != nil {
		return Quote{}, err
	}
	if !slices.ContainsFunc(sch.Rules, func(r Rule) bool { return r.Type == typ }) {
		sch = DefaultSchedule()
	}
	r, err := sch.Match(typ, operator, country, currency)
	if err != nil {
		return Quote{}, err
	}
	return Quote{Amount: amount, Fee: r.Fee(amount), Rule: r}, nil
}

// ParsePercent turns the text of a JSON number, a percent from 0 to 100
// with at most two decimals ("1.5"), into basis points (150) without
// floating point. Its errors are worded for a client.
func ParsePercent(s string) (int64, error) {
	bps, err := money.ParseDecimal(s, 2)
	switch {
	case errors.Is(err, money.ErrOutOfRange), err == nil && (bps < 0 || bps > 10_000):
		return 0, errors.New("must be from 0 to 100")
	case err != nil:
		return 0, err
	}
	return bps, nil
}

// FormatPercent renders basis points as a percent ("1.5").
func FormatPercent(bps int64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%d.%02d", bps/100, bps%100), "0"), ".")
}

// Operators lists the operator codes of spec §2.10.
var Operators = []string{"mtn", "orange", "moov", "airtel", "mpesa", "afrimoney", "vodacom", "wave", "wligdicash", "expresso", "free", "tmoney", "celtiis", "coris"}

// Validate checks every rule and that no two rules price the same thing.
func (s Schedule) Validate() error {
	seen := map[string]bool{}
	for i, r := range s.Rules {
		at := func(name string) string { return fmt.Sprintf("rules[%d].%s", i, name) }
		switch {
		case !slices.Contains(Types, r.Type):
			return field.Invalid(at("type"), "must be one of "+strings.Join(Types, ", "))
		case r.Operator != "" && !slices.Contains(Operators, r.Operator):
			return field.Invalid(at("operator"), "is not a known operator code")
		case r.Country != "" && !countries.IsAlpha2(r.Country):
			return field.Invalid(at("country"), countries.Alpha2Rule)
		case r.Currency != "" && !money.Supported(r.Currency):
			return field.Invalid(at("currency"), "is not a supported currency")
		case r.Fixed < 0:
			return field.Invalid(at("fixed"), "must be at least 0")
		case r.PercentBps < 0 || r.PercentBps > 10_000:
			return field.Invalid(at("percent"), "must be from 0 to 100")
		case r.Fixed != 0 && r.Currency == "":
			return field.Invalid(at("currency"), "is required with a fixed fee")
		}
		key := r.Type + "|" + r.Operator + "|" + r.Country + "|" + r.Currency
		if seen[key] {
			return field.Invalid(at("type"), "duplicates an earlier rule for the same type, operator, country and currency")
		}
		seen[key] = true
	}
	return nil
}

// ErrOperatorUnavailable reports an operator that does not serve the country
// and currency.
var ErrOperatorUnavailable = errors.New("fees: operator not available for this country and currency")
