package reconcile

import (
	"context"
	"slices"

	"payments/pkg/cards"
	"payments/pkg/deadline"
	"payments/pkg/page"
	"payments/pkg/providers/issuer"
)

// This file is the issuer's run's transactions phase: each settlement and
// refund the issuer lists is matched with the card movement that recorded
// it, applied first when we have none.

// transactions runs one page of phaseTransactions.
func (rn *runner) transactions(ctx context.Context) error {
	p := &rn.r.Progress
	ts, next, err := rn.svc.Issuer.Transactions(ctx, rn.r.Window.From, p.After, pageSize)
	if err != nil {
		return rn.failed(ctx, "list the issuer's transactions", err)
	}
	for _, t := range ts {
		if !t.CreatedAt.Before(rn.r.Window.To) {
			next = ""
			break
		}
		if !deadline.Enough(ctx, itemTime) {
			return errOutOfTime
		}
		if err := rn.transaction(ctx, t); err != nil {
			return rn.failed(ctx, "reconcile transaction "+t.ID, err)
		}
		p.After = t.ID
	}
	if next == "" {
		rn.next(phaseDeferred)
	}
	return nil
}

// transaction compares the issuer's transaction t with our card
// transaction recorded for it, applying t first when we have none.
func (rn *runner) transaction(ctx context.Context, t issuer.StatementTransaction) error {
	companyID, found, err := rn.company(ctx, t.Reference)
	if err != nil {
		return err
	}
	m := Mismatch{Subject: SubjectTransaction, ProviderID: t.ID, CompanyID: companyID, Reference: t.Reference,
		Currency: cards.Currency, ProviderAmount: amount(t.Amount), ProviderStatus: t.Type}
	if !found {
		m.Kind, m.Detail = KindMissing, "the issuer moved it on a card we do not have"
		rn.block(t.AuthorizationID)
		rn.mismatch(ctx, m)
		return nil
	}
	tx, refused, found, err := rn.movementOf(ctx, companyID, t)
	if err != nil {
		return err
	}
	recovered := false
	if !found {
		n := issuer.Notification{ID: reconPrefix + t.ID, Type: t.Type, CardID: t.CardID, Reference: t.Reference, CreatedAt: t.CreatedAt,
			Transaction: &issuer.NetworkTransaction{ID: t.ID, AuthorizationID: t.AuthorizationID, Amount: t.Amount,
				Currency: cards.Currency, Merchant: t.Merchant}}
		applied := rn.apply(ctx, n)
		if outOfTime(ctx, applied) {
			return errOutOfTime
		}
		delete(rn.movements, t.Reference)
		if tx, refused, found, err = rn.movementOf(ctx, companyID, t); err != nil {
			return err
		}
		if !found {
			m.Kind, m.Detail = KindMissing, "the issuer moved it and we have no record of it: "+appliedText(applied)
			rn.block(t.AuthorizationID)
			rn.mismatch(ctx, m)
			return nil
		}
		recovered = true
	}
	m.TransactionID, m.OurAmount, m.OurStatus = tx.ID, amount(tx.Amount), string(tx.Status)
	switch {
	case refused != "":
		m.Kind, m.OurAmount, m.OurStatus = KindStatus, nil, "REFUSED"
		m.Detail = "the issuer moved it; we refused it (" + refused + ")"
		rn.block(t.AuthorizationID)
		rn.mismatch(ctx, m)
	case tx.Amount != t.Amount:
		m.Kind, m.Detail = KindAmount, "our card transaction moved another amount"
		rn.mismatch(ctx, m)
	case recovered:
		rn.recovered(ctx, "a "+t.Type, t.ID)
	default:
		rn.matched()
	}
	return nil
}

// block notes that a transaction of authorization id is not followed here:
// its hold is not released (phaseDeferred) until it is.
func (rn *runner) block(id string) {
	if id != "" {
		rn.r.Progress.Deferred = slices.DeleteFunc(rn.r.Progress.Deferred, func(s string) bool {
			h, err := parseHoldRef(s)
			return err == nil && h.AuthID == id
		})
	}
}

// movementOf returns our card transaction recorded for the issuer's
// transaction t, or the code of its refusal: the claim of t's id (the
// card domain applies a settlement or a refund once per the network's
// transaction id), or of the notification a run built for it; failing
// both, one of the card's transactions of the window that carries t's id
// (recorded under the claim of the event that reported it, as movements
// were before claims moved to the transaction's id).
func (rn *runner) movementOf(ctx context.Context, companyID string, t issuer.StatementTransaction) (tx cardTx, refused string, found bool, err error) {
	for _, claim := range []string{t.ID, reconPrefix + t.ID} {
		o, ok, err := rn.svc.Cards.Outcome(ctx, companyID, claim)
		switch {
		case err != nil:
			return cardTx{}, "", false, err
		case !ok:
			continue
		case o.Refused != "":
			return cardTx{}, o.Refused, true, nil
		}
		tx, err := rn.svc.Cards.Transaction(ctx, companyID, o.TxID)
		return tx, "", err == nil, err
	}
	byID, err := rn.cardMovements(ctx, companyID, t.Reference)
	if err != nil {
		return cardTx{}, "", false, err
	}
	for _, tx := range byID[t.ID] {
		if notifyOf(tx.Type) == t.Type {
			return tx, "", true, nil
		}
	}
	return cardTx{}, "", false, nil
}

// notifyOf is the notification type that records a card transaction of
// type typ.
func notifyOf(typ cards.TxType) string {
	switch typ {
	case cards.TxSettlement:
		return issuer.NotifySettlement
	case cards.TxRefund:
		return issuer.NotifyRefund
	}
	return ""
}

// cardMovements returns the card's transactions created since the window's
// start (less scanMargin) by the network's transaction id, read once per
// run step.
func (rn *runner) cardMovements(ctx context.Context, companyID, cardID string) (map[string][]cardTx, error) {
	if m, ok := rn.movements[cardID]; ok {
		return m, nil
	}
	byID := map[string][]cardTx{}
	f := cards.TxFilter{From: rn.r.Window.From.Add(-scanMargin)}
	for p := (page.Request{Page: 1, Limit: 100}); ; {
		res, err := rn.svc.Cards.CardTransactions(ctx, companyID, cardID, f, p)
		if err != nil {
			return nil, err
		}
		for _, tx := range res.Items {
			if tx.IssuerTxID != "" {
				byID[tx.IssuerTxID] = append(byID[tx.IssuerTxID], tx)
			}
		}
		if res.Next == "" {
			break
		}
		p = p.Following(res.Next, res.Total)
	}
	if rn.movements == nil {
		rn.movements = map[string]map[string][]cardTx{}
	}
	rn.movements[cardID] = byID
	return byID, nil
}
