package reconcile

import (
	"context"
	"errors"
	"time"

	"payments/pkg/deadline"
	"payments/pkg/payments"
	"payments/pkg/providers/operator"
)

// The phases of an operator's run, in order.
const (
	// phasePayments asks the operator about each payment of ours created
	// in the window that may have reached it.
	phasePayments = "payments"
	// phaseOperatorBalance reads the operator's wallets' balances.
	phaseOperatorBalance = "operator_balances"
)

// PaymentLedger is what the reconciliation reads of our payments
// (moneystore.Payments).
type PaymentLedger interface {
	// CreatedPayments returns up to limit payments of every company
	// created in [from, to), after payment after ("" from the first), and
	// the id to read the next page after ("" after the last).
	CreatedPayments(ctx context.Context, from, to time.Time, after string, limit int) ([]payments.Payment, string, error)
}

// payments runs one page of phasePayments.
func (rn *runner) payments(ctx context.Context) error {
	p := &rn.r.Progress
	ps, next, err := rn.svc.Payments.CreatedPayments(ctx, rn.r.Window.From, rn.r.Window.To, p.After, pageSize)
	if err != nil {
		return rn.failed(ctx, "list our payments", err)
	}
	for _, pay := range ps {
		if !deadline.Enough(ctx, itemTime) {
			return errOutOfTime
		}
		if err := rn.payment(ctx, pay); err != nil {
			return rn.failed(ctx, "reconcile payment "+pay.ID, err)
		}
		p.After = pay.ID
	}
	if next == "" {
		rn.next(phaseOperatorBalance)
	}
	return nil
}

// finalStatus is our status of what the operator reports final as state.
var finalStatus = map[operator.State]payments.Status{
	operator.Succeeded: payments.StatusSuccess,
	operator.Failed:    payments.StatusFailed,
}

// payment compares our payment pay with what the operator holds of it: the
// amount it moved, and its outcome once final on either side. A payment
// that provably never reached the operator (NOT_SUBMITTED) is not asked
// about; one final at neither side is not counted.
func (rn *runner) payment(ctx context.Context, pay payments.Payment) error {
	if pay.Submission == payments.NotSubmitted {
		return nil
	}
	rec, err := rn.svc.Operator.Payment(ctx, payments.OperatorKind(pay.Type), pay.ID)
	if outOfTime(ctx, err) {
		return errOutOfTime
	}
	m := Mismatch{Subject: SubjectPayment, ProviderID: pay.OrderID, CompanyID: pay.CompanyID, Reference: pay.ID,
		Currency: pay.Currency, OurAmount: amount(pay.Amount), OurStatus: string(pay.Status)}
	switch {
	case errors.Is(err, operator.ErrNotFound):
		switch pay.Status {
		case payments.StatusFailed:
			rn.matched() // failed before the operator had it: nothing moved
		case payments.StatusSuccess:
			m.Kind, m.Detail = KindMissing, "we settled it; the operator has no record of it"
			rn.mismatch(ctx, m)
		}
		return nil
	case err != nil:
		m.Kind, m.Detail = KindUnverified, "the operator could not say: "+err.Error()
		rn.mismatch(ctx, m)
		return nil
	}
	m.ProviderID, m.ProviderStatus, m.ProviderAmount = rec.OrderID, string(rec.State), amount(rec.Amount)
	theirs, final := finalStatus[rec.State]
	found := false
	if rec.Amount != pay.Amount || rec.Currency != pay.Currency {
		a := m
		a.Kind, a.Detail = KindAmount, "the operator holds "+rec.Currency+" of another amount"
		rn.mismatch(ctx, a)
		found = true
	}
	switch {
	case final && theirs != pay.Status:
		m.Kind, m.Detail = KindStatus, "final at the operator, not so here: the payout worker or the console settles it"
		if pay.Status.Terminal() {
			m.Detail = "final at both, with opposite outcomes"
		}
		rn.mismatch(ctx, m)
	case !final && pay.Status.Terminal():
		m.Kind, m.Detail = KindStatus, "final here, not at the operator"
		rn.mismatch(ctx, m)
	case final && !found:
		rn.matched()
	}
	return nil
}

// operatorBalances runs phaseOperatorBalance: the operator's wallets'
// balances are kept in the report.
func (rn *runner) operatorBalances(ctx context.Context) error {
	bs, err := rn.svc.Operator.Balances(ctx)
	switch {
	case outOfTime(ctx, err):
		return errOutOfTime
	case err != nil:
		rn.mismatch(ctx, Mismatch{Kind: KindUnverified, Subject: SubjectBalance, Detail: "the operator's balances could not be read: " + err.Error()})
	}
	rn.r.Balances = nil
	for _, b := range bs {
		rn.r.Balances = append(rn.r.Balances, Balance{Country: b.Country, Currency: b.Currency, Provider: b.Amount})
	}
	rn.next(phaseDone)
	return nil
}
