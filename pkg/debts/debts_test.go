package debts_test

import (
	"fmt"
	"testing"
	"time"

	"payments/pkg/debts"
)

func TestPlan(t *testing.T) {
	pending := func(id string, remaining int64) debts.Debt {
		return debts.Debt{ID: id, Amount: 100, Remaining: remaining, Status: debts.Pending}
	}
	paid := debts.Debt{ID: "paid", Amount: 100, Status: debts.Recovered}
	tests := []struct {
		name    string
		pending []debts.Debt
		credit  int64
		want    string // id:amount of each payment
	}{
		{"oldest first, in full", []debts.Debt{pending("a", 50), pending("b", 70)}, 120, "[a:50 b:70]"},
		{"a credit smaller than the debts", []debts.Debt{pending("a", 50), pending("b", 70)}, 60, "[a:50 b:10]"},
		{"smaller than the oldest", []debts.Debt{pending("a", 50), pending("b", 70)}, 20, "[a:20]"},
		{"more than owed", []debts.Debt{pending("a", 50)}, 500, "[a:50]"},
		{"a paid debt is skipped", []debts.Debt{paid, pending("a", 50)}, 10, "[a:10]"},
		{"no debts", nil, 100, "[]"},
		{"no credit", []debts.Debt{pending("a", 50)}, 0, "[]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := []string{}
			for _, p := range debts.Plan(tt.pending, tt.credit) {
				got = append(got, fmt.Sprintf("%s:%d", p.Debt.ID, p.Amount))
			}
			if fmt.Sprint(got) != tt.want {
				t.Errorf("Plan = %v, want %s", got, tt.want)
			}
		})
	}
}

func TestPaymentAfter(t *testing.T) {
	now := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	d := debts.Debt{ID: "a", Amount: 100, Remaining: 60, Status: debts.Pending}
	if got := (debts.Payment{Debt: d, Amount: 20}).After(now); got.Remaining != 40 || got.Status != debts.Pending || got.RecoveredAt != nil {
		t.Errorf("part paid: %+v", got)
	}
	if got := (debts.Payment{Debt: d, Amount: 60}).After(now); got.Remaining != 0 || got.Status != debts.Recovered || !got.RecoveredAt.Equal(now) {
		t.Errorf("paid in full: %+v", got)
	}
}
