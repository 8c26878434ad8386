package money

import (
	"errors"
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
		{"12.34", "USD", 1234, nil},
		{"0.05", "USD", 5, nil},
		{"12.345", "USD", 0, ErrTooPrecise},
		{"10.5", "XAF", 0, ErrTooPrecise},
		{"-3.5", "CDF", -350, nil},
		{"abc", "USD", 0, ErrInvalidAmount},
		{"1/3", "USD", 0, ErrInvalidAmount},
		{"1e40", "USD", 0, ErrOutOfRange},
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
