package countries

import (
	"strings"
	"testing"
)

func TestIsAlpha2(t *testing.T) {
	tests := []struct {
		code string
		want bool
	}{
		{"CM", true}, {"CD", true}, {"US", true}, {"ZW", true}, {"AD", true},
		{"cm", false}, {"XX", false}, {"UK", false}, {"DA", false}, {"C", false}, {"CMR", false}, {"", false}, {"M ", false},
	}
	for _, tt := range tests {
		if got := IsAlpha2(tt.code); got != tt.want {
			t.Errorf("IsAlpha2(%q) = %v, want %v", tt.code, got, tt.want)
		}
	}
	if n := len(strings.Fields(alpha2)); n != 249 {
		t.Errorf("%d codes, want 249", n)
	}
}

func TestIsDialCode(t *testing.T) {
	tests := []struct {
		code string
		want bool
	}{
		{"+1", true}, {"+237", true}, {"+1684", true},
		{"237", false}, {"+", false}, {"+12345", false}, {"+23a", false}, {"++1", false}, {"", false}, {"+٣", false},
	}
	for _, tt := range tests {
		if got := IsDialCode(tt.code); got != tt.want {
			t.Errorf("IsDialCode(%q) = %v, want %v", tt.code, got, tt.want)
		}
	}
}
