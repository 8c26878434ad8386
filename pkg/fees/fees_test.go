package fees

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"payments/pkg/cache"
	"payments/pkg/field"
)

func TestMatchPicksMostSpecificRule(t *testing.T) {
	s := Schedule{Rules: []Rule{
		{Type: TypePayout, PercentBps: 200},
		{Type: TypePayout, Country: "CM", PercentBps: 150},
		{Type: TypePayout, Operator: "mtn", Country: "CM", Currency: "XAF", Fixed: 100, PercentBps: 100},
		{Type: TypeCollection, Currency: "XOF", PercentBps: 50},
	}}
	tests := []struct {
		name                             string
		typ, operator, country, currency string
		amount, fee                      int64
	}{
		{"exact rule", TypePayout, "mtn", "CM", "XAF", 10_000, 100 + 100},
		{"country rule", TypePayout, "orange", "CM", "XAF", 10_000, 150},
		{"catch-all", TypePayout, "wave", "SN", "XOF", 10_000, 200},
		{"rounding half away from zero", TypePayout, "wave", "SN", "XOF", 1_025, 21}, // 20.5
		{"collection by currency", TypeCollection, "wave", "SN", "XOF", 1_000, 5},
		{"no rule", TypeCollection, "mtn", "CM", "XAF", 1_000, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := s.Match(tt.typ, tt.operator, tt.country, tt.currency)
			if tt.name == "no rule" {
				if !errors.Is(err, ErrNoRule) {
					t.Fatalf("err = %v, want ErrNoRule", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Fee(tt.amount); got != tt.fee {
				t.Fatalf("fee = %d, want %d (rule %+v)", got, tt.fee, r)
			}
		})
	}
}

func TestDefaultScheduleCoversEveryPayment(t *testing.T) {
	d := DefaultSchedule()
	for _, typ := range []string{TypePayout, TypeCollection} {
		if _, err := d.Match(typ, "orange", "CI", "XOF"); err != nil {
			t.Errorf("%s: %v", typ, err)
		}
	}
	r, _ := d.Match(TypePayout, "mtn", "CM", "XAF")
	if r.Fee(10_000) != 150 {
		t.Errorf("default payout fee on 10000 = %d, want 150", r.Fee(10_000))
	}
}

func TestParsePercent(t *testing.T) {
	tests := []struct {
		in   string
		bps  int64
		fail bool
	}{
		{"1.5", 150, false}, {"0", 0, false}, {"100", 10_000, false}, {"2.25", 225, false},
		{"1.234", 0, true}, {"-1", 0, true}, {"101", 0, true}, {"x", 0, true},
		{"1e308", 0, true}, {"18446744073709551616", 0, true}, {"184467440737095616.16", 0, true}, {"1e-999999", 0, true},
	}
	for _, tt := range tests {
		got, err := ParsePercent(tt.in)
		if (err != nil) != tt.fail || got != tt.bps {
			t.Errorf("parsePercent(%s) = %d, %v", tt.in, got, err)
		}
		if !tt.fail {
			if back, _ := ParsePercent(FormatPercent(got)); back != got {
				t.Errorf("formatPercent(%d) = %s does not round-trip", got, FormatPercent(got))
			}
		}
	}
}

func TestDefaultScheduleCardRules(t *testing.T) {
	d := DefaultSchedule()
	tests := []struct {
		typ             string
		fixed, bps, fee int64 // fee on 10 000 cents
	}{
		{TypeCardIssuance, 100, 0, 100},
		{TypeCardFunding, 0, 0, 0},
		{TypeCardWithdrawal, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			r, err := d.Match(tt.typ, "", "", "USD")
			if err != nil || r.Currency != "USD" || r.Fixed != tt.fixed || r.PercentBps != tt.bps || r.Fee(10_000) != tt.fee {
				t.Fatalf("Match = %+v (fee %d), %v; want USD fixed %d, %d bps", r, r.Fee(10_000), err, tt.fixed, tt.bps)
			}
			// A card's money is USD: no other currency is priced.
			if _, err := d.Match(tt.typ, "", "", "XAF"); !errors.Is(err, ErrNoRule) {
				t.Fatalf("Match in XAF = %v, want ErrNoRule", err)
			}
		})
	}
	for _, typ := range Types {
		if !slices.ContainsFunc(d.Rules, func(r Rule) bool { return r.Type == typ }) {
			t.Errorf("the default schedule has no %s rule", typ)
		}
	}
	if err := d.Validate(); err != nil {
		t.Errorf("the default schedule does not validate: %v", err)
	}
}

// memStore is a Store in memory, by company id.
type memStore map[string]Schedule

func (m memStore) FeeSchedule(_ context.Context, companyID string) (Schedule, bool, error) {
	s, ok := m[companyID]
	return s, ok, nil
}

func (m memStore) PutFeeSchedule(_ context.Context, companyID string, s Schedule) error {
	m[companyID] = s
	return nil
}

// TestQuoteFallsBackToDefaultByType: a company's schedule prices the types
// it has rules of; the default schedule prices the others.
func TestQuoteFallsBackToDefaultByType(t *testing.T) {
	ctx := context.Background()
	svc := NewService(memStore{})
	for id, sch := range map[string]Schedule{
		"payouts": {Rules: []Rule{{Type: TypePayout, Currency: "XAF", PercentBps: 200}}},
		"cards": {Rules: []Rule{
			{Type: TypePayout, PercentBps: 200},
			{Type: TypeCardIssuance, Currency: "USD", Fixed: 250},
		}},
	} {
		if err := svc.SetSchedule(ctx, id, sch); err != nil {
			t.Fatalf("SetSchedule %s: %v", id, err)
		}
	}
	tests := []struct {
		name, company, typ, currency string
		amount, fee                  int64
		want                         error
	}{
		{"payout rules only: its payout rule", "payouts", TypePayout, "XAF", 10_000, 200, nil},
		{"payout rules only: default issuance", "payouts", TypeCardIssuance, "USD", 0, 100, nil},
		{"payout rules only: default funding", "payouts", TypeCardFunding, "USD", 5_000, 0, nil},
		{"payout rules only: default withdrawal", "payouts", TypeCardWithdrawal, "USD", 5_000, 0, nil},
		{"payout rules only: default collection", "payouts", TypeCollection, "XAF", 10_000, 100, nil},
		{"own rules of a type are not mixed with the default's", "payouts", TypePayout, "XOF", 10_000, 0, ErrNoRule},
		{"its issuance rule", "cards", TypeCardIssuance, "USD", 0, 250, nil},
		{"its schedule, default funding", "cards", TypeCardFunding, "USD", 5_000, 0, nil},
		{"no schedule: default issuance", "none", TypeCardIssuance, "USD", 0, 100, nil},
		{"no schedule: default payout", "none", TypePayout, "XAF", 10_000, 150, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := svc.Quote(ctx, tt.company, tt.typ, "mtn", "CM", tt.currency, tt.amount)
			if !errors.Is(err, tt.want) || err == nil && (q.Fee != tt.fee || q.Amount != tt.amount || q.Rule.Type != tt.typ) {
				t.Fatalf("Quote = %+v, %v; want fee %d, %v", q, err, tt.fee, tt.want)
			}
		})
	}
}

func TestScheduleValidationTypes(t *testing.T) {
	for _, typ := range []string{"CARD", "card_issuance", "REFUND", ""} {
		t.Run("unknown "+typ, func(t *testing.T) {
			err := Schedule{Rules: []Rule{{Type: TypePayout}, {Type: typ}}}.Validate()
			var fe *field.Error
			if !errors.As(err, &fe) || fe.Field != "rules[1].type" {
				t.Fatalf("validate = %v, want a rules[1].type error", err)
			}
			for _, known := range Types {
				if !strings.Contains(fe.Problem, known) {
					t.Errorf("problem %q does not list %s", fe.Problem, known)
				}
			}
		})
	}
}

// countingStore counts the schedule reads of a memStore.
type countingStore struct {
	memStore
	reads int
}

func (c *countingStore) FeeSchedule(ctx context.Context, companyID string) (Schedule, bool, error) {
	c.reads++
	return c.memStore.FeeSchedule(ctx, companyID)
}

// TestCachedStore: a schedule, or its absence, is read once per staleness
// period; a change through a Service over a store that forgets it
// (Forgetting) is seen at once, and one made elsewhere after the period.
func TestCachedStore(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_700_000_000, 0)
	c := cache.New[Schedule](cache.Staleness, func() time.Time { return now })
	backing := &countingStore{memStore: memStore{}}
	reader := NewService(CachedStore(backing, c))
	console := NewService(backing)              // another process's console: forgets nothing here
	local := NewService(Forgetting(backing, c)) // this process's console
	payout := func() int64 {
		t.Helper()
		q, err := reader.Quote(ctx, "c1", TypePayout, "mtn", "CM", "XAF", 10_000)
		if err != nil {
			t.Fatal(err)
		}
		return q.Fee
	}
	set := func(svc *Service, bps int64) {
		t.Helper()
		if err := svc.SetSchedule(ctx, "c1", Schedule{Rules: []Rule{{Type: TypePayout, PercentBps: bps}}}); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		name  string
		do    func()
		fee   int64
		reads int
	}{
		{"no schedule: the default, read once", func() {}, 150, 1},
		{"the absence is cached", func() {}, 150, 1},
		{"set elsewhere: not seen within the period", func() { set(console, 200) }, 150, 1},
		{"seen once the period is over", func() { now = now.Add(cache.Staleness) }, 200, 2},
		{"cached again", func() {}, 200, 2},
		{"set through a Service that forgets: seen at once", func() { set(local, 300) }, 300, 3},
	}
	for _, s := range steps {
		s.do()
		if fee := payout(); fee != s.fee || backing.reads != s.reads {
			t.Fatalf("%s: fee %d after %d reads, want %d after %d", s.name, fee, backing.reads, s.fee, s.reads)
		}
	}
}
