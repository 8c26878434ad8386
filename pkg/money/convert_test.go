package money

import (
	"errors"
	"testing"
)

// TestConvert is the worked rounding table of docs/fx.md: XAF to USD at
// two rates, and the halves.
func TestConvert(t *testing.T) {
	for _, c := range []struct {
		amount   int64
		from, to string
		rate     string
		want     int64
	}{
		{1, "XAF", "USD", "0.0016", 0},              // 0.0016 USD
		{333, "XAF", "USD", "0.0016", 53},           // 0.5328 USD
		{1_000_000, "XAF", "USD", "0.0016", 160000}, // 1600 USD
		{1, "XAF", "USD", "0.001667", 0},            // 0.001667 USD
		{333, "XAF", "USD", "0.001667", 56},         // 0.555111 USD
		{1_000_000, "XAF", "USD", "0.001667", 166700},
		{5, "XAF", "USD", "0.001", 1},       // 0.005 USD: a half, away from zero
		{4, "XAF", "USD", "0.001", 0},       // 0.004 USD
		{100, "USD", "XAF", "655.957", 656}, // 1.00 USD is 655.957 XAF
		{150, "USD", "XAF", "655.957", 984}, // 983.9355 XAF
		{1, "XAF", "XOF", "1", 1},
		{12345, "CDF", "USD", "0.00035", 4}, // 123.45 CDF is 0.0432 USD
		{1_000_000_000, "CDF", "USD", "0.00035", 350000},
	} {
		r, err := ParseRate(c.rate)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Convert(c.amount, c.from, c.to, r)
		if err != nil || got != c.want {
			t.Errorf("%d %s at %s into %s: %d, %v; want %d", c.amount, c.from, c.rate, c.to, got, err, c.want)
		}
	}
	big, _ := ParseRate("999999999999")
	if _, err := Convert(maxMajor, "XAF", "USD", big); !errors.Is(err, ErrOutOfRange) {
		t.Errorf("an overflowing conversion: %v", err)
	}
}

func TestParseRate(t *testing.T) {
	for _, c := range []struct {
		text string
		ok   bool
	}{
		{"0.0016", true}, {"655.957", true}, {"1", true}, {"0.000000000001", true}, {"0.0000000000001", false}, {"123456789012", true},
		{"0.00160000", true}, {"999999999999", true}, {"1234567890123", false}, {"0.1234567890123", false},
		{"0", false}, {"-1", false}, {"abc", false}, {`"1"`, false}, {"", false}, {"1e400", false},
	} {
		_, err := ParseRate(c.text)
		if (err == nil) != c.ok || err != nil && !errors.Is(err, ErrInvalidRate) {
			t.Errorf("ParseRate(%q): %v", c.text, err)
		}
	}
}
