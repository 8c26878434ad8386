package stripesim_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/stripe/stripe-go/v85"

	"payments/pkg/providers/issuer/stripeissuing/stripesim"
)

// captured returns a capture of amount on a new card.
func (h *harness) captured(t *testing.T, amount int64) *stripe.IssuingTransaction {
	t.Helper()
	c := h.card(t)
	a := h.capture(t, h.authorize(t, c.ID, amount).ID, 0, false)
	return a.Transactions[0]
}

// dispute creates a dispute of transaction tx, fraudulent, explained so.
func (h *harness) dispute(t *testing.T, tx, explanation string, amount int64) *stripe.IssuingDispute {
	t.Helper()
	p := &stripe.IssuingDisputeCreateParams{
		Transaction: stripe.String(tx),
		Evidence: &stripe.IssuingDisputeCreateEvidenceParams{
			Reason: stripe.String("fraudulent"), Fraudulent: &stripe.IssuingDisputeCreateEvidenceFraudulentParams{Explanation: stripe.String(explanation)},
		},
		Metadata: map[string]string{"reference": "dispute-1"},
	}
	if amount > 0 {
		p.Amount = stripe.Int64(amount)
	}
	d, err := h.sc.V1IssuingDisputes.Create(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// credited reads dispute id with its balance transactions and returns
// their sum.
func (h *harness) credited(t *testing.T, id string) (stripe.IssuingDisputeStatus, int64) {
	t.Helper()
	p := &stripe.IssuingDisputeRetrieveParams{}
	p.AddExpand("balance_transactions")
	d, err := h.sc.V1IssuingDisputes.Retrieve(context.Background(), id, p)
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, b := range d.BalanceTransactions {
		if b.Type != "issuing_dispute" || b.Currency != "usd" {
			t.Errorf("balance transaction %+v", b)
		}
		sum += b.Amount
	}
	return d.Status, sum
}

// TestDisputeOutcomes submits disputes as Stripe's test mode decides them:
// by their explanation at submission (winning_evidence, losing_evidence),
// or later (SettleDispute), a provisional credit taken back when lost; a
// dispute never submitted expires. Each step sends its events, their
// dispute as it is then, without its balance transactions (Stripe
// includes them only when asked); the Issuing balance follows the credits.
func TestDisputeOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name        string
		explanation string
		amount      int64 // disputed, 0: all of the 1250 captured
		settle      func(h *harness, id string) error
		status      stripe.IssuingDisputeStatus
		credited    int64
		events      []string // after the creation
	}{
		{"won by its evidence", stripesim.WinningEvidence, 0, nil, "won", 1250,
			[]string{"issuing_dispute.submitted", "issuing_dispute.closed", "issuing_dispute.funds_reinstated"}},
		{"lost by its evidence", stripesim.LosingEvidence, 0, nil, "lost", 0,
			[]string{"issuing_dispute.submitted", "issuing_dispute.closed"}},
		{"won in part, later", "The cardholder never made it.", 1000,
			func(h *harness, id string) error { return h.sim.SettleDispute(id, "won") }, "won", 1000,
			[]string{"issuing_dispute.submitted", "issuing_dispute.closed", "issuing_dispute.funds_reinstated"}},
		{"still submitted", "The cardholder never made it.", 0, nil, "submitted", 0,
			[]string{"issuing_dispute.submitted"}},
		{"credited, then lost", "The cardholder never made it.", 0,
			func(h *harness, id string) error {
				if err := h.sim.CreditDispute(id, 1250); err != nil {
					return err
				}
				return h.sim.SettleDispute(id, "lost")
			}, "lost", 0,
			[]string{"issuing_dispute.submitted", "issuing_dispute.funds_reinstated", "issuing_dispute.closed", "issuing_dispute.funds_rescinded"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			ctx := context.Background()
			tx := h.captured(t, 1250)
			h.delivered(t)
			before := h.balance(t)
			d := h.dispute(t, tx.ID, tc.explanation, tc.amount)
			want := tc.amount
			if want == 0 {
				want = 1250
			}
			if d.Status != "unsubmitted" || d.Amount != want || d.Transaction.ID != tx.ID || d.Metadata["reference"] != "dispute-1" ||
				d.Evidence.Reason != "fraudulent" || d.Evidence.Fraudulent.Explanation != tc.explanation {
				t.Errorf("created %+v", d)
			}
			if got := types(h.delivered(t)); !slices.Equal(got, []string{"issuing_dispute.created"}) {
				t.Errorf("events %q", got)
			}
			submitted, err := h.sc.V1IssuingDisputes.Submit(ctx, d.ID, nil)
			if err != nil {
				t.Fatal(err)
			}
			if submitted.Status != "submitted" {
				t.Errorf("submit answered %s", submitted.Status)
			}
			if tc.settle != nil {
				if err := tc.settle(h, d.ID); err != nil {
					t.Fatal(err)
				}
			}
			events := h.delivered(t)
			if got := types(events); !slices.Equal(got, tc.events) {
				t.Errorf("events %q, want %q", got, tc.events)
			}
			for _, e := range events {
				var raw map[string]json.RawMessage
				if err := json.Unmarshal(e.Data.Raw, &raw); err != nil || string(raw["balance_transactions"]) != "null" || string(raw["transaction"]) != `"`+tx.ID+`"` {
					t.Errorf("%s carries balance_transactions %s, transaction %s", e.Type, raw["balance_transactions"], raw["transaction"])
				}
			}
			if status, credited := h.credited(t, d.ID); status != tc.status || credited != tc.credited {
				t.Errorf("dispute %s credited %d, want %s %d", status, credited, tc.status, tc.credited)
			}
			if got := h.balance(t); got != before+tc.credited {
				t.Errorf("balance %d, want %d", got, before+tc.credited)
			}
		})
	}
	t.Run("expired unsubmitted", func(t *testing.T) {
		h := newHarness(t)
		d := h.dispute(t, h.captured(t, 500).ID, "", 0)
		if err := h.sim.SettleDispute(d.ID, "won"); err == nil {
			t.Error("an unsubmitted dispute was won")
		}
		if err := h.sim.SettleDispute(d.ID, "expired"); err != nil {
			t.Fatal(err)
		}
		if got := types(h.delivered(t)); got[len(got)-1] != "issuing_dispute.closed" {
			t.Errorf("events %q", got)
		}
		if status, credited := h.credited(t, d.ID); status != "expired" || credited != 0 {
			t.Errorf("dispute %s credited %d", status, credited)
		}
	})
}

// TestDisputeRefusals: what Stripe's eligibility rules refuse, the
// simulation refuses (400); a dispute's transaction and its card are
// expanded when asked.
func TestDisputeRefusals(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	tx := h.captured(t, 1250)
	refunded := h.captured(t, 900)
	refund, err := h.sc.V1TestHelpersIssuingTransactions.Refund(ctx, refunded.ID, &stripe.TestHelpersIssuingTransactionRefundParams{RefundAmount: stripe.Int64(100)})
	if err != nil {
		t.Fatal(err)
	}
	unexplained := h.dispute(t, tx.ID, "", 0)
	for _, tc := range []struct {
		name string
		call func() error
		code stripe.ErrorCode
	}{
		{"unknown transaction", func() error {
			_, err := h.sc.V1IssuingDisputes.Create(ctx, &stripe.IssuingDisputeCreateParams{Transaction: stripe.String("ipi_none")})
			return err
		}, "resource_missing"},
		{"a refund", func() error {
			_, err := h.sc.V1IssuingDisputes.Create(ctx, &stripe.IssuingDisputeCreateParams{Transaction: stripe.String(refund.ID)})
			return err
		}, ""},
		{"a capture refunded in part", func() error {
			_, err := h.sc.V1IssuingDisputes.Create(ctx, &stripe.IssuingDisputeCreateParams{Transaction: stripe.String(refunded.ID)})
			return err
		}, ""},
		{"disputed already", func() error {
			_, err := h.sc.V1IssuingDisputes.Create(ctx, &stripe.IssuingDisputeCreateParams{Transaction: stripe.String(tx.ID)})
			return err
		}, ""},
		{"more than captured", func() error {
			_, err := h.sc.V1IssuingDisputes.Create(ctx, &stripe.IssuingDisputeCreateParams{Transaction: stripe.String(h.captured(t, 300).ID), Amount: stripe.Int64(301)})
			return err
		}, "parameter_invalid_integer"},
		{"submitted without its explanation", func() error { _, err := h.sc.V1IssuingDisputes.Submit(ctx, unexplained.ID, nil); return err }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			se := stripeErr(tc.call())
			if se == nil || se.HTTPStatusCode != http.StatusBadRequest || se.Code != tc.code {
				t.Errorf("err %v, want 400 %q", se, tc.code)
			}
		})
	}
	p := &stripe.IssuingDisputeRetrieveParams{}
	p.AddExpand("transaction.card")
	d, err := h.sc.V1IssuingDisputes.Retrieve(ctx, unexplained.ID, p)
	if err != nil {
		t.Fatal(err)
	}
	if d.Transaction == nil || d.Transaction.Amount != -1250 || d.Transaction.Card == nil || d.Transaction.Card.Metadata["reference"] != "card-1" || d.BalanceTransactions != nil {
		t.Errorf("dispute with its transaction's card: %+v", d.Transaction)
	}
	if err := h.sim.CreditDispute(unexplained.ID, 1251); err == nil {
		t.Error("credited more than disputed")
	}
}
