package webhooks

import (
	"strings"
	"testing"
	"time"
)

// BenchmarkSign measures the signature of a typical event body.
func BenchmarkSign(b *testing.B) {
	secret := strings.Repeat("ab", 32)
	body := []byte(`{"event":"payment.payout.status_updated","data":{"transaction_id":"01a20592-b38a-731b-adf2-f7b509985ec2","status":"SUCCESS","amount":5000,"currency":"XAF"}}`)
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		_ = Sign(secret, now, body)
	}
}
