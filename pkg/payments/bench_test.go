package payments_test

import (
	"fmt"
	"testing"

	"payments/pkg/wallets"
)

// BenchmarkPayout measures a payout's acceptance against DynamoDB Local:
// validation, the wallet and fee reads, and the one transaction that
// reserves the funds with the payment, external_id claim, ledger entry and
// event. The emulator, not the service, dominates the time.
func BenchmarkPayout(b *testing.B) {
	h := newHarness(b)
	h.fund(wallets.Payout, "1000000000")
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n++
		r := request("237670000001", "100")
		r.ExternalID = fmt.Sprintf("bench-%d", n)
		if _, err := h.svc.Payout(h.ctx, h.company, r); err != nil {
			b.Fatal(err)
		}
	}
}
