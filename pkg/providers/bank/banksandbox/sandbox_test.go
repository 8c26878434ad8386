package banksandbox_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"payments/pkg/providers/bank"
	"payments/pkg/providers/bank/banksandbox"
)

// sent records what the sandbox bank queues.
type sent struct {
	body  []byte
	delay time.Duration
}

type fakeQueue struct{ sent []sent }

func (q *fakeQueue) Send(_ context.Context, body []byte, delay time.Duration) error {
	q.sent = append(q.sent, sent{body, delay})
	return nil
}

func TestSandboxDecidesByReference(t *testing.T) {
	tests := []struct {
		reference string
		want      bank.Outcome
	}{
		{"wire-1", bank.Received},
		{"wire-1-reject", bank.Refused},
		{"-reject", bank.Refused},
		{"reject", bank.Received},
		{"wire-1-REJECT", bank.Received},
		{"wire-1-reject ", bank.Received},
	}
	s := banksandbox.New(nil)
	for _, tt := range tests {
		got, err := s.Check(context.Background(), bank.Transfer{Reference: tt.reference})
		if err != nil || got != tt.want {
			t.Errorf("Check(%q) = %s, %v; want %s", tt.reference, got, err, tt.want)
		}
	}
}

func TestSandboxAnswersLater(t *testing.T) {
	q := &fakeQueue{}
	s := banksandbox.New(q)
	if err := s.Expect(context.Background(), bank.Transfer{CompanyID: "co-1", FundingID: "tx-1", Reference: "r"}); err != nil {
		t.Fatal(err)
	}
	var m banksandbox.Message
	if len(q.sent) != 1 || q.sent[0].delay != banksandbox.Delay || json.Unmarshal(q.sent[0].body, &m) != nil ||
		m != (banksandbox.Message{CompanyID: "co-1", FundingID: "tx-1"}) {
		t.Fatalf("queued %+v", q.sent)
	}
	if err := banksandbox.New(nil).Expect(context.Background(), bank.Transfer{}); err == nil {
		t.Error("Expect without a queue succeeded")
	}
}
