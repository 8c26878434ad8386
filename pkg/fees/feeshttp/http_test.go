package feeshttp

import (
	"encoding/json"
	"errors"
	"testing"

	"payments/pkg/fees"
	"payments/pkg/field"
)

func TestScheduleValidation(t *testing.T) {
	type rule = ruleRequest
	n := func(s string) json.RawMessage { return json.RawMessage(s) }
	tests := []struct {
		name  string
		in    []ruleRequest
		field string
	}{
		{"missing rules", nil, "rules"},
		{"bad type", []rule{{Type: "CARD"}}, "rules[0].type"},
		{"bad operator", []rule{{Type: fees.TypePayout, Operator: "MTN"}}, "rules[0].operator"},
		{"bad country", []rule{{Type: fees.TypePayout, Country: "cm"}}, "rules[0].country"},
		{"fixed without currency", []rule{{Type: fees.TypePayout, Fixed: n("100")}}, "rules[0].currency"},
		{"fixed too precise", []rule{{Type: fees.TypePayout, Currency: "XAF", Fixed: n("1.5")}}, "rules[0].fixed"},
		{"fixed a string", []rule{{Type: fees.TypePayout, Currency: "XAF", Fixed: n(`"20"`)}}, "rules[0].fixed"},
		{"fixed negative", []rule{{Type: fees.TypePayout, Currency: "XAF", Fixed: n("-1")}}, "rules[0].fixed"},
		{"fixed too large", []rule{{Type: fees.TypePayout, Currency: "XAF", Fixed: n("1e308")}}, "rules[0].fixed"},
		{"percent too precise", []rule{{Type: fees.TypePayout, Percent: n("1.555")}}, "rules[0].percent"},
		{"percent a string", []rule{{Type: fees.TypePayout, Percent: n(`"20"`)}}, "rules[0].percent"},
		{"percent a boolean", []rule{{Type: fees.TypePayout, Percent: n("true")}}, "rules[0].percent"},
		{"percent 1e308", []rule{{Type: fees.TypePayout, Percent: n("1e308")}}, "rules[0].percent"},
		{"percent 2^64", []rule{{Type: fees.TypePayout, Percent: n("18446744073709551616")}}, "rules[0].percent"},
		{"percent past int64 in basis points", []rule{{Type: fees.TypePayout, Percent: n("184467440737095616.16")}}, "rules[0].percent"},
		{"percent over 100", []rule{{Type: fees.TypePayout, Percent: n("100.01")}}, "rules[0].percent"},
		{"second rule", []rule{{Type: fees.TypeCollection}, {Type: fees.TypePayout, Percent: n("-0.01")}}, "rules[1].percent"},
		{"duplicate", []rule{{Type: fees.TypePayout}, {Type: fees.TypePayout}}, "rules[1].type"},
		{"ok", []rule{{Type: fees.TypePayout, Currency: "USD", Fixed: n("0.5"), Percent: n("1.5")}}, ""},
		{"ok, zero fixed without currency, nulls", []rule{{Type: fees.TypePayout, Fixed: n("0.0"), Percent: n("null")}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := fromJSON(tt.in)
			if tt.field == "" {
				if err != nil || len(s.Rules) != 1 {
					t.Fatalf("fromJSON = %+v, %v", s, err)
				}
				return
			}
			var fe *field.Error
			if !errors.As(err, &fe) || fe.Field != tt.field {
				t.Fatalf("err = %v, want field %s", err, tt.field)
			}
		})
	}
	s, err := fromJSON([]rule{{Type: fees.TypePayout, Currency: "USD", Fixed: n("0.5"), Percent: n("1.5")}})
	if err != nil || s.Rules[0].Fixed != 50 || s.Rules[0].PercentBps != 150 {
		t.Fatalf("fromJSON = %+v, %v", s, err)
	}
}

func TestScheduleFromJSONTypes(t *testing.T) {
	for _, typ := range fees.Types {
		t.Run(typ, func(t *testing.T) {
			s, err := fromJSON([]ruleRequest{{Type: typ, Currency: "USD", Fixed: json.RawMessage("1.25"), Percent: json.RawMessage("0.5")}})
			if err != nil || len(s.Rules) != 1 || s.Rules[0] != (fees.Rule{Type: typ, Currency: "USD", Fixed: 125, PercentBps: 50}) {
				t.Fatalf("fromJSON = %+v, %v", s, err)
			}
		})
	}
}
