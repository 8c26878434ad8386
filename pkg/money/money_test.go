package money

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParseMajor(t *testing.T) {
	tests := []struct {
		in       string
		currency string
		want     int64
		err      error
	}{
		{"1500", "XAF", 1500, nil},
		{"1500.0", "XAF", 1500, nil},
		{"1e3", "XOF", 1000, nil},
		{"1E+3", "XOF", 1000, nil},
		{"12.34", "USD", 1234, nil},
		{"0.05", "USD", 5, nil},
		{"1234e-2", "USD", 1234, nil},
		{"0e999999", "USD", 0, nil},
		{"-0", "USD", 0, nil},
		{"1000000000000", "XAF", 1_000_000_000_000, nil},
		{"-1000000000000.00", "USD", -100_000_000_000_000, nil},
		{"12.345", "USD", 0, ErrTooPrecise},
		{"10.5", "XAF", 0, ErrTooPrecise},
		{"1e-999999", "USD", 0, ErrTooPrecise},
		{"-3.5", "CDF", -350, nil},
		{"abc", "USD", 0, ErrInvalidAmount},
		{"1/3", "USD", 0, ErrInvalidAmount},
		{"", "USD", 0, ErrInvalidAmount},
		// Only what JSON calls a number.
		{" 12", "USD", 0, ErrInvalidAmount},
		{"+5", "USD", 0, ErrInvalidAmount},
		{"0x10", "USD", 0, ErrInvalidAmount},
		{"0x1p-2", "USD", 0, ErrInvalidAmount},
		{"1_000", "USD", 0, ErrInvalidAmount},
		{".5", "USD", 0, ErrInvalidAmount},
		{"5.", "USD", 0, ErrInvalidAmount},
		{"01", "USD", 0, ErrInvalidAmount},
		{"1e", "USD", 0, ErrInvalidAmount},
		{"Infinity", "USD", 0, ErrInvalidAmount},
		{"NaN", "USD", 0, ErrInvalidAmount},
		{"1" + strings.Repeat("0", MaxNumberLength), "USD", 0, ErrInvalidAmount},
		{"1e40", "USD", 0, ErrOutOfRange},
		{"1e13", "XAF", 0, ErrOutOfRange},
		{"1000000000000.01", "USD", 0, ErrOutOfRange},
		{"-1e13", "XAF", 0, ErrOutOfRange},
		{"1e999999", "USD", 0, ErrOutOfRange},
		{"18446744073709551616", "XAF", 0, ErrOutOfRange},
		{"10", "EUR", 0, ErrUnknownCurrency},
	}
	for _, tt := range tests {
		t.Run(tt.in+" "+tt.currency, func(t *testing.T) {
			got, err := ParseMajor(tt.in, tt.currency)
			if !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if got != tt.want {
				t.Fatalf("got %d, want %d", got, tt.want)
			}
		})
	}
}

// TestParseMajorRefusesBeforeArithmetic: a huge exponent or a long text is
// refused without building the number (this took 16 ms and 61 allocations).
func TestParseMajorRefusesBeforeArithmetic(t *testing.T) {
	for _, in := range []string{"1e999999", "1e-999999", "9" + strings.Repeat("9", 10_000)} {
		allocs := testing.AllocsPerRun(10, func() {
			if _, err := ParseMajor(in, "USD"); err == nil {
				t.Fatalf("ParseMajor(%.20s…) accepted", in)
			}
		})
		if allocs > 10 {
			t.Errorf("ParseMajor(%.20s…) made %v allocations, want at most 10", in, allocs)
		}
	}
}

func TestParseAmount(t *testing.T) {
	tests := []struct {
		raw      string
		currency string
		want     int64
		err      error
		problem  string
	}{
		{"1500", "XAF", 1500, nil, ""},
		{"1", "XAF", 1, nil, ""},
		{"12.34", "USD", 1234, nil, ""},
		{"1.00", "USD", 100, nil, ""},
		{" 7 ", "XOF", 7, nil, ""},
		{"", "XAF", 0, ErrInvalidAmount, "is required"},
		{"null", "XAF", 0, ErrInvalidAmount, "is required"},
		{`"20"`, "XAF", 0, ErrInvalidAmount, "must be a number, not a string"},
		{`""`, "XAF", 0, ErrInvalidAmount, "must be a number, not a string"},
		{"true", "XAF", 0, ErrInvalidAmount, "must be a number"},
		{"{}", "XAF", 0, ErrInvalidAmount, "must be a number"},
		{"[1]", "XAF", 0, ErrInvalidAmount, "must be a number"},
		{"0", "XAF", 0, ErrOutOfRange, "must be at least 1"},
		{"-5", "XAF", 0, ErrOutOfRange, "must be at least 1"},
		{"0.99", "USD", 0, ErrOutOfRange, "must be at least 1"},
		{"10.5", "XAF", 0, ErrTooPrecise, "must be a whole number for XAF"},
		{"1.005", "USD", 0, ErrTooPrecise, "must have at most 2 decimals for USD"},
		{"1e13", "XAF", 0, ErrOutOfRange, "must be at most 1000000000000"},
		{"1e308", "XAF", 0, ErrOutOfRange, "must be at most 1000000000000"},
		{"1e999999", "XAF", 0, ErrOutOfRange, "must be at most 1000000000000"},
		{strings.Repeat("1", 65), "XAF", 0, ErrInvalidAmount, "must be a number of at most 64 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.raw+" "+tt.currency, func(t *testing.T) {
			got, err := ParseAmount(json.RawMessage(tt.raw), tt.currency)
			if !errors.Is(err, tt.err) || got != tt.want {
				t.Fatalf("ParseAmount = %d, %v; want %d, %v", got, err, tt.want, tt.err)
			}
			if err != nil && err.Error() != tt.problem {
				t.Fatalf("message %q, want %q", err.Error(), tt.problem)
			}
		})
	}
}

func TestParseDecimal(t *testing.T) {
	tests := []struct {
		in       string
		decimals int
		want     int64
		err      error
	}{
		{"1.5", 2, 150, nil},
		{"100", 2, 10_000, nil},
		{"2.25", 2, 225, nil},
		{"-1", 2, -100, nil},
		{"1.234", 2, 0, ErrTooPrecise},
		{"999999999999999999", 0, 999_999_999_999_999_999, nil},
		{"1e18", 0, 0, ErrOutOfRange},
		{"184467440737095616.16", 2, 0, ErrOutOfRange},
		{"1e308", 2, 0, ErrOutOfRange},
		{"x", 2, 0, ErrInvalidAmount},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseDecimal(tt.in, tt.decimals)
			if !errors.Is(err, tt.err) || got != tt.want {
				t.Fatalf("ParseDecimal(%s, %d) = %d, %v; want %d, %v", tt.in, tt.decimals, got, err, tt.want, tt.err)
			}
		})
	}
}

func TestFormat(t *testing.T) {
	tests := []struct {
		minor    int64
		currency string
		want     string
	}{
		{1500, "XAF", "1500"},
		{1234, "USD", "12.34"},
		{1250, "USD", "12.5"},
		{1200, "USD", "12"},
		{5, "USD", "0.05"},
		{-350, "CDF", "-3.5"},
		{0, "USD", "0"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := Format(tt.minor, tt.currency); got != tt.want {
				t.Fatalf("Format(%d, %s) = %s, want %s", tt.minor, tt.currency, got, tt.want)
			}
		})
	}
}

func TestPercentRoundsHalfAwayFromZero(t *testing.T) {
	tests := []struct {
		amount, bps, want int64
	}{
		{1001, 150, 15}, // 15.015
		{1030, 150, 15}, // 15.45
		{1034, 150, 16}, // 15.51
		{1000, 50, 5},   // 5
		{100, 50, 1},    // 0.5 rounds up
		{-100, 50, -1},  // -0.5 rounds away from zero
		{99, 50, 0},     // 0.495
		{0, 150, 0},
	}
	for _, tt := range tests {
		if got := Percent(tt.amount, tt.bps); got != tt.want {
			t.Errorf("Percent(%d, %d) = %d, want %d", tt.amount, tt.bps, got, tt.want)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	for _, c := range Currencies() {
		for _, minor := range []int64{0, 1, 7, 10, 99, 100, 123456789} {
			got, err := ParseMajor(Format(minor, c), c)
			if err != nil || got != minor {
				t.Errorf("%s %d: round trip gave %d, %v", c, minor, got, err)
			}
		}
	}
}
