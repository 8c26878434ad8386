package issuersandbox_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"payments/pkg/providers/issuer"
	"payments/pkg/providers/issuer/issuerdb"
	"payments/pkg/providers/issuer/issuersandbox"
)

// TestSandboxDisputes: the sandbox issuer opens a dispute once per
// reference and once per transaction, decided by the cents of the amount
// (.13 LOST, .14 refused, else WON), and keeps the network's two reports
// of it: SUBMITTED with the provisional credit, due at once, and the
// decision, due DisputeDecisionAfter later, each what the issuer has then.
func TestSandboxDisputes(t *testing.T) {
	ctx := context.Background()
	sb, db, _ := newSandboxDB(t)
	card := issue(t, sb, 5000)
	notices := issuerdb.New(db.DB)
	open := func(ref, tx string, amount int64) (issuer.Dispute, error) {
		return sb.OpenDispute(ctx, issuer.DisputeRequest{Reference: ref, CardID: card.ID, TransactionID: tx,
			Reason: issuer.DisputeNotReceived, Explanation: "never delivered", Amount: amount})
	}
	tests := []struct {
		name     string
		amount   int64
		decision string
		credited int64
	}{
		{"won", 1250, issuer.DisputeWon, 1250},
		{"lost", 1213, issuer.DisputeLost, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ref, tx := uuid.NewString(), "ntx_"+uuid.NewString()
			d, err := open(ref, tx, tt.amount)
			if err != nil {
				t.Fatal(err)
			}
			want := issuer.Dispute{ID: d.ID, Reference: ref, TransactionID: tx, Status: issuer.DisputeSubmitted, Amount: tt.amount, Credited: tt.amount}
			if d != want || len(d.ID) < 4 || d.ID[:3] != "dp_" {
				t.Fatalf("opened %+v, want %+v", d, want)
			}
			again, err := open(ref, tx, tt.amount)
			if err != nil || again != d {
				t.Fatalf("opened again: %+v, %v; want %+v", again, err, d)
			}
			if _, err := open(uuid.NewString(), tx, tt.amount); !errors.Is(err, issuer.ErrDeclined) {
				t.Fatalf("the transaction disputed again under another reference: %v, want ErrDeclined", err)
			}
			// The reports: SUBMITTED due now, the decision due later.
			due, err := notices.DueNotices(ctx, now.Add(issuersandbox.DisputeDecisionAfter), 100)
			if err != nil {
				t.Fatal(err)
			}
			var reports []issuer.Notification
			for _, n := range due {
				no, err := issuer.ParseNotification(n.Body)
				if err != nil {
					t.Fatalf("report %s: %v", n.ID, err)
				}
				if no.Dispute.ID == d.ID {
					if !n.Due.Equal(no.CreatedAt) {
						t.Errorf("report %s due %v, made %v", n.ID, n.Due, no.CreatedAt)
					}
					reports = append(reports, no)
				}
			}
			if len(reports) != 2 {
				t.Fatalf("%d reports of the dispute, want 2", len(reports))
			}
			submitted, decided := reports[0], reports[1]
			if submitted.Type != issuer.NotifyDispute || submitted.CardID != card.ID || submitted.Reference != card.Reference ||
				!submitted.CreatedAt.Equal(now) || *submitted.Dispute != want {
				t.Errorf("first report %+v %+v, want SUBMITTED with the credit, now", submitted, submitted.Dispute)
			}
			decision := want
			decision.Status, decision.Credited = tt.decision, tt.credited
			if !decided.CreatedAt.Equal(now.Add(issuersandbox.DisputeDecisionAfter)) || *decided.Dispute != decision {
				t.Errorf("second report at %v: %+v, want %+v at %v", decided.CreatedAt, decided.Dispute, decision, now.Add(issuersandbox.DisputeDecisionAfter))
			}
			// Asked again once decided, the issuer answers the decision.
			sb.Now = func() time.Time { return now.Add(issuersandbox.DisputeDecisionAfter) }
			defer func() { sb.Now = func() time.Time { return now } }()
			if late, err := open(ref, tx, tt.amount); err != nil || late != decision {
				t.Errorf("opened again once decided: %+v, %v; want %+v", late, err, decision)
			}
			for _, n := range due {
				if err := notices.AckNotice(ctx, n.ID); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
	bad := []struct {
		name string
		r    issuer.DisputeRequest
		want error
	}{
		{"refused amount", issuer.DisputeRequest{Reference: "r1", CardID: card.ID, TransactionID: "ntx_1", Reason: issuer.DisputeFraudulent, Amount: 514}, issuer.ErrDeclined},
		{"no reference", issuer.DisputeRequest{CardID: card.ID, TransactionID: "ntx_2", Reason: issuer.DisputeFraudulent, Amount: 500}, issuer.ErrDeclined},
		{"unknown reason", issuer.DisputeRequest{Reference: "r3", CardID: card.ID, TransactionID: "ntx_3", Reason: "BORED", Amount: 500}, issuer.ErrDeclined},
		{"no amount", issuer.DisputeRequest{Reference: "r4", CardID: card.ID, TransactionID: "ntx_4", Reason: issuer.DisputeFraudulent}, issuer.ErrDeclined},
		{"unknown card", issuer.DisputeRequest{Reference: "r5", CardID: "card_nope", TransactionID: "ntx_5", Reason: issuer.DisputeFraudulent, Amount: 500}, issuer.ErrNotFound},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := sb.OpenDispute(ctx, tt.r); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
	if due, err := notices.DueNotices(ctx, now.Add(24*time.Hour), 100); err != nil || len(due) != 0 {
		t.Fatalf("a refused dispute kept reports: %d, %v", len(due), err)
	}
}
