package money

import (
	"errors"
	"fmt"
	"math/big"

	"github.com/shopspring/decimal"
)

// minRate and maxRate bound an exchange rate: from 10^-12 to below 10^12.
var (
	minRate = decimal.New(1, -12)
	maxRate = decimal.New(1, 12)
)

// MaxRateDigits bounds the significant digits of an exchange rate.
const MaxRateDigits = 12

// ErrInvalidRate reports an exchange rate that is not a decimal above 0
// with at most MaxRateDigits significant digits.
var ErrInvalidRate = errors.New("money: invalid exchange rate")

// ParseRate reads an exchange rate, the text of a JSON number ("0.0016",
// "655.957"): exact, above 0, at most MaxRateDigits significant digits.
// Its errors are worded for a client.
func ParseRate(text string) (decimal.Decimal, error) {
	if _, ok := scan(text); !ok || len(text) > MaxNumberLength {
		return decimal.Decimal{}, fmt.Errorf("%w: must be a number", ErrInvalidRate)
	}
	r, err := decimal.NewFromString(text)
	if err != nil {
		return decimal.Decimal{}, fmt.Errorf("%w: must be a number", ErrInvalidRate)
	}
	switch {
	case !r.IsPositive():
		return decimal.Decimal{}, fmt.Errorf("%w: must be above 0", ErrInvalidRate)
	case significantDigits(r) > MaxRateDigits:
		return decimal.Decimal{}, fmt.Errorf("%w: must have at most %d significant digits", ErrInvalidRate, MaxRateDigits)
	case r.LessThan(minRate) || r.GreaterThanOrEqual(maxRate):
		return decimal.Decimal{}, fmt.Errorf("%w: must be from 0.000000000001 to below 1000000000000", ErrInvalidRate)
	}
	return r, nil
}

// significantDigits counts the significant digits of r, trailing zeros
// aside ("0.00160" has 2).
func significantDigits(r decimal.Decimal) int {
	c := new(big.Int).Abs(r.Coefficient())
	ten := big.NewInt(10)
	for c.Sign() != 0 && new(big.Int).Rem(c, ten).Sign() == 0 {
		c.Quo(c, ten)
	}
	return len(c.String())
}

// Convert returns amount, in minor units of currency from, converted at
// rate (units of to per unit of from) into minor units of currency to:
// amount × rate, exactly, rounded half away from zero to the minor unit
// of to, the one rounding rule (MulDiv). 333 XAF at 0.0016 USD per XAF is
// 0.5328 USD, which rounds to 0.53 (53 cents); 1 XAF at 0.001667 is
// 0.001667 USD, which rounds to 0.00.
func Convert(amount int64, from, to string, rate decimal.Decimal) (int64, error) {
	fromExp, err := Exponent(from)
	if err != nil {
		return 0, err
	}
	toExp, err := Exponent(to)
	if err != nil {
		return 0, err
	}
	// amount/10^fromExp × coefficient×10^rateExp × 10^toExp
	num := new(big.Int).Mul(big.NewInt(amount), rate.Coefficient())
	den := big.NewInt(1)
	shift := int64(toExp-fromExp) + int64(rate.Exponent())
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(abs64(shift)), nil)
	if shift >= 0 {
		num.Mul(num, p)
	} else {
		den = p
	}
	q := divRound(num, den)
	if !q.IsInt64() || q.Int64() > maxMajor*pow10Int(toExp) {
		return 0, fmt.Errorf("%w: the converted amount is too large", ErrOutOfRange)
	}
	return q.Int64(), nil
}

func abs64(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}
