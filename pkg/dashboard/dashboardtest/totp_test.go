package dashboardtest_test

import (
	"encoding/base32"
	"testing"
	"time"

	"payments/pkg/dashboard/dashboardtest"
)

// TestTOTP checks the codes of RFC 6238's appendix B (SHA-1, its 20-byte
// seed), last six digits.
func TestTOTP(t *testing.T) {
	secret := base32.StdEncoding.EncodeToString([]byte("12345678901234567890"))
	for _, tt := range []struct {
		unix int64
		want string
	}{{59, "287082"}, {1111111109, "081804"}, {1234567890, "005924"}, {2000000000, "279037"}} {
		if got := dashboardtest.TOTP(secret, time.Unix(tt.unix, 0)); got != tt.want {
			t.Errorf("TOTP at %d = %s, want %s", tt.unix, got, tt.want)
		}
	}
	if got := dashboardtest.TOTP("not base32!", time.Unix(59, 0)); got != "" {
		t.Errorf("TOTP of a bad secret = %q, want none", got)
	}
}
