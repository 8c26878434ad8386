package issuersandbox_test

import (
	"strings"
	"testing"

	"payments/pkg/providers/issuer/issuersandbox"
)

func TestValidCardNumber(t *testing.T) {
	tests := []struct {
		name   string
		number string
		want   bool
	}{
		{"VISA test number", "4111111111111111", true},
		{"another VISA test number", "4012888888881881", true},
		{"MASTERCARD test number", "5555555555554444", true},
		{"another MASTERCARD test number", "5105105105105100", true},
		{"15 digits", "378282246310005", true},
		{"the textbook example", "79927398713", true},
		{"shortest", "18", true},
		{"check digit changed", "4111111111111112", false},
		{"a middle digit changed", "4111111121111111", false},
		{"first digit changed", "5111111111111111", false},
		{"adjacent digits transposed", "1411111111111111", false},
		{"spaces", "4111 1111 1111 1111", false},
		{"dashes", "4111-1111-1111-1111", false},
		{"a letter", "411111111111111a", false},
		{"a sign", "+4111111111111111", false},
		{"full-width digits", "４１１１１１１１１１１１１１１１", false},
		{"one digit", "0", false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := issuersandbox.ValidCardNumber(tt.number); got != tt.want {
				t.Fatalf("ValidCardNumber(%q) = %t, want %t", tt.number, got, tt.want)
			}
		})
	}

	t.Run("every single-digit change is caught", func(t *testing.T) {
		for _, number := range []string{"4111111111111111", "5555555555554444", issuersandbox.NewCardNumber("4")} {
			for i := range number {
				for d := byte('0'); d <= '9'; d++ {
					if d == number[i] {
						continue
					}
					changed := number[:i] + string(d) + number[i+1:]
					if issuersandbox.ValidCardNumber(changed) {
						t.Errorf("ValidCardNumber(%s), %s with digit %d changed, = true", changed, number, i)
					}
				}
			}
		}
	})
}

func TestNewCardNumber(t *testing.T) {
	const n = 1000
	for _, prefix := range []string{"4", "5", "51"} {
		t.Run(prefix, func(t *testing.T) {
			seen := map[string]bool{}
			// digits[i] holds the digits seen at position i.
			digits := make([]map[byte]bool, 16)
			for i := range digits {
				digits[i] = map[byte]bool{}
			}
			for range n {
				number := issuersandbox.NewCardNumber(prefix)
				if !sixteenDigits.MatchString(number) || !strings.HasPrefix(number, prefix) || !issuersandbox.ValidCardNumber(number) {
					t.Fatalf("NewCardNumber(%q) = %q: want 16 digits, the prefix, Luhn-valid", prefix, number)
				}
				seen[number] = true
				for i := range number {
					digits[i][number[i]] = true
				}
			}
			// Two equal numbers among 1000 of 13 or more random digits
			// have a chance below 1 in 10^7. Every random position takes
			// every digit but with a chance of 10 × 0.9^1000 < 10^-44.
			if len(seen) != n {
				t.Fatalf("%d distinct numbers of %d", len(seen), n)
			}
			for i := len(prefix); i < 15; i++ {
				if len(digits[i]) != 10 {
					t.Errorf("position %d took only %d digits in %d numbers", i, len(digits[i]), n)
				}
			}
		})
	}
}
