// Package guideline is the payment guideline: the (country, currency,
// operator) combinations the service supports, held as data in one place,
// the embedded file guideline.json.
//
// Wallet creation accepts a (country, currency) pair only when it is a row
// here; payouts accept an operator only when it is listed in the row of the
// wallet's country and currency. A row with no operators (the USD row) holds
// a wallet but cannot pay out to mobile money.
package guideline

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sync"

	"payments/pkg/money"
)

//go:embed guideline.json
var embedded []byte

// operators is the list of operator codes of spec §2.10, lowercase.
var operators = []string{
	"mtn", "orange", "moov", "airtel", "mpesa", "afrimoney", "vodacom",
	"wave", "wligdicash", "expresso", "free", "tmoney", "celtiis", "coris",
}

// Operators returns every operator code the service knows (spec §2.10), in
// the spec's order.
func Operators() []string { return slices.Clone(operators) }

// IsOperator reports whether code is a known operator code (lowercase).
func IsOperator(code string) bool { return slices.Contains(operators, code) }

// Row is one supported (country, currency) pair and the mobile-money
// operators available for it.
type Row struct {
	CountryISOCode   string   `json:"country_iso_code"`
	Country          string   `json:"country"`
	CountryPhoneCode string   `json:"country_phone_code"`
	Currency         string   `json:"currency"`
	Operators        []string `json:"operators"`
}

// CountryInfo is what the guideline knows of a country, whatever the
// currency.
type CountryInfo struct {
	ISOCode   string
	Name      string
	PhoneCode string
}

// fileRow is a row as guideline.json holds it: the row the API serves and,
// apart from it, the codes pawaPay (the aggregator of production mode) uses
// for the row's operators. The codes are never served: GET
// /payment/guideline answers Row alone.
type fileRow struct {
	Row
	PawaPay map[string]string `json:"pawapay"`
}

// Guideline is a parsed guideline. Its zero value holds no rows.
type Guideline struct {
	rows []Row
	// pawapay maps (country, currency, operator) to a pawaPay provider code.
	pawapay map[[3]string]string
}

var (
	isoPattern  = regexp.MustCompile(`^[A-Z]{2}$`)
	phoneDigits = regexp.MustCompile(`^\+[0-9]{1,4}$`)
	// pawaPayCode is the form of a pawaPay provider code: capitals, digits
	// and underscores, ending in the country's ISO 3166 alpha-3 code
	// (MTN_MOMO_CMR).
	pawaPayCode = regexp.MustCompile(`^[A-Z][A-Z0-9_]*_[A-Z]{3}$`)
	// defaultGuideline is parsed when first asked for, not at init: most
	// functions link this package and never read it (docs/footprint.md).
	defaultGuideline = sync.OnceValue(func() *Guideline { return mustParse(embedded) })
)

func mustParse(data []byte) *Guideline {
	g, err := Parse(data)
	if err != nil {
		panic(err)
	}
	return g
}

// Parse reads a guideline from JSON (an array of rows) and checks it: ISO
// codes of two capital letters, dial codes "+" and 1 to 4 digits, one dial
// code and one name per country, currencies the money package holds,
// operators of spec §2.10 listed once each, no (country, currency) pair
// twice, and pawaPay provider codes only for operators of their row, each of
// the form of a pawaPay code.
func Parse(data []byte) (*Guideline, error) {
	var file []fileRow
	if err := json.Unmarshal(data, &file); err != nil {
		return nil, fmt.Errorf("guideline: %w", err)
	}
	rows := make([]Row, len(file))
	pawapay := map[[3]string]string{}
	seen := map[[2]string]bool{}
	countries := map[string]CountryInfo{}
	for i, fr := range file {
		r := fr.Row
		rows[i] = r
		at := fmt.Sprintf("guideline: row %d (%s %s)", i, r.CountryISOCode, r.Currency)
		if !isoPattern.MatchString(r.CountryISOCode) {
			return nil, fmt.Errorf("%s: country_iso_code must be two capital letters", at)
		}
		if r.Country == "" {
			return nil, fmt.Errorf("%s: country is empty", at)
		}
		if !phoneDigits.MatchString(r.CountryPhoneCode) {
			return nil, fmt.Errorf("%s: country_phone_code must be + and 1 to 4 digits", at)
		}
		if !money.Supported(r.Currency) {
			return nil, fmt.Errorf("%s: currency is not supported by pkg/money", at)
		}
		key := [2]string{r.CountryISOCode, r.Currency}
		if seen[key] {
			return nil, fmt.Errorf("%s: duplicate row", at)
		}
		seen[key] = true
		if c, ok := countries[r.CountryISOCode]; ok && (c.Name != r.Country || c.PhoneCode != r.CountryPhoneCode) {
			return nil, fmt.Errorf("%s: name or dial code differs from an earlier row of the country", at)
		}
		countries[r.CountryISOCode] = CountryInfo{ISOCode: r.CountryISOCode, Name: r.Country, PhoneCode: r.CountryPhoneCode}
		for j, op := range r.Operators {
			if !IsOperator(op) {
				return nil, fmt.Errorf("%s: unknown operator %q", at, op)
			}
			if slices.Contains(r.Operators[:j], op) {
				return nil, fmt.Errorf("%s: operator %q listed twice", at, op)
			}
		}
		for op, code := range fr.PawaPay {
			if !slices.Contains(r.Operators, op) {
				return nil, fmt.Errorf("%s: pawapay code for %q, which is not an operator of the row", at, op)
			}
			if !pawaPayCode.MatchString(code) {
				return nil, fmt.Errorf("%s: pawapay code %q for %q is not of the form MTN_MOMO_CMR", at, code, op)
			}
			pawapay[[3]string{r.CountryISOCode, r.Currency, op}] = code
		}
		if rows[i].Operators == nil {
			rows[i].Operators = []string{}
		}
	}
	return &Guideline{rows: rows, pawapay: pawapay}, nil
}

// PawaPayProvider returns the pawaPay provider code of operator in
// (country iso, currency), and false when pawaPay does not serve that
// combination (the row lists no code for it).
func (g *Guideline) PawaPayProvider(iso, currency, operator string) (string, bool) {
	code, ok := g.pawapay[[3]string{iso, currency, operator}]
	return code, ok
}

// Default returns the guideline embedded in the binary.
func Default() *Guideline { return defaultGuideline() }

// Rows returns a copy of every row, in file order.
func (g *Guideline) Rows() []Row {
	out := make([]Row, len(g.rows))
	for i, r := range g.rows {
		r.Operators = slices.Clone(r.Operators)
		out[i] = r
	}
	return out
}

// Lookup returns the row of (iso, currency), if the pair is supported.
func (g *Guideline) Lookup(iso, currency string) (Row, bool) {
	for _, r := range g.rows {
		if r.CountryISOCode == iso && r.Currency == currency {
			r.Operators = slices.Clone(r.Operators)
			return r, true
		}
	}
	return Row{}, false
}

// Supports reports whether operator can be used for payouts in currency
// to country iso.
func (g *Guideline) Supports(iso, currency, operator string) bool {
	r, ok := g.Lookup(iso, currency)
	return ok && slices.Contains(r.Operators, operator)
}

// Country returns the name and dial code of country iso, if the guideline
// has a row for it.
func (g *Guideline) Country(iso string) (CountryInfo, bool) {
	for _, r := range g.rows {
		if r.CountryISOCode == iso {
			return CountryInfo{ISOCode: r.CountryISOCode, Name: r.Country, PhoneCode: r.CountryPhoneCode}, true
		}
	}
	return CountryInfo{}, false
}

// Rows returns the rows of the embedded guideline.
func Rows() []Row { return defaultGuideline().Rows() }

// Lookup returns the embedded guideline's row of (iso, currency).
func Lookup(iso, currency string) (Row, bool) { return defaultGuideline().Lookup(iso, currency) }

// Supports reports whether the embedded guideline allows operator for
// (iso, currency).
func Supports(iso, currency, operator string) bool {
	return defaultGuideline().Supports(iso, currency, operator)
}

// PawaPayProvider returns the embedded guideline's pawaPay provider code of
// operator in (iso, currency).
func PawaPayProvider(iso, currency, operator string) (string, bool) {
	return defaultGuideline().PawaPayProvider(iso, currency, operator)
}

// Country returns the embedded guideline's name and dial code of country iso.
func Country(iso string) (CountryInfo, bool) { return defaultGuideline().Country(iso) }
