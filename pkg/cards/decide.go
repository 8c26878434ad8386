package cards

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"payments/pkg/contention"
	"payments/pkg/events"
	"payments/pkg/fees"
	"payments/pkg/metrics"
	"payments/pkg/providers/issuer"
)

// cardNotFound is the decline reason of a request about a card we do not
// have: nothing is recorded.
const cardNotFound = "card_not_found"

// Decide answers the network's request for a decision on a card payment
// (POST /issuer/authorizations), in the request: the card is read (its
// company once per process) and the decision written in one conditional
// transaction (decide), with its events in the outbox; they are published
// when the network's advice of the outcome is applied (advised), or by the
// sweeper past outbox.Grace if none comes: nothing else is on the path of
// the answer. A retry of the request (the same id) writes nothing and gets
// the decision recorded, with the card's available balance as it is now;
// ErrDuplicateNetworkTx when the id was decided for another card. A
// request about a card we do not have is declined, card_not_found,
// recording nothing. Each decision is counted (AuthorizationsApproved or
// AuthorizationsDeclined), a retry's answer not; every answer's time is
// measured (AuthorizationDecisionLatency): the network waits for each.
func (s *Service) Decide(ctx context.Context, r issuer.AuthorizationRequest) (issuer.AuthorizationAnswer, error) {
	start := time.Now()
	a, again, err := s.decideRequest(ctx, r)
	if err != nil {
		return a, err
	}
	ms := []metrics.Metric{metrics.Elapsed(metrics.AuthorizationDecisionLatency, time.Since(start))}
	switch {
	case again:
	case a.Decision == issuer.Approved:
		ms = append(ms, metrics.One(metrics.AuthorizationsApproved))
	default:
		ms = append(ms, metrics.One(metrics.AuthorizationsDeclined))
	}
	metrics.Record(ctx, nil, ms...)
	return a, nil
}

// decideRequest is Decide's answer, and whether it answers again a
// decision made before.
func (s *Service) decideRequest(ctx context.Context, r issuer.AuthorizationRequest) (a issuer.AuthorizationAnswer, again bool, err error) {
	card, err := s.issuerCard(ctx, r.Reference, r.CardID)
	if errors.Is(err, ErrNotFound) {
		reason := cardNotFound
		return issuer.AuthorizationAnswer{Decision: issuer.Declined, DeclineReason: &reason}, false, nil
	}
	if err != nil {
		return issuer.AuthorizationAnswer{}, false, err
	}
	tx, available, err := s.decide(ctx, card, r.ID, r.Transaction())
	if errors.Is(err, ErrEventApplied) || errors.Is(err, ErrDuplicateNetworkTx) {
		a, err := s.decided(ctx, card, r.ID)
		return a, true, err
	}
	if err != nil {
		return issuer.AuthorizationAnswer{}, false, err
	}
	return answer(tx, available), false, nil
}

// decided answers again authorization id of card, decided before;
// ErrDuplicateNetworkTx when the id was decided for another card.
func (s *Service) decided(ctx context.Context, card Card, id string) (issuer.AuthorizationAnswer, error) {
	tx, err := s.Store.NetworkTransaction(ctx, card.CompanyID, id)
	if err != nil {
		return issuer.AuthorizationAnswer{}, fmt.Errorf("cards: read the decision of authorization %s: %w", id, err)
	}
	if tx.CardID != card.ID {
		return issuer.AuthorizationAnswer{}, fmt.Errorf("authorization %s of card %s asked of card %s: %w", id, tx.CardID, card.ID, ErrDuplicateNetworkTx)
	}
	if card, err = s.Store.Card(ctx, card.CompanyID, card.ID); err != nil {
		return issuer.AuthorizationAnswer{}, err
	}
	return answer(tx, card.Available()), nil
}

// answer is the answer recording tx, an authorization approved or a
// decline, leaving available on the card.
func answer(tx Transaction, available int64) issuer.AuthorizationAnswer {
	a := issuer.AuthorizationAnswer{Decision: issuer.Approved, TransactionID: &tx.ID, AvailableBalance: available}
	if tx.Type == TxDecline {
		reason := string(tx.DeclineReason)
		a.Decision, a.DeclineReason = issuer.Declined, &reason
	}
	return a
}

// decide decides authorization nt on card, as read, claiming claim (the
// authorization's id): approved when the card can (ACTIVE, not locked,
// available ≥ amount), by one conditional write that places the hold
// (none for a verification); else declined, with the failed-payment fee,
// by one write too. A write whose condition the card no longer meets
// (another decision took what it had) reads the card again and decides
// again. It returns the transaction written and what the card had
// available after it, as computed from the card it read.
func (s *Service) decide(ctx context.Context, card Card, claim string, nt *issuer.NetworkTransaction) (Transaction, int64, error) {
	var made Transaction
	var available int64
	lost := fmt.Errorf("authorization %s: %w", claim, ErrChanged)
	_, err := contention.Retry.Do(ctx, func(ctx context.Context) (bool, error) {
		var err error
		if reason := declineReason(card, nt.Amount); reason != "" {
			made, err = s.decline(ctx, card, claim, nt, reason)
			available = card.Available() + made.CardDelta
		} else {
			made, err = s.approve(ctx, card, claim, nt)
			available = card.Available() - made.Hold
		}
		if !errors.Is(err, ErrChanged) && !errors.Is(err, ErrCardRefused) {
			return false, err
		}
		if card, err = s.Store.Card(ctx, card.CompanyID, card.ID); err != nil {
			return false, err
		}
		return true, lost
	})
	return made, available, err
}

// approve writes the approval of authorization nt on card: a hold of its
// amount (none for a verification), on the condition that the card is
// ACTIVE, not locked and has it available (else ErrCardRefused).
func (s *Service) approve(ctx context.Context, card Card, claim string, nt *issuer.NetworkTransaction) (Transaction, error) {
	rec, err := s.approval(card, claim, nt)
	if err != nil {
		return Transaction{}, err
	}
	rec.Approve = true
	return rec.Txs[0], s.recordDecision(ctx, rec)
}

// approval returns the record of the approval of authorization nt on
// card, claimed by claim: the AUTHORIZATION holding its amount (nothing,
// SUCCESS, for a verification) and its event.
func (s *Service) approval(card Card, claim string, nt *issuer.NetworkTransaction) (Record, error) {
	now := s.now()
	tx := s.networkTx(card, TxAuthorization, nt, now)
	tx.Kind = AuthKind(nt.Kind)
	rec := Record{EventID: claim, Card: card, Now: now}
	var p events.Payload
	switch tx.Kind {
	case KindVerification:
		tx.Status, tx.CompletedAt = TxSuccess, &now
		p = events.CardVerificationCompletedData{
			CardID: card.ID, Status: events.CardVerificationStatusVerified,
			Message: "Card verified by " + tx.Merchant.Name, Merchant: events.Merchant{Name: tx.Merchant.Name}, Reference: tx.ID,
		}
	case KindPreauthorization:
		tx.Status, tx.Hold, rec.HeldDelta = TxPending, tx.Amount, tx.Amount
		p = events.TransactionPreauthorizationCreatedData{CardTransaction: cardTxEvent(tx)}
	default:
		tx.Status, tx.Hold, rec.HeldDelta = TxPending, tx.Amount, tx.Amount
		p = events.TransactionAuthorizationCreatedData{CardTransaction: cardTxEvent(tx)}
	}
	rec.Txs = []Transaction{tx}
	return rec, s.addEvents(&rec, p)
}

// recordDecision writes rec, a decision, leaving its events to be
// published when the network's advice is applied (advised).
func (s *Service) recordDecision(ctx context.Context, rec Record) error {
	if err := s.Store.Record(ctx, rec); err != nil {
		return err
	}
	logRecorded(ctx, rec.Txs[0])
	return nil
}

// declineReason says why card cannot approve amount, "" when it can.
func declineReason(card Card, amount int64) DeclineReason {
	switch {
	case card.Status == Terminated:
		return DeclineTerminated
	case card.IsLocked:
		return DeclineLocked
	case card.Status == Frozen:
		return DeclineFrozen
	case card.Status != Active:
		return DeclineInactive
	case card.Available() < amount:
		return DeclineInsufficient
	}
	return ""
}

// decline writes the decline of authorization nt on card, for reason,
// with its failed-payment fee (chargeFee): ErrCardRefused or ErrChanged
// when the card or the wallet no longer has what the fee takes.
func (s *Service) decline(ctx context.Context, card Card, claim string, nt *issuer.NetworkTransaction, reason DeclineReason) (Transaction, error) {
	now := s.now()
	tx := s.declineTx(card, nt, reason, now)
	rec := Record{EventID: claim, Card: card, Now: now}
	fee, err := s.fee(ctx, card.CompanyID, fees.TypeCardPaymentFailure, tx.Amount)
	if err != nil {
		return Transaction{}, err
	}
	charged, err := s.chargeFee(ctx, &rec, &tx, fee, tx.Amount, card.Available(), events.FeeTypePaymentFailure)
	if err != nil {
		return Transaction{}, err
	}
	rec.Txs = []Transaction{tx}
	declined := events.TransactionAuthorizationDeclinedData{CardTransaction: cardTxEvent(tx), DeclineReason: string(reason)}
	if err := s.addEvents(&rec, append([]events.Payload{declined}, charged...)...); err != nil {
		return Transaction{}, err
	}
	return tx, s.recordDecision(ctx, rec)
}

// declineTx returns the DECLINE card transaction of authorization nt on
// card, for reason, at now.
func (s *Service) declineTx(card Card, nt *issuer.NetworkTransaction, reason DeclineReason, now time.Time) Transaction {
	tx := s.networkTx(card, TxDecline, nt, now)
	tx.Kind, tx.Status, tx.CompletedAt = AuthKind(nt.Kind), TxFailed, &now
	tx.DeclineReason, tx.Error = reason, string(reason)
	return tx
}

// advise applies the network's advice of authorization n.Transaction,
// which it decided. An advice of our own decision writes nothing (Apply
// then finishes it: advised). A decline of the network's own
// (StandInReason: our answer was late or missing) is recorded as what the
// network decided, a DECLINE (issuer_timeout, without fee: the decline is
// not ours):
//   - when we approved, too late, our approval becomes that decline, its
//     hold released, claimed by the advice's id (declineLate); on a card
//     terminated since, whose holds' money goes to the wallet, the hold is
//     released by a REVERSAL (reason issuer_timeout) instead;
//   - when we decided nothing yet, the decline is recorded claiming the
//     authorization's id, so that our decision, if it comes later, finds
//     it decided and places no hold.
func (s *Service) advise(ctx context.Context, card Card, n issuer.Notification) error {
	if n.Decision == issuer.Approved {
		return s.adviseApproval(ctx, card, n)
	}
	if !standIn(n) {
		return nil // our own decline, recorded
	}
	id := n.Transaction.ID
	// Twice at most: a decision of ours may land between the read and the
	// write of the network's decline, which then follows it; or the card
	// may change (a termination), which is then read again.
	for range 2 {
		auth, err := s.Store.NetworkTransaction(ctx, card.CompanyID, id)
		switch {
		case errors.Is(err, ErrTransactionNotFound):
			err = s.recordStandIn(ctx, card, n)
			if errors.Is(err, ErrEventApplied) || errors.Is(err, ErrDuplicateNetworkTx) {
				continue
			}
			return err
		case err != nil:
			return err
		case auth.CardID != card.ID:
			return ErrTransactionNotFound
		case auth.Type != TxAuthorization:
			return nil // the network's decline, recorded
		case auth.Hold == 0 && auth.Kind != KindVerification:
			// Its hold released already (reversed, expired, or a
			// terminated card's, by the sweeper): what reported it stands.
			slog.WarnContext(ctx, "the network declined an authorization whose hold was released already: left as it is",
				"transaction_id", auth.ID, "card_id", card.ID, "event_id", n.ID)
			return nil
		case !card.Status.Live():
			// Terminated since our approval: the hold's money leaves the
			// card for the wallet, as a REVERSAL (FinishTermination),
			// claimed by the advice: the network made no transaction of
			// its own (the authorization's id claims our decision).
			return s.follow(ctx, card, issuer.Notification{ID: n.ID, Type: issuer.NotifyReversal, Reason: n.Reason,
				Transaction: &issuer.NetworkTransaction{AuthorizationID: id, Currency: n.Transaction.Currency}})
		}
		err = s.declineLate(ctx, card, auth, n.ID)
		if !errors.Is(err, ErrChanged) && !errors.Is(err, ErrCardRefused) {
			return err
		}
		if card, err = s.Store.Card(ctx, card.CompanyID, card.ID); err != nil {
			return err
		}
	}
	return fmt.Errorf("advice %s of authorization %s: %w", n.ID, id, ErrChanged)
}

// adviseApproval applies the issuer's approval of authorization
// n.Transaction: nothing when it is our approval, recorded; when we have
// no decision of it, the issuer (or the network) approved without our
// answer (a stand-in that approves, a timeout set to approve, an endpoint
// not configured), and its hold is recorded all the same (holdWithoutUs);
// when we declined it, the issuer's approval cannot be followed here (our
// decline's fee was taken): logged at error level, for the reconciliation
// to report. An approval naming another authorization is an increment of
// it (increment).
func (s *Service) adviseApproval(ctx context.Context, card Card, n issuer.Notification) error {
	id := n.Transaction.ID
	if a := n.Transaction.AuthorizationID; a != "" && a != id {
		return s.increment(ctx, card, n)
	}
	auth, err := s.Store.NetworkTransaction(ctx, card.CompanyID, id)
	switch {
	case errors.Is(err, ErrTransactionNotFound):
		err = s.holdWithoutUs(ctx, card, n)
		if errors.Is(err, ErrEventApplied) || errors.Is(err, ErrDuplicateNetworkTx) {
			return nil // our decision came first
		}
		return err
	case err != nil:
		return err
	case auth.CardID != card.ID:
		return ErrTransactionNotFound
	case auth.Type == TxDecline:
		slog.ErrorContext(ctx, "the issuer approved an authorization we declined: not followed, for the reconciliation",
			"transaction_id", auth.ID, "card_id", card.ID, "event_id", n.ID, "amount", n.Transaction.Amount)
	}
	return nil
}

// holdWithoutUs records authorization n.Transaction, which the issuer
// approved without our answer, as our approvals are recorded, claiming
// its id (a decision of ours that comes later finds it decided): a hold of
// its amount whatever the card has (its available balance may go below 0:
// what the card cannot pay at settlement the wallet pays, then a debt),
// counted and logged, as a stand-in's or a misconfiguration's mark.
func (s *Service) holdWithoutUs(ctx context.Context, card Card, n issuer.Notification) error {
	rec, err := s.approval(card, n.Transaction.ID, n.Transaction)
	if err != nil {
		return err
	}
	rec.Forced = true
	if err := s.record(ctx, rec); err != nil {
		return err
	}
	tx := rec.Txs[0]
	metrics.Count(ctx, metrics.AuthorizationsApprovedWithoutUs)
	slog.WarnContext(ctx, "the issuer approved an authorization without our answer: its hold recorded",
		"transaction_id", tx.ID, "card_id", card.ID, "amount", tx.Amount, "available_before", card.Available(), "reason", n.Reason)
	return nil
}

// declineLate makes auth, an approval of ours that the network declined on
// its own (it stopped waiting: advice eventID), into the network's
// decline: a DECLINE (issuer_timeout, no fee) with its hold released, in
// one write claimed by the advice. The approval's events are taken back
// when they were never published, so that its transaction, its events and
// every answer tell the network's decision alone; published already (the
// advice came later than the outbox's grace), they stay, and the decline's
// event follows them. auth's hold is open (or it is a verification); a
// write whose condition fails (auth or the card changed since they were
// read) is ErrChanged or ErrCardRefused.
func (s *Service) declineLate(ctx context.Context, card Card, auth Transaction, eventID string) error {
	decision, found, err := s.decision(ctx, card, auth.IssuerTxID)
	if err != nil {
		return err
	}
	now := s.now()
	after := auth
	after.Type, after.Status, after.Hold, after.CompletedAt = TxDecline, TxFailed, 0, &now
	after.DeclineReason, after.Error = DeclineIssuerTimeout, string(DeclineIssuerTimeout)
	rec := Record{EventID: eventID, Made: auth.ID, Card: card, HeldDelta: -auth.Hold,
		Original: &auth, OriginalAfter: &after, Now: now}
	if found && len(decision.EventIDs) > 0 {
		rec.Withdraw = &Withdrawal{Claim: auth.IssuerTxID, EventIDs: decision.EventIDs}
	}
	p := events.TransactionAuthorizationDeclinedData{CardTransaction: cardTxEvent(after), DeclineReason: string(after.DeclineReason)}
	if err := s.addEvents(&rec, p); err != nil {
		return err
	}
	err = s.record(ctx, rec)
	if errors.Is(err, ErrEventsKept) {
		rec.Withdraw = nil
		if auth.Kind != KindVerification {
			rec.OriginalEvents = 1 // its transaction.(pre)authorization.created
		}
		err = s.record(ctx, rec)
	}
	if err == nil {
		slog.WarnContext(ctx, "the network declined an authorization we approved late: recorded as its decline, the hold released",
			"transaction_id", auth.ID, "card_id", card.ID, "released", auth.Hold)
	}
	return err
}

// advised finishes what the decision of authorization n.Transaction left
// to its advice: its events are published and the issuer is told what it
// moved on the card (post); for a stand-in, the issuer is told too of the
// late hold the advice released. An approval we never decided is logged. All of it is repeated by every
// application of the advice, harmlessly.
func (s *Service) advised(ctx context.Context, card Card, n issuer.Notification) error {
	id := n.Transaction.ID
	o, found, err := s.decision(ctx, card, id)
	if err != nil {
		return err
	}
	switch {
	case found:
		s.publish(ctx, o.events(card.CompanyID))
		if err := s.post(ctx, card, id, o); err != nil {
			return err
		}
	case n.Decision == issuer.Approved:
		// The network approves only what we answered APPROVED; one that
		// approves on its own leaves no hold here.
		slog.WarnContext(ctx, "the network approved an authorization we never decided", "authorization_id", id, "card_id", card.ID)
	}
	if !standIn(n) {
		return nil
	}
	return s.tellIssuer(ctx, card, issuer.Notification{ID: n.ID, Type: issuer.NotifyReversal})
}

// decision reads the outcome of authorization id's decision.
func (s *Service) decision(ctx context.Context, card Card, id string) (Outcome, bool, error) {
	o, found, err := s.Store.Outcome(ctx, card.CompanyID, id)
	if err != nil {
		return Outcome{}, false, fmt.Errorf("cards: read the decision of authorization %s: %w", id, err)
	}
	return o, found, nil
}

// events returns the events o's write recorded, by key, for a publisher.
func (o Outcome) events(companyID string) []events.Event {
	evs := make([]events.Event, len(o.EventIDs))
	for i, id := range o.EventIDs {
		evs[i] = events.Event{CompanyID: companyID, ID: id}
	}
	return evs
}

// standIn reports whether advice n is of the network's own decline.
func standIn(n issuer.Notification) bool {
	return n.Decision == issuer.Declined && n.Reason == issuer.StandInReason
}

// recordStandIn records the network's own decline of authorization
// n.Transaction.
func (s *Service) recordStandIn(ctx context.Context, card Card, n issuer.Notification) error {
	reason := DeclineIssuerTimeout
	now := s.now()
	tx := s.declineTx(card, n.Transaction, reason, now)
	rec := Record{EventID: n.Transaction.ID, Card: card, Txs: []Transaction{tx}, Now: now}
	p := events.TransactionAuthorizationDeclinedData{CardTransaction: cardTxEvent(tx), DeclineReason: string(reason)}
	if err := s.addEvents(&rec, p); err != nil {
		return err
	}
	return s.record(ctx, rec)
}
