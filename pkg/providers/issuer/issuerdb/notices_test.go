package issuerdb_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"payments/pkg/providers/issuer"
	"payments/pkg/providers/issuer/issuerdb"
	"payments/pkg/providers/issuer/issuersandbox"
	"payments/pkg/store/storetest"
)

// TestSandboxNetworkRedelivers: against DynamoDB Local, the sandbox
// network keeps what it sends until acknowledged, and its Redeliver, on an
// injected clock, delivers again what is due and unacknowledged (the first
// time RedeliverAfter after the send, then twice as long each time), a
// failed delivery included, and nothing once acknowledged.
func TestSandboxNetworkRedelivers(t *testing.T) {
	ctx := context.Background()
	s := issuerdb.New(storetest.NewDB(t).DB)
	var delivered []string
	fail := false
	n := issuersandbox.NewNetwork(nil, func(_ context.Context, body []byte) error {
		no, err := issuer.ParseNotification(body)
		if err != nil {
			return err
		}
		delivered = append(delivered, no.ID)
		if fail {
			return errors.New("the gateway is down")
		}
		return nil
	})
	n.Notices = s
	sent := sandboxIssuerNow
	n.Now = func() time.Time { return sent }
	settled, err := n.Follow(ctx, "", issuer.NotifySettlement, "card_1", "ref", issuer.NetworkTransaction{AuthorizationID: "ntx_1", Amount: 500, Close: true}, "")
	if err != nil {
		t.Fatal(err)
	}
	reversed, err := n.Follow(ctx, "", issuer.NotifyReversal, "card_1", "ref", issuer.NetworkTransaction{AuthorizationID: "ntx_2", Amount: 0}, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := issuersandbox.New(s, nil).Acknowledge(ctx, reversed.ID); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		at   time.Duration // after the sends
		fail bool
		want []string // delivered again
	}{
		{"before it is due", issuersandbox.RedeliverAfter - time.Second, false, nil},
		{"due: the unacknowledged one, its delivery failing", issuersandbox.RedeliverAfter, true, []string{settled.ID}},
		{"not due again yet", issuersandbox.RedeliverAfter + 2*issuersandbox.RedeliverAfter - time.Second, false, nil},
		{"due again, twice as late", issuersandbox.RedeliverAfter + 2*issuersandbox.RedeliverAfter, false, []string{settled.ID}},
	}
	for _, st := range steps {
		delivered, fail = nil, st.fail
		got, err := n.Redeliver(ctx, sent.Add(st.at))
		if err != nil || !slices.Equal(delivered, st.want) || got != len(st.want) && !st.fail {
			t.Fatalf("%s: delivered %v (%d, %v), want %v", st.name, delivered, got, err, st.want)
		}
	}
	if err := issuersandbox.New(s, nil).Acknowledge(ctx, settled.ID); err != nil {
		t.Fatal(err)
	}
	delivered = nil
	if got, err := n.Redeliver(ctx, sent.Add(24*time.Hour)); err != nil || got != 0 || len(delivered) != 0 {
		t.Errorf("after the acknowledgement: delivered %v (%d, %v)", delivered, got, err)
	}
}
