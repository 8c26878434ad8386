package guideline

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"payments/pkg/money"
)

// specOperators is spec §2.10's list, written out again so that a change to
// the package's own list is noticed.
var specOperators = []string{
	"mtn", "orange", "moov", "airtel", "mpesa", "afrimoney", "vodacom",
	"wave", "wligdicash", "expresso", "free", "tmoney", "celtiis", "coris",
}

func TestEmbeddedRows(t *testing.T) {
	rows := Rows()
	if len(rows) == 0 {
		t.Fatal("no rows")
	}
	seen := map[[2]string]bool{}
	for _, r := range rows {
		t.Run(r.CountryISOCode+"_"+r.Currency, func(t *testing.T) {
			key := [2]string{r.CountryISOCode, r.Currency}
			if seen[key] {
				t.Errorf("duplicate row")
			}
			seen[key] = true
			if !slices.Contains(money.Currencies(), r.Currency) {
				t.Errorf("currency %s not in money.Currencies()", r.Currency)
			}
			for _, op := range r.Operators {
				if !slices.Contains(specOperators, op) {
					t.Errorf("operator %q not in spec §2.10", op)
				}
			}
			if r.Operators == nil {
				t.Errorf("operators is nil, want an array")
			}
		})
	}
	if !slices.Equal(Operators(), specOperators) {
		t.Errorf("Operators() = %v, want %v", Operators(), specOperators)
	}
}

func TestLookups(t *testing.T) {
	tests := []struct {
		name           string
		iso, currency  string
		operator       string
		wantRow        bool
		wantSupports   bool
		wantPhone      string
		wantCountry    bool
		wantCountryNam string
	}{
		{"cameroon mtn", "CM", "XAF", "mtn", true, true, "+237", true, "Cameroon"},
		{"cameroon wave", "CM", "XAF", "wave", true, false, "+237", true, "Cameroon"},
		{"cameroon in XOF", "CM", "XOF", "mtn", false, false, "+237", true, "Cameroon"},
		{"ivory coast wave", "CI", "XOF", "wave", true, true, "+225", true, "Côte d'Ivoire"},
		{"DRC mpesa", "CD", "CDF", "mpesa", true, true, "+243", true, "Democratic Republic of the Congo"},
		{"DRC in USD", "CD", "USD", "mpesa", false, false, "+243", true, "Democratic Republic of the Congo"},
		{"US wallet has no operator", "US", "USD", "mtn", true, false, "+1", true, "United States"},
		{"unknown country", "FR", "EUR", "orange", false, false, "", false, ""},
		{"lowercase iso", "cm", "XAF", "mtn", false, false, "", false, ""},
		{"uppercase operator", "CM", "XAF", "MTN", true, false, "+237", true, "Cameroon"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := Lookup(tt.iso, tt.currency)
			if ok != tt.wantRow {
				t.Fatalf("Lookup ok = %v, want %v", ok, tt.wantRow)
			}
			if ok && (r.CountryISOCode != tt.iso || r.Currency != tt.currency || r.CountryPhoneCode != tt.wantPhone) {
				t.Errorf("Lookup = %+v", r)
			}
			if got := Supports(tt.iso, tt.currency, tt.operator); got != tt.wantSupports {
				t.Errorf("Supports = %v, want %v", got, tt.wantSupports)
			}
			c, ok := Country(tt.iso)
			if ok != tt.wantCountry || c.PhoneCode != tt.wantPhone || c.Name != tt.wantCountryNam {
				t.Errorf("Country = %+v, %v", c, ok)
			}
		})
	}
}

func TestLookupReturnsCopies(t *testing.T) {
	r, _ := Lookup("CM", "XAF")
	r.Operators[0] = "changed"
	rows := Rows()
	rows[0].Operators[0] = "changed"
	if !Supports("CM", "XAF", "mtn") {
		t.Fatal("a caller changed the guideline through a returned row")
	}
}

func TestParseRefuses(t *testing.T) {
	tests := []struct {
		name string
		json string
	}{
		{"not json", `{`},
		{"bad iso", `[{"country_iso_code":"Cm","country":"Cameroon","country_phone_code":"+237","currency":"XAF","operators":[]}]`},
		{"empty country", `[{"country_iso_code":"CM","country":"","country_phone_code":"+237","currency":"XAF","operators":[]}]`},
		{"bad dial code", `[{"country_iso_code":"CM","country":"Cameroon","country_phone_code":"237","currency":"XAF","operators":[]}]`},
		{"unknown currency", `[{"country_iso_code":"FR","country":"France","country_phone_code":"+33","currency":"EUR","operators":[]}]`},
		{"unknown operator", `[{"country_iso_code":"CM","country":"Cameroon","country_phone_code":"+237","currency":"XAF","operators":["mtm"]}]`},
		{"operator twice", `[{"country_iso_code":"CM","country":"Cameroon","country_phone_code":"+237","currency":"XAF","operators":["mtn","mtn"]}]`},
		{"duplicate pair", `[{"country_iso_code":"CM","country":"Cameroon","country_phone_code":"+237","currency":"XAF","operators":[]},
			{"country_iso_code":"CM","country":"Cameroon","country_phone_code":"+237","currency":"XAF","operators":[]}]`},
		{"dial code differs", `[{"country_iso_code":"CM","country":"Cameroon","country_phone_code":"+237","currency":"XAF","operators":[]},
			{"country_iso_code":"CM","country":"Cameroon","country_phone_code":"+238","currency":"USD","operators":[]}]`},
		{"pawapay code for an operator not in the row", `[{"country_iso_code":"CM","country":"Cameroon","country_phone_code":"+237","currency":"XAF","operators":["mtn"],"pawapay":{"orange":"ORANGE_CMR"}}]`},
		{"pawapay code of the wrong form", `[{"country_iso_code":"CM","country":"Cameroon","country_phone_code":"+237","currency":"XAF","operators":["mtn"],"pawapay":{"mtn":"mtn_momo_cmr"}}]`},
		{"pawapay code without a country", `[{"country_iso_code":"CM","country":"Cameroon","country_phone_code":"+237","currency":"XAF","operators":["mtn"],"pawapay":{"mtn":"MTN_MOMO"}}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Parse([]byte(tt.json)); err == nil {
				t.Fatal("Parse accepted it")
			}
		})
	}
}

func TestPawaPayProvider(t *testing.T) {
	tests := []struct {
		iso, currency, operator string
		want                    string
		ok                      bool
	}{
		{"CM", "XAF", "mtn", "MTN_MOMO_CMR", true},
		{"CM", "XAF", "orange", "ORANGE_CMR", true},
		{"CD", "CDF", "vodacom", "VODACOM_MPESA_COD", true},
		{"SN", "XOF", "expresso", "", false}, // an operator of the row pawaPay does not serve
		{"TD", "XAF", "airtel", "", false},   // a row pawaPay does not serve
		{"CM", "XOF", "mtn", "", false},      // no such row
	}
	for _, tt := range tests {
		t.Run(tt.iso+"_"+tt.operator, func(t *testing.T) {
			got, ok := PawaPayProvider(tt.iso, tt.currency, tt.operator)
			if got != tt.want || ok != tt.ok {
				t.Fatalf("PawaPayProvider = %q, %v; want %q, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestRowsServeNoPawaPayCodes pins the JSON that GET /payment/guideline
// answers: the pawaPay codes stay out of it.
func TestRowsServeNoPawaPayCodes(t *testing.T) {
	data, err := json.Marshal(Rows())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.ToLower(string(data)), "pawapay") || strings.Contains(string(data), "MTN_MOMO") {
		t.Fatalf("the served rows carry pawaPay codes: %s", data)
	}
	var rows []map[string]any
	if err := json.Unmarshal(data, &rows); err != nil {
		t.Fatal(err)
	}
	want := []string{"country", "country_iso_code", "country_phone_code", "currency", "operators"}
	for _, r := range rows {
		keys := slices.Sorted(maps.Keys(r))
		if !slices.Equal(keys, want) {
			t.Fatalf("row fields %v, want %v", keys, want)
		}
	}
}
