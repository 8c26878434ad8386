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
	"payments/pkg/ids"
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

// Apply applies a notification of the issuer, once per its id. An
// authorization is approved or declined; a settlement, reversal or refund
// follows its authorization; a termination the issuer made ends the card
// here too, its balance refunded (card.terminated in the issuer's form). A
// notification about a card we do not have, or whose issuer id differs, is
// dropped and logged; one already applied changes nothing; one the
// authorization's state forbids is recorded as refused, with its code.
// Once it is applied, the issuer is told what it moved on the card
// (tellIssuer), again on every delivery: a delivery that could not tell it
// fails, and the queue's next one does.
func (s *Service) Apply(ctx context.Context, n issuer.Notification) error {
	companyID, err := s.Store.CardCompany(ctx, n.Reference)
	if errors.Is(err, ErrNotFound) {
		slog.WarnContext(ctx, "issuer notification about an unknown card: dropped", "event_id", n.ID, "card", n.Reference)
		return nil
	}
	if err != nil {
		return err
	}
	card, err := s.Store.Card(ctx, companyID, n.Reference)
	if err != nil {
		return err
	}
	if card.IssuerCardID != n.CardID {
		slog.WarnContext(ctx, "issuer notification names another issuer card: dropped", "event_id", n.ID, "card_id", card.ID)
		return nil
	}
	switch n.Type {
	case issuer.NotifyCardTerminated:
		err = s.issuerTerminated(ctx, card, n)
	case issuer.NotifyAuthorization:
		err = s.authorize(ctx, card, n)
	default:
		err = s.follow(ctx, card, n)
	}
	if code := RefusalCode(err); code != "" {
		slog.WarnContext(ctx, "issuer notification refused", "event_id", n.ID, "card_id", card.ID, "code", code)
		err = s.Store.Refuse(ctx, companyID, n.ID, code, s.now())
	}
	if err != nil && !errors.Is(err, ErrEventApplied) {
		return err
	}
	return s.tellIssuer(ctx, card, n.Type, n.ID)
}

// tellIssuer posts to the issuer what issuer event eventID, a notification
// of type typ, moved on card, as the writes that claimed it recorded: the
// hold of an approved authorization, a settlement, a reversal, a refund, a
// fee taken from the card. Each write is one posting, applied once by the
// issuer whatever we repeat; a write that moved nothing on the card (a
// refusal, a fee paid by the wallet) posts nothing, and neither does a
// termination, which the issuer made. A card the issuer terminated takes
// no more postings: its balance was paid out.
func (s *Service) tellIssuer(ctx context.Context, card Card, typ, eventID string) error {
	if s.Issuer == nil || card.IssuerCardID == "" || typ == issuer.NotifyCardTerminated {
		return nil
	}
	claims := []string{eventID}
	if typ == issuer.NotifySettlement {
		// A settlement abroad is written in two steps: the settlement,
		// then its cross-border fee, which the event id itself claims.
		claims = []string{eventID + settlementStep, eventID}
	}
	for _, claim := range claims {
		o, found, err := s.Store.Outcome(ctx, card.CompanyID, claim)
		switch {
		case err != nil:
			return fmt.Errorf("cards: read the outcome of issuer event %s: %w", claim, err)
		case !found || o.BalanceDelta == 0 && o.HeldDelta == 0:
			continue
		}
		_, err = s.Issuer.PostCard(ctx, issuer.Posting{
			Reference: claim, CardID: card.IssuerCardID, BalanceDelta: o.BalanceDelta, HeldDelta: o.HeldDelta,
		})
		if errors.Is(err, issuer.ErrCardState) {
			slog.InfoContext(ctx, "the issuer's card is closed: nothing posted", "event_id", claim, "card_id", card.ID)
			continue
		}
		if err != nil {
			return fmt.Errorf("cards: tell the issuer of event %s on card %s: %w", claim, card.ID, err)
		}
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
		tx.Description = merchantText(*tx.Merchant)
	}
	return tx
}

// authorize decides an authorization by one conditional write on the card
// (ACTIVE, not locked, available ≥ amount): approved, it places a hold
// (none for a verification); else the card as it is now says why, and the
// decline is written with the failed-payment fee. A card that changed in
// between is asked again.
func (s *Service) authorize(ctx context.Context, card Card, n issuer.Notification) error {
	lost := fmt.Errorf("authorization %s: %w", n.ID, ErrChanged)
	_, err := contention.Retry.Do(ctx, func(ctx context.Context) (bool, error) {
		now := s.now()
		tx := s.networkTx(card, TxAuthorization, n.Transaction, now)
		tx.Kind = AuthKind(n.Transaction.Kind)
		rec := Record{EventID: n.ID, Card: card, Approve: true, Now: now}
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
		if err := s.addEvents(&rec, p); err != nil {
			return false, err
		}
		err := s.record(ctx, rec)
		if !errors.Is(err, ErrCardRefused) {
			return false, err
		}
		if card, err = s.Store.Card(ctx, card.CompanyID, card.ID); err != nil {
			return false, err
		}
		reason := declineReason(card, tx.Amount)
		if reason == "" {
			return true, lost // the card changed since: ask it again
		}
		err = s.decline(ctx, card, n.ID, tx, reason)
		if !errors.Is(err, ErrChanged) && !errors.Is(err, ErrCardRefused) {
			return false, err
		}
		if card, err = s.Store.Card(ctx, card.CompanyID, card.ID); err != nil {
			return false, err
		}
		return true, lost
	})
	return err
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

// decline writes the decline of authorization auth on card, with its
// failed-payment fee.
func (s *Service) decline(ctx context.Context, card Card, eventID string, auth Transaction, reason DeclineReason) error {
	now := s.now()
	tx := auth
	tx.ID, tx.Type, tx.Status, tx.Hold, tx.CreatedAt, tx.CompletedAt = ids.NewV7(now), TxDecline, TxFailed, 0, now, &now
	tx.DeclineReason, tx.Error = reason, string(reason)
	rec := Record{EventID: eventID, Card: card, Now: now}
	fee, err := s.fee(ctx, card.CompanyID, fees.TypeCardPaymentFailure, tx.Amount)
	if err != nil {
		return err
	}
	charged, err := s.chargeFee(ctx, &rec, &tx, fee, tx.Amount, card.Available(), events.FeeTypePaymentFailure)
	if err != nil {
		return err
	}
	rec.Txs = []Transaction{tx}
	declined := events.TransactionAuthorizationDeclinedData{CardTransaction: cardTxEvent(tx), DeclineReason: string(reason)}
	if err := s.addEvents(&rec, append([]events.Payload{declined}, charged...)...); err != nil {
		return err
	}
	return s.record(ctx, rec)
}

// record writes rec and publishes its events.
func (s *Service) record(ctx context.Context, rec Record) error {
	if err := s.Store.Record(ctx, rec); err != nil {
		return err
	}
	tx := rec.Txs[0]
	slog.InfoContext(ctx, "card transaction recorded", "transaction_id", tx.ID, "card_id", tx.CardID, "type", tx.Type,
		"status", tx.Status, "amount", tx.Amount, "fee", tx.Fee, "decline_reason", tx.DeclineReason)
	s.publish(ctx, rec.Events)
	return nil
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
