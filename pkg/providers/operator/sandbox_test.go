package operator

import (
	"context"
	"encoding/json"
	"testing"
)

func TestSandboxOutcomes(t *testing.T) {
	tests := []struct {
		phone  string
		state  State
		reason string
	}{
		{"237670000001", Succeeded, ""},
		{"237670000000", Failed, SandboxNotFoundReason},
		{"237670000999", Processing, ""},
		{"2250700", Succeeded, ""},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.phone, func(t *testing.T) {
			var g Gateway = Sandbox{}
			sub, err := g.Submit(ctx, Request{Kind: Payout, TransactionID: "tx-1", PhoneNumber: tt.phone})
			if err != nil || sub.State != Processing {
				t.Fatalf("Submit = %+v, %v", sub, err)
			}
			// A second instance answers the same: the sandbox keeps no state.
			got, err := Sandbox{}.Status(ctx, sub.OrderID)
			if err != nil {
				t.Fatal(err)
			}
			if got.State != tt.state || got.Reason != tt.reason || got.OrderID != sub.OrderID {
				t.Fatalf("Status = %+v, want %s %q", got, tt.state, tt.reason)
			}
			var raw map[string]string
			if err := json.Unmarshal(got.Raw, &raw); err != nil || raw["status"] != string(tt.state) {
				t.Errorf("raw = %s (%v)", got.Raw, err)
			}
		})
	}
	if _, err := (Sandbox{}).Status(ctx, "nope"); err == nil {
		t.Error("unknown order accepted")
	}
}
