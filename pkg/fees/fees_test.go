package fees

import (
	"errors"
	"testing"
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
	}
	for _, tt := range tests {
		got, err := parsePercent(tt.in)
		if (err != nil) != tt.fail || got != tt.bps {
			t.Errorf("parsePercent(%s) = %d, %v", tt.in, got, err)
		}
		if !tt.fail {
			if back, _ := parsePercent(formatPercent(got)); back != got {
				t.Errorf("formatPercent(%d) = %s does not round-trip", got, formatPercent(got))
			}
		}
	}
}

func TestScheduleValidation(t *testing.T) {
	tests := []struct {
		name  string
		in    scheduleJSON
		field string
	}{
		{"missing rules", scheduleJSON{}, "rules"},
		{"bad type", scheduleJSON{Rules: []ruleJSON{{Type: "CARD"}}}, "rules[0].type"},
		{"bad operator", scheduleJSON{Rules: []ruleJSON{{Type: TypePayout, Operator: "MTN"}}}, "rules[0].operator"},
		{"bad country", scheduleJSON{Rules: []ruleJSON{{Type: TypePayout, Country: "cm"}}}, "rules[0].country"},
		{"fixed without currency", scheduleJSON{Rules: []ruleJSON{{Type: TypePayout, Fixed: "100"}}}, "rules[0].currency"},
		{"fixed too precise", scheduleJSON{Rules: []ruleJSON{{Type: TypePayout, Currency: "XAF", Fixed: "1.5"}}}, "rules[0].fixed"},
		{"percent too precise", scheduleJSON{Rules: []ruleJSON{{Type: TypePayout, Percent: "1.555"}}}, "rules[0].percent"},
		{"duplicate", scheduleJSON{Rules: []ruleJSON{{Type: TypePayout}, {Type: TypePayout}}}, "rules[1].type"},
		{"ok", scheduleJSON{Rules: []ruleJSON{{Type: TypePayout, Currency: "USD", Fixed: "0.5", Percent: "1.5"}}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := fromJSON(tt.in)
			if tt.field == "" {
				if err != nil || s.Rules[0].Fixed != 50 || s.Rules[0].PercentBps != 150 {
					t.Fatalf("fromJSON = %+v, %v", s, err)
				}
				return
			}
			if err == nil || err.Error()[:len(tt.field)] != tt.field {
				t.Fatalf("err = %v, want field %s", err, tt.field)
			}
		})
	}
}
