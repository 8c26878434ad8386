// Package money handles amounts as int64 minor units of an ISO 4217 currency.
//
// JSON carries amounts in major units as numbers (1500 XAF, 12.34 USD). This
// package turns such numbers into minor units without floating point, formats
// minor units back into JSON numbers, and holds the one rounding rule used for
// fees and conversions: half away from zero (commercial rounding), applied once,
// at the minor unit. ParseAmount is the one parser of a request's amount:
// strict (a JSON number, never a string), bounded before any arithmetic, and
// with errors a client can read.
package money

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// ErrUnknownCurrency reports a currency code this service does not hold.
var ErrUnknownCurrency = errors.New("money: unknown currency")

// ErrTooPrecise reports a number with more decimals than allowed: for an
// amount, than its currency has.
var ErrTooPrecise = errors.New("money: more decimals than the currency allows")

// ErrInvalidAmount reports a value that is not a JSON number: a string,
// another JSON value, text outside the JSON grammar, or too long a text.
var ErrInvalidAmount = errors.New("money: invalid amount")

// ErrOutOfRange reports a number outside the range its use allows: an
// amount beyond 10^12 major units or, for a payment, below 1.
var ErrOutOfRange = errors.New("money: amount out of range")

// exponents lists the ISO 4217 minor-unit exponent of each supported currency.
var exponents = map[string]int{
	"XAF": 0,
	"XOF": 0,
	"GNF": 0,
	"CDF": 2,
	"USD": 2,
}

// maxMajor bounds any single amount, in major units, well inside int64 minor
// units so that sums of many amounts cannot overflow.
const maxMajor = 1_000_000_000_000

// Exponent returns the number of decimals of currency, or ErrUnknownCurrency.
func Exponent(currency string) (int, error) {
	e, ok := exponents[currency]
	if !ok {
		return 0, fmt.Errorf("%w: %q", ErrUnknownCurrency, currency)
	}
	return e, nil
}

// Supported reports whether currency is one this service holds.
func Supported(currency string) bool {
	_, ok := exponents[currency]
	return ok
}

// Currencies returns the supported currency codes in a stable order.
func Currencies() []string {
	return []string{"XAF", "XOF", "CDF", "GNF", "USD"}
}

// ParseMajor converts the text of a JSON number in major units ("12.34",
// "1500", "1e3") into minor units of currency, at most 10^12 major units
// either way. It never uses floating point: more decimals than the currency
// has is ErrTooPrecise, not a rounding. Errors other than ErrUnknownCurrency
// are *NumberError; see ParseDecimal for the text it reads.
func ParseMajor(s, currency string) (int64, error) {
	exp, err := Exponent(currency)
	if err != nil {
		return 0, err
	}
	limit := maxMajor * pow10Int(exp)
	n, err := ParseDecimal(s, exp)
	switch {
	case errors.Is(err, ErrTooPrecise):
		return 0, tooPrecise(exp, " for "+currency)
	case errors.Is(err, ErrOutOfRange) && strings.HasPrefix(s, "-"):
		n = -limit - 1
	case errors.Is(err, ErrOutOfRange):
		n = limit + 1
	case err != nil:
		return 0, err
	}
	switch {
	case n > limit:
		return 0, &NumberError{Err: ErrOutOfRange, Problem: fmt.Sprintf("must be at most %d", int64(maxMajor))}
	case n < -limit:
		return 0, &NumberError{Err: ErrOutOfRange, Problem: fmt.Sprintf("must be at least %d", -int64(maxMajor))}
	}
	return n, nil
}

// ParseAmount reads the amount of a request: raw is the field's JSON value
// as received (a json.RawMessage, or the text of a json.Number), currency
// the currency it is in. The amount must be a JSON number (a string, even
// "20", is refused), at least 1 major unit, with no more decimals than the
// currency has. It returns minor units. Every error is a *NumberError whose
// message suits a client after the field's name ("must be at least 1"):
// callers wrap it in field.Invalid(field, err.Error()).
func ParseAmount(raw json.RawMessage, currency string) (int64, error) {
	text, err := Number(raw)
	if err != nil {
		return 0, err
	}
	if text == "" {
		return 0, &NumberError{Err: ErrInvalidAmount, Problem: "is required"}
	}
	minor, err := ParseMajor(text, currency)
	if err != nil {
		return 0, err
	}
	exp, _ := Exponent(currency)
	if minor < pow10Int(exp) {
		return 0, &NumberError{Err: ErrOutOfRange, Problem: "must be at least 1"}
	}
	return minor, nil
}

// Format renders minor units of currency as a decimal string in major units,
// with no trailing zeros after the point ("12.5", "1500", "0.05").
func Format(minor int64, currency string) string {
	exp, err := Exponent(currency)
	if err != nil || exp == 0 {
		return strconv.FormatInt(minor, 10)
	}
	sign := ""
	u := uint64(minor)
	if minor < 0 {
		sign = "-"
		u = uint64(-minor)
	}
	div := uint64(1)
	for range exp {
		div *= 10
	}
	whole, frac := u/div, u%div
	if frac == 0 {
		return sign + strconv.FormatUint(whole, 10)
	}
	f := strings.TrimRight(fmt.Sprintf("%0*d", exp, frac), "0")
	return sign + strconv.FormatUint(whole, 10) + "." + f
}

// JSON renders minor units of currency as a JSON number in major units.
func JSON(minor int64, currency string) json.Number {
	return json.Number(Format(minor, currency))
}

// Percent returns basisPoints/10000 of amount, rounded half away from zero to
// the minor unit. It is the one rounding rule for fees: 150 bps of 1001 XAF is
// 15.015, which rounds to 15; of 1030 XAF it is 15.45, which rounds to 15; of
// 1034 XAF it is 15.51, which rounds to 16.
func Percent(amount, basisPoints int64) int64 {
	return MulDiv(amount, basisPoints, 10_000)
}

// MulDiv returns amount*num/den rounded half away from zero, computed exactly.
// It is the one rounding rule: fees (Percent) and conversions (Convert).
func MulDiv(amount, num, den int64) int64 {
	if den == 0 {
		panic("money: MulDiv by zero")
	}
	return divRound(new(big.Int).Mul(big.NewInt(amount), big.NewInt(num)), big.NewInt(den)).Int64()
}

// divRound returns p/d rounded half away from zero.
func divRound(p, d *big.Int) *big.Int {
	q, m := new(big.Int).QuoRem(p, d, new(big.Int))
	// Round half away from zero: compare 2|m| with |d|.
	twice := new(big.Int).Mul(new(big.Int).Abs(m), big.NewInt(2))
	if twice.Cmp(new(big.Int).Abs(d)) >= 0 {
		if (p.Sign() < 0) != (d.Sign() < 0) {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q
}

// pow10Int returns 10^n for a small n (a currency exponent).
func pow10Int(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}
