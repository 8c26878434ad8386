// Package money handles amounts as int64 minor units of an ISO 4217 currency.
//
// JSON carries amounts in major units as numbers (1500 XAF, 12.34 USD). This
// package turns such numbers into minor units without floating point, formats
// minor units back into JSON numbers, and holds the one rounding rule used for
// fees and conversions: half away from zero (commercial rounding), applied once,
// at the minor unit.
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

// ErrTooPrecise reports an amount with more decimals than its currency has.
var ErrTooPrecise = errors.New("money: more decimals than the currency allows")

// ErrInvalidAmount reports a number that is not a finite decimal amount.
var ErrInvalidAmount = errors.New("money: invalid amount")

// ErrOutOfRange reports an amount too large to hold in minor units.
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

// ParseMajor converts a decimal string in major units ("12.34", "1500",
// "1e3") into minor units of currency. It never uses floating point: more
// decimals than the currency has is ErrTooPrecise, not a rounding.
func ParseMajor(s, currency string) (int64, error) {
	exp, err := Exponent(currency)
	if err != nil {
		return 0, err
	}
	r, ok := new(big.Rat).SetString(strings.TrimSpace(s))
	if !ok || strings.ContainsAny(s, "/") {
		return 0, fmt.Errorf("%w: %q", ErrInvalidAmount, s)
	}
	if new(big.Rat).Abs(r).Cmp(new(big.Rat).SetInt64(maxMajor)) > 0 {
		return 0, fmt.Errorf("%w: %q", ErrOutOfRange, s)
	}
	scaled := new(big.Rat).Mul(r, new(big.Rat).SetInt(pow10(exp)))
	if !scaled.IsInt() {
		return 0, fmt.Errorf("%w: %s has %d", ErrTooPrecise, currency, exp)
	}
	return scaled.Num().Int64(), nil
}

// ParseJSON converts a JSON number into minor units of currency; see ParseMajor.
func ParseJSON(n json.Number, currency string) (int64, error) {
	return ParseMajor(n.String(), currency)
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
// Conversions use it with a rate expressed as num/den.
func MulDiv(amount, num, den int64) int64 {
	if den == 0 {
		panic("money: MulDiv by zero")
	}
	p := new(big.Int).Mul(big.NewInt(amount), big.NewInt(num))
	d := big.NewInt(den)
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
	return q.Int64()
}

func pow10(n int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}
