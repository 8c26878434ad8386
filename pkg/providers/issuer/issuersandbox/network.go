package issuersandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"payments/pkg/deadline"
	"payments/pkg/providers/issuer"
)

// Network is the simulated card network of sandbox stages: it makes
// up what a merchant does with a card (authorizations, settlements,
// reversals, refunds) and what the issuer does on its own (a
// termination). It asks us to decide each authorization as a real network
// does, within its deadline (Ask: POST /issuer/authorizations), declines
// on its own when our answer is late or missing, and reports each
// authorization's outcome (an advice) and everything else as the issuer
// would: a notification delivered by Deliver, which signs it and hands it
// to POST /issuer/webhooks. It keeps each notification until we
// acknowledge it (Issuer.Acknowledge) and delivers it again until we do
// (Redeliver). It records nothing of ours: its ids are its own (ntx_<uuid>
// for a transaction, evt_<uuid> for a notification).
type Network struct {
	// Deliver delivers a notification's JSON body to us.
	Deliver func(ctx context.Context, body []byte) error
	// Ask asks us to decide an authorization request, given its JSON body.
	Ask func(ctx context.Context, body []byte) (issuer.AuthorizationAnswer, error)
	// Deadline is how long the network waits for Ask's answer
	// (ISSUER_DECISION_DEADLINE_MS); DefaultDecisionDeadline when 0.
	Deadline time.Duration
	// Notices keeps each notification until we acknowledge it, for
	// Redeliver; nil keeps none.
	Notices NoticeStore
	// Decisions keeps each authorization's outcome, so that the same
	// authorization asked for again is answered as it was decided (its
	// advice sent again), never decided twice; nil keeps none.
	Decisions DecisionStore
	// Statements records what the network moved, whatever becomes of its
	// notifications: the sandbox issuer's statements list it; nil records
	// nothing.
	Statements StatementLog
	// Now returns the current time; tests may replace it.
	Now func() time.Time
}

// DefaultDecisionDeadline is how long the sandbox network waits for our
// decision before it declines on its own, as card networks give an issuer
// about 2 seconds.
const DefaultDecisionDeadline = 2 * time.Second

// lateAnswerBound bounds how long a decision the network stopped waiting
// for may still run.
const lateAnswerBound = 30 * time.Second

// NewNetwork returns the sandbox network asking by ask and
// delivering by deliver.
func NewNetwork(ask func(ctx context.Context, body []byte) (issuer.AuthorizationAnswer, error), deliver func(ctx context.Context, body []byte) error) *Network {
	return &Network{Ask: ask, Deliver: deliver, Now: time.Now}
}

// DecisionStore keeps the sandbox network's authorizations as decided
// (issuerdb.Store).
type DecisionStore interface {
	// KeepDecision keeps the authorization id as body encodes it, unless
	// one is kept already, and returns the body kept.
	KeepDecision(ctx context.Context, id string, body []byte) ([]byte, error)
	// Decision returns the authorization id as kept; found is false when
	// none is.
	Decision(ctx context.Context, id string) (body []byte, found bool, err error)
}

// Authorize asks for a decision on authorization id (a new one when "")
// of kind for amount cents at m on the issuer's card cardID (our card
// reference), waiting Deadline for the answer; past it, or when the answer
// is an error, it declines on its own (StandInReason), and a late decision
// of ours is left to finish on its own. Either way it then delivers its
// advice of the outcome. An authorization decided before (Decisions) is
// not asked again: it is answered as it was decided, its advice delivered
// again. A failure to deliver the advice is returned with the
// authorization as decided.
func (n *Network) Authorize(ctx context.Context, id, cardID, reference, kind string, amount int64, m issuer.Merchant) (issuer.Authorization, error) {
	now := n.Now().UTC()
	if id == "" {
		id = issuer.NewTransactionID(now)
	} else if a, found, err := n.decided(ctx, id); err != nil || found {
		if err == nil {
			err = n.deliverAdvice(ctx, &a)
		}
		return a, err
	}
	r := issuer.AuthorizationRequest{ID: id, CardID: cardID, Reference: reference, Kind: kind,
		Amount: amount, Currency: "USD", Merchant: m, CreatedAt: now}
	if err := r.Check(); err != nil {
		return issuer.Authorization{}, fmt.Errorf("%w: %v", issuer.ErrBadAuthorizationRequest, err)
	}
	body, err := json.Marshal(r)
	if err != nil {
		return issuer.Authorization{}, fmt.Errorf("issuer: encode authorization request: %w", err)
	}
	a := issuer.Authorization{Request: r}
	a.Answer, a.StandIn = n.ask(ctx, r.ID, body)
	a.Advice = issuer.Notification{ID: issuer.NewEventID(n.Now().UTC()), Type: issuer.NotifyAdvice, CardID: cardID, Reference: reference,
		Transaction: r.Transaction(), Decision: a.Answer.Decision}
	if a.Answer.DeclineReason != nil {
		a.Advice.Reason = *a.Answer.DeclineReason
	}
	if n.Decisions != nil {
		// The first outcome kept is the authorization's: a run that
		// decided it meanwhile wins, and this one advises that.
		kept, err := json.Marshal(a)
		if err == nil {
			kept, err = n.Decisions.KeepDecision(ctx, r.ID, kept)
		}
		if err == nil {
			err = json.Unmarshal(kept, &a)
		}
		if err != nil {
			return a, fmt.Errorf("issuer: keep the decision of %s: %w", r.ID, err)
		}
	}
	return a, n.deliverAdvice(ctx, &a)
}

// decided returns authorization id as it was decided, if it was.
func (n *Network) decided(ctx context.Context, id string) (issuer.Authorization, bool, error) {
	if n.Decisions == nil {
		return issuer.Authorization{}, false, nil
	}
	body, found, err := n.Decisions.Decision(ctx, id)
	if err != nil || !found {
		return issuer.Authorization{}, false, err
	}
	var a issuer.Authorization
	if err := json.Unmarshal(body, &a); err != nil {
		return issuer.Authorization{}, false, fmt.Errorf("issuer: the decision of %s: %w", id, err)
	}
	return a, true, nil
}

// deliverAdvice delivers a's advice, whatever became of the request that
// asked for it, within the invocation's time, which the request's work may
// have used.
func (n *Network) deliverAdvice(ctx context.Context, a *issuer.Authorization) error {
	actx, cancel := deadline.Answer(ctx, lateAnswerBound)
	defer cancel()
	_, err := n.send(actx, &a.Advice)
	return err
}

// ask asks for the decision on request id, within the deadline; standIn
// is true when the answer is the network's own decline.
func (n *Network) ask(ctx context.Context, id string, body []byte) (answer issuer.AuthorizationAnswer, standIn bool) {
	type result struct {
		answer issuer.AuthorizationAnswer
		err    error
	}
	done := make(chan result, 1)
	// The network stops waiting at its deadline; the decision it asked
	// for goes on, as an issuer's would.
	late, cancel := context.WithTimeout(context.WithoutCancel(ctx), lateAnswerBound)
	go func() {
		defer cancel()
		a, err := n.Ask(late, body)
		done <- result{a, err}
	}()
	deadline := n.Deadline
	if deadline <= 0 {
		deadline = DefaultDecisionDeadline
	}
	t := time.NewTimer(deadline)
	defer t.Stop()
	var why string
	select {
	case r := <-done:
		if r.err == nil && (r.answer.Decision == issuer.Approved || r.answer.Decision == issuer.Declined) {
			return r.answer, false
		}
		why = fmt.Sprintf("no decision: %v (%q)", r.err, r.answer.Decision)
	case <-t.C:
		why = fmt.Sprintf("no answer within %v", deadline)
	case <-ctx.Done():
		why = ctx.Err().Error()
	}
	slog.WarnContext(ctx, "the card network declined on its own", "authorization_id", id, "why", why)
	reason := issuer.StandInReason
	return issuer.AuthorizationAnswer{Decision: issuer.Declined, DeclineReason: &reason}, true
}

// Follow reports, as notification id (a new one when ""; the same id
// sent again is the same notification, about the same transaction), a
// settlement, a reversal or a refund (typ, one of NotifySettlement,
// NotifyReversal, NotifyRefund) of t on the issuer's card cardID:
// t.AuthorizationID is the authorization it follows ("" for a capture the
// network forces with none, or a refund linked to none), t.Amount what it
// moves (a reversal's, what it releases: 0 for all that is held), t.Close
// whether a settlement closes its authorization, t.Merchant a forced
// capture's; reason is a reversal's (an expiry's). It returns the
// notification sent.
func (n *Network) Follow(ctx context.Context, id, typ, cardID, reference string, t issuer.NetworkTransaction, reason string) (issuer.Notification, error) {
	t.ID, t.Kind = "", ""
	no := issuer.Notification{ID: id, Type: typ, CardID: cardID, Reference: reference, Transaction: &t, Reason: reason}
	_, err := n.send(ctx, &no)
	return no, err
}

// Terminated reports, as notification id (a new one when ""), that the
// issuer terminated card cardID, for reason, and returns its event id.
func (n *Network) Terminated(ctx context.Context, id, cardID, reference, reason string) (string, error) {
	return n.send(ctx, &issuer.Notification{ID: id, Type: issuer.NotifyCardTerminated, CardID: cardID, Reference: reference, Reason: reason})
}

// send gives no its ids, unless it has them (its own, a transaction of its
// own), and delivers it; it returns its id, once delivered.
func (n *Network) send(ctx context.Context, no *issuer.Notification) (string, error) {
	now := n.Now().UTC()
	if no.ID == "" {
		no.ID = issuer.NewEventID(now)
	}
	no.CreatedAt = now
	if t := no.Transaction; t != nil && t.ID == "" {
		t.ID, t.Currency = issuer.NotifiedTransactionID(no.ID), "USD"
	}
	if err := no.Check(); err != nil {
		return "", fmt.Errorf("%w: %v", issuer.ErrBadNotification, err)
	}
	if err := n.logStatement(ctx, no); err != nil {
		return "", err
	}
	body, err := json.Marshal(no)
	if err != nil {
		return "", fmt.Errorf("issuer: encode notification: %w", err)
	}
	if n.Notices != nil {
		// Kept first: a notification that is not acknowledged is
		// delivered again, whatever becomes of this delivery.
		if err := n.Notices.KeepNotice(ctx, Notice{ID: no.ID, Body: body, Due: now.Add(RedeliverAfter)}); err != nil {
			return "", fmt.Errorf("issuer: keep notification %s: %w", no.ID, err)
		}
	}
	if err := n.Deliver(ctx, body); err != nil {
		return "", fmt.Errorf("issuer: deliver notification %s: %w", no.ID, err)
	}
	return no.ID, nil
}
