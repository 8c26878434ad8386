package money

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// MaxNumberLength is the longest number text this package reads, in bytes.
// Longer text is refused before any arithmetic, as is an exponent of more
// than four digits: "1e999999" costs no more than "1".
const MaxNumberLength = 64

// maxDigits is the most significant digits a parsed value may have, so that
// it fits an int64 (10^18 - 1 < 2^63 - 1).
const maxDigits = 18

// NumberError is a number this package refuses. Its message says what is
// wrong in words a client understands, to follow the field's name ("must
// have at most 2 decimals for USD"); it wraps ErrInvalidAmount,
// ErrTooPrecise or ErrOutOfRange.
type NumberError struct {
	Err     error
	Problem string
}

// Error returns the problem, for a client.
func (e *NumberError) Error() string { return e.Problem }

// Unwrap returns the sentinel.
func (e *NumberError) Unwrap() error { return e.Err }

// Number returns the text of raw, a request field's JSON value as received,
// when it is a number, and "" when it is absent or null. Anything else is a
// *NumberError: a string, even one holding digits ("20"), is refused, for
// numbers travel as JSON numbers.
func Number(raw json.RawMessage) (string, error) {
	s := string(bytes.TrimSpace(raw))
	switch {
	case s == "" || s == "null":
		return "", nil
	case s[0] == '"':
		return "", &NumberError{Err: ErrInvalidAmount, Problem: "must be a number, not a string"}
	case len(s) > MaxNumberLength:
		return "", tooLong()
	}
	if _, ok := scan(s); !ok {
		return "", &NumberError{Err: ErrInvalidAmount, Problem: "must be a number"}
	}
	return s, nil
}

// ParseDecimal converts the text of a JSON number into a whole count of
// 10^-decimals units: ("12.34", 2) is 1234, ("1.5e2", 0) is 150. The text
// is what JSON allows and nothing more (no spaces, "+", hex or "_"), at
// most MaxNumberLength bytes, and the result has at most 18 significant
// digits. More decimals than decimals is ErrTooPrecise, never a rounding.
// Errors are *NumberError.
func ParseDecimal(s string, decimals int) (int64, error) {
	if len(s) > MaxNumberLength {
		return 0, tooLong()
	}
	n, ok := scan(s)
	if !ok {
		return 0, &NumberError{Err: ErrInvalidAmount, Problem: "must be a number"}
	}
	digits := strings.TrimLeft(n.integer+n.fraction, "0")
	if digits == "" {
		return 0, nil // zero, whatever the exponent
	}
	exp := strings.TrimLeft(n.exponent, "0")
	if len(exp) > 4 {
		if n.negativeExponent {
			return 0, tooPrecise(decimals, "")
		}
		return 0, tooLarge()
	}
	e, _ := strconv.Atoi("0" + exp)
	if n.negativeExponent {
		e = -e
	}
	// The value is digits × 10^shift units.
	shift := e - len(n.fraction) + decimals
	significant := strings.TrimRight(digits, "0")
	shift += len(digits) - len(significant)
	switch {
	case shift < 0:
		return 0, tooPrecise(decimals, "")
	case len(significant)+shift > maxDigits:
		return 0, tooLarge()
	}
	v, err := strconv.ParseInt(significant, 10, 64)
	if err != nil {
		return 0, tooLarge()
	}
	v *= pow10Int(shift)
	if n.negative {
		v = -v
	}
	return v, nil
}

func tooLarge() error {
	return &NumberError{Err: ErrOutOfRange, Problem: "is too large"}
}

func tooLong() error {
	return &NumberError{Err: ErrInvalidAmount, Problem: fmt.Sprintf("must be a number of at most %d characters", MaxNumberLength)}
}

// tooPrecise says how many decimals are allowed; where names the currency
// (" for USD") or is empty.
func tooPrecise(decimals int, where string) error {
	if decimals == 0 {
		return &NumberError{Err: ErrTooPrecise, Problem: "must be a whole number" + where}
	}
	return &NumberError{Err: ErrTooPrecise, Problem: fmt.Sprintf("must have at most %d decimals%s", decimals, where)}
}

// number is the parts of a JSON number's text.
type number struct {
	negative         bool
	integer          string // digits before the point
	fraction         string // digits after the point
	negativeExponent bool
	exponent         string // digits after e or E
}

// scan splits s by the JSON grammar
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, reporting whether s
// follows it.
func scan(s string) (number, bool) {
	var n number
	i := 0
	digits := func() string {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return s[start:i]
	}
	if i < len(s) && s[i] == '-' {
		n.negative = true
		i++
	}
	n.integer = digits()
	if n.integer == "" || (len(n.integer) > 1 && n.integer[0] == '0') {
		return n, false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if n.fraction = digits(); n.fraction == "" {
			return n, false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			n.negativeExponent = s[i] == '-'
			i++
		}
		if n.exponent = digits(); n.exponent == "" {
			return n, false
		}
	}
	return n, i == len(s)
}
