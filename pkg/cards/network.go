package cards

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"payments/pkg/events"
	"payments/pkg/providers/issuer"
)

// CardCountry is the country of every card: a settlement at a merchant
// elsewhere is cross-border.
const CardCountry = "US"

// Refusals of a settlement, a reversal or a refund that the authorization's
// state forbids: nothing changes, and the sandbox routes answer 400 with
// the refusal's code.
var (
	ErrNotAuthorization = errors.New("cards: not an authorization with a hold")
	ErrAlreadySettled   = errors.New("cards: authorization already settled")
	ErrAlreadyReversed  = errors.New("cards: authorization already reversed")
	ErrExceedsHold      = errors.New("cards: amount exceeds the hold")
	ErrNotSettled       = errors.New("cards: authorization not settled")
	ErrExceedsSettled   = errors.New("cards: amount exceeds what was settled and not refunded")
	// ErrDuplicateNetworkTx is an authorization the network reported
	// before, under another event id.
	ErrDuplicateNetworkTx = errors.New("cards: the network reported this transaction before")
)

// refusals names each refusal by its stable code.
var refusals = []struct {
	code string
	err  error
}{
	{"NOT_AN_AUTHORIZATION", ErrNotAuthorization},
	{"ALREADY_SETTLED", ErrAlreadySettled},
	{"ALREADY_REVERSED", ErrAlreadyReversed},
	{"AMOUNT_EXCEEDS_HOLD", ErrExceedsHold},
	{"NOT_SETTLED", ErrNotSettled},
	{"AMOUNT_EXCEEDS_SETTLED", ErrExceedsSettled},
	{"TRANSACTION_NOT_FOUND", ErrTransactionNotFound},
	{"DUPLICATE_TRANSACTION", ErrDuplicateNetworkTx},
}

// RefusalCode returns the stable code of a refusal, "" when err is none.
func RefusalCode(err error) string {
	for _, r := range refusals {
		if errors.Is(err, r.err) {
			return r.code
		}
	}
	return ""
}

// refusal returns the error of a refusal code.
func refusal(code string) error {
	for _, r := range refusals {
		if r.code == code {
			return r.err
		}
	}
	return fmt.Errorf("cards: refused (%s)", code)
}

// Apply applies a notification of the issuer, once per its id: an
// advice of an authorization the network decided (advise); a settlement,
// reversal or refund, which follows its authorization; a termination the
// issuer made, which ends the card here too, its balance refunded
// (card.terminated in the issuer's form); a dispute's report, which the
// card follows (applyDispute, claimed by the issuer's dispute id). A notification about a card we
// do not have, or whose issuer id differs, is dropped and logged; one
// already applied changes nothing; one the authorization's state forbids
// is recorded as refused, with its code. Once it is applied, the issuer is
// told what it moved on the card (tellIssuer), again on every delivery: a
// delivery that could not tell it fails, and the queue's next one does;
// then the notification is acknowledged (finish), as is one dropped.
func (s *Service) Apply(ctx context.Context, n issuer.Notification) error {
	card, err := s.issuerCard(ctx, n.Reference, n.CardID)
	if errors.Is(err, ErrNotFound) {
		slog.WarnContext(ctx, "issuer notification about a card we do not have: dropped", "event_id", n.ID, "card", n.Reference)
		return s.acknowledge(ctx, n.ID)
	}
	if err != nil {
		return err
	}
	switch n.Type {
	case issuer.NotifyCardTerminated:
		err = s.issuerTerminated(ctx, card, n)
	case issuer.NotifyAdvice:
		err = s.advise(ctx, card, n)
	case issuer.NotifyDispute:
		err = s.applyDispute(ctx, card, n)
	default:
		// A reversal's reason is one of ours (an expiry, which leaves the
		// authorization capturable): the network's other texts are not.
		if n.Reason != issuer.ReleaseExpired {
			n.Reason = ""
		}
		err = s.follow(ctx, card, n)
	}
	if code := RefusalCode(err); code != "" {
		// What a notification names is not ours (another card's
		// authorization, an id reported twice): nothing moves.
		slog.ErrorContext(ctx, "issuer notification refused", "event_id", n.ID, "card_id", card.ID, "code", code)
		err = s.Store.Refuse(ctx, card.CompanyID, claimOf(n), code, s.now())
	}
	if err != nil && !errors.Is(err, ErrEventApplied) {
		return err
	}
	return s.finish(ctx, card, n)
}

// finish does what follows an applied notification n: the issuer is told
// what it moved (for an advice, advised), then n is acknowledged, so that
// the network stops delivering it again.
func (s *Service) finish(ctx context.Context, card Card, n issuer.Notification) error {
	var err error
	if n.Type == issuer.NotifyAdvice {
		err = s.advised(ctx, card, n)
	} else {
		err = s.tellIssuer(ctx, card, n)
	}
	if err != nil {
		return err
	}
	return s.acknowledge(ctx, n.ID)
}

// acknowledge tells the issuer that its notification eventID is applied.
func (s *Service) acknowledge(ctx context.Context, eventID string) error {
	if s.Issuer == nil {
		return nil
	}
	if err := s.Issuer.Acknowledge(ctx, eventID); err != nil {
		return fmt.Errorf("cards: acknowledge issuer event %s: %w", eventID, err)
	}
	return nil
}

// issuerCard reads our card reference, which the issuer names as its card
// issuerCardID; ErrNotFound when we have no such card (a reference that is
// not one of our ids included) or it is another issuer card. A card's
// company never changes: it is read once per process.
func (s *Service) issuerCard(ctx context.Context, reference, issuerCardID string) (Card, error) {
	if !validID(reference) {
		return Card{}, ErrNotFound
	}
	companyID, err := s.companies.Read(ctx, reference, func(ctx context.Context) (string, error) {
		return s.Store.CardCompany(ctx, reference)
	})
	if err != nil {
		return Card{}, err
	}
	card, err := s.Store.Card(ctx, companyID, reference)
	if err != nil {
		return Card{}, err
	}
	if card.IssuerCardID != issuerCardID {
		slog.WarnContext(ctx, "the issuer names another issuer card", "card_id", card.ID)
		return Card{}, ErrNotFound
	}
	return card, nil
}

// tellIssuer posts to the issuer what notification n moved on card, as
// the writes that claimed it recorded: a settlement, a reversal, a refund,
// a fee taken from the card (a decision's, the hold of an approval or a
// decline's fee, is told on its advice: advised). Each write is one
// posting, applied once by the issuer whatever we repeat; a write that
// moved nothing on the card (a refusal, a fee paid by the wallet) posts
// nothing, and neither does a termination, which the issuer made. A card
// the issuer terminated takes no more postings: its balance was paid out.
func (s *Service) tellIssuer(ctx context.Context, card Card, n issuer.Notification) error {
	claim := claimOf(n)
	var claims []string
	switch n.Type {
	case issuer.NotifyCardTerminated:
		return nil
	case issuer.NotifySettlement:
		// A settlement abroad is written in two steps: the settlement,
		// then its cross-border fee, which the claim itself claims.
		claims = []string{claim + settlementStep, claim}
	default:
		claims = []string{claim}
	}
	for _, claim := range claims {
		o, found, err := s.Store.Outcome(ctx, card.CompanyID, claim)
		switch {
		case err != nil:
			return fmt.Errorf("cards: read the outcome of issuer event %s: %w", claim, err)
		case found:
			if err := s.post(ctx, card, claim, o); err != nil {
				return err
			}
		}
	}
	return nil
}

// post tells the issuer what the write claimed by claim moved on card, as
// its outcome o records: nothing when it moved nothing, or when there is
// no issuer's card to tell.
func (s *Service) post(ctx context.Context, card Card, claim string, o Outcome) error {
	if s.Issuer == nil || card.IssuerCardID == "" || o.BalanceDelta == 0 && o.HeldDelta == 0 {
		return nil
	}
	_, err := s.Issuer.PostCard(ctx, issuer.Posting{
		Reference: claim, CardID: card.IssuerCardID, BalanceDelta: o.BalanceDelta, HeldDelta: o.HeldDelta,
	})
	if errors.Is(err, issuer.ErrCardState) {
		slog.InfoContext(ctx, "the issuer's card is closed: nothing posted", "event_id", claim, "card_id", card.ID)
		return nil
	}
	if err != nil {
		return fmt.Errorf("cards: tell the issuer of event %s on card %s: %w", claim, card.ID, err)
	}
	return nil
}

// issuerTerminated ends a card the issuer terminated.
func (s *Service) issuerTerminated(ctx context.Context, card Card, n issuer.Notification) error {
	if !card.Status.Live() { // ended already: by us, or by this event
		return nil
	}
	reason := n.Reason
	if reason == "" {
		reason = issuerTerminationReason
	}
	_, _, err := s.terminate(ctx, card, reason, n.ID)
	return err
}

// networkTx returns a new card transaction of card for network
// transaction nt.
func (s *Service) networkTx(card Card, typ TxType, nt *issuer.NetworkTransaction, now time.Time) Transaction {
	tx := s.newTx(card, typ, nt.Amount, 0, now)
	tx.IssuerTxID = nt.ID
	if m := nt.Merchant; m != nil {
		tx.Merchant = &Merchant{Name: m.Name, City: m.City, Country: m.Country}
		tx.Description = tx.Merchant.Text()
	}
	return tx
}

// record writes rec and publishes its events.
func (s *Service) record(ctx context.Context, rec Record) error {
	if err := s.Store.Record(ctx, rec); err != nil {
		return err
	}
	if len(rec.Txs) > 0 {
		logRecorded(ctx, rec.Txs[0])
	}
	s.publish(ctx, rec.Events)
	return nil
}

// logRecorded logs card transaction tx, written.
func logRecorded(ctx context.Context, tx Transaction) {
	slog.InfoContext(ctx, "card transaction recorded", "transaction_id", tx.ID, "card_id", tx.CardID, "type", tx.Type,
		"status", tx.Status, "amount", tx.Amount, "fee", tx.Fee, "decline_reason", tx.DeclineReason)
}

// addEvents builds the events of ps into rec, in order.
func (s *Service) addEvents(rec *Record, ps ...events.Payload) error {
	for _, p := range ps {
		ev, err := events.Build(rec.Card.CompanyID, p, rec.Now)
		if err != nil {
			return err
		}
		rec.Events = append(rec.Events, ev)
	}
	return nil
}
