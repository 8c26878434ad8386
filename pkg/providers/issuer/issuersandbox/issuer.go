// Package issuersandbox is the simulated card issuer (Issuer) and card
// network (Network) of sandbox stages and tests. Their state is their own
// (Store, NoticeStore, DecisionStore, StatementLog; in DynamoDB, package
// issuerdb), kept apart from our records as a remote issuer keeps it, and
// they decide deterministically from documented magic values (the README's
// table).
package issuersandbox

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"payments/pkg/ids"
	"payments/pkg/providers/issuer"
	"payments/pkg/timestamp"
	"payments/pkg/vault"
)

// Issuer is the simulated card issuer of sandbox stages and tests. It keeps
// its cardholders, cards and movements in its own store (Store),
// apart from our records, as a remote issuer would, and decides by the last
// digits of the cardholder's identification number:
//
//   - 777: the cardholder is blocked by the issuer's screening right after
//     enrolment: EnrollCardholder answers Active, and every later read of
//     the cardholder (Cardholder, or an enrolment repeated with the same
//     reference) answers Active false. The sandbox still issues cards to
//     a blocked cardholder: checking Cardholder first is the caller's part;
//   - 999: every card requested for the cardholder is declined
//     (ErrDeclined), and so is every repeat of such a request;
//   - anything else: the cardholder stays active and cards are issued.
//
// Cards are issued ACTIVE with their initial amount as balance and expire
// 36 months after issue. Each gets a random 16-digit, Luhn-valid number
// (VISA starting with 4, MASTERCARD with 5) and a random 3-digit CVV, which
// the sandbox keeps sealed (pkg/vault, bound to its card id) to give them
// again to a repeated issuance. Cardholder ids are ch_<uuid>, card ids
// card_<uuid>.
//
// What the card network and our fees do to a card reaches the sandbox as
// postings (PostCard), which move its balance and holds as they moved ours.
// Its disputes (OpenDispute, sandbox_disputes.go) are decided by the cents
// of the disputed amount.
//
// A request the sandbox refuses for its content (a missing reference, a
// negative initial amount or a movement of 0 or less, an unknown brand) is
// ErrDeclined and records nothing. Any failure of the store is
// ErrUnavailable.
type Issuer struct {
	store Store
	vault Sealer
	// Now returns the current time; tests may replace it.
	Now func() time.Time
}

// Sealer seals and opens the sandbox's card secrets (a *vault.Vault).
type Sealer interface {
	Seal(ctx context.Context, secret []byte, ec vault.Context) (vault.Sealed, error)
	Open(ctx context.Context, s vault.Sealed, ec vault.Context) ([]byte, error)
}

var _ issuer.Issuer = (*Issuer)(nil)

// Cardholder is a cardholder as the sandbox issuer keeps it: the
// identity fields of the request it needs, not all of them.
type Cardholder struct {
	ID                   string // ch_<uuid>
	Reference            string // our customer id
	FirstName, LastName  string
	Email                string
	IdentificationNumber string
	CreatedAt            time.Time
}

// Card is a card request as the sandbox issuer keeps it: an issued
// card, or a declined request (Declined, with only Reference, CardholderID
// and CreatedAt set).
type Card struct {
	issuer.Card
	Declined bool
	// HeldBalance is the balance the card held when it was terminated.
	HeldBalance int64
	// Number and CVV are the card's secrets, sealed with the card id.
	Number, CVV vault.Sealed
}

// Movement is a movement of money on a card as the sandbox issuer
// records it: a funding, a withdrawal or a posting.
type Movement struct {
	// Reference is our transaction id, or a posting's reference.
	Reference string
	CardID    string
	// Delta is added to the balance: > 0 funds the card, < 0 withdraws.
	Delta int64
	// Held is added to the card's open holds (a posting's).
	Held      int64
	CreatedAt time.Time
}

// Store is the sandbox issuer's own state (in DynamoDB: package
// issuerdb). Its methods answer
// ErrNotFound, ErrCardState and ErrInsufficientFunds (wrapped) as they say;
// any other error is a failure of the store.
type Store interface {
	// PutCardholder records c unless a cardholder already has c.Reference,
	// and returns the cardholder recorded for the reference: c, or the
	// earlier one.
	PutCardholder(ctx context.Context, c Cardholder) (Cardholder, error)
	// Cardholder returns the cardholder with the issuer id id; ErrNotFound
	// if none.
	Cardholder(ctx context.Context, id string) (Cardholder, error)
	// PutCard records c, an issued card or a declined request, unless a
	// request already has c.Reference, and returns the one recorded for the
	// reference: c, or the earlier one as it is now.
	PutCard(ctx context.Context, c Card) (Card, error)
	// Card returns the card with the issuer id id; ErrNotFound if none.
	Card(ctx context.Context, id string) (Card, error)
	// MoveCard adds m.Delta to the balance of the card m.CardID once per
	// m.Reference and returns the card afterwards. A reference already
	// used changes nothing: the card of its movement is returned as it is
	// now. ErrNotFound: no such card; ErrCardState: the card is not
	// ACTIVE (for a withdrawal, ACTIVE or FROZEN); ErrInsufficientFunds:
	// the balance would fall below 0.
	MoveCard(ctx context.Context, m Movement) (Card, error)
	// PostCard adds m.Delta to the balance and m.Held to the holds of the
	// card m.CardID once per m.Reference, whatever the balance, and
	// returns the card afterwards; a reference already used changes
	// nothing. ErrNotFound: no such card; ErrCardState: the card is
	// TERMINATED.
	PostCard(ctx context.Context, m Movement) (Card, error)
	// SetCardStatus changes the status of the card id from from to to and
	// returns the card; ErrCardState when its status is not from,
	// ErrNotFound when there is no such card.
	SetCardStatus(ctx context.Context, id string, from, to issuer.CardStatus) (Card, error)
	// TerminateCard makes an ACTIVE or FROZEN card TERMINATED with balance
	// 0 and no holds, keeping the balance it held as HeldBalance, and
	// returns it; a TERMINATED card is returned as it is. ErrNotFound when
	// there is no such card.
	TerminateCard(ctx context.Context, id string) (Card, error)
	// PutDispute records d once per d.Reference and once per disputed
	// d.TransactionID, with notices, the network's reports of it, kept
	// until acknowledged as KeepNotice keeps them, in one write; it
	// returns the dispute recorded for the reference: d, or the earlier
	// one. ErrDeclined when another reference disputed the transaction.
	PutDispute(ctx context.Context, d Dispute, notices []Notice) (Dispute, error)
	// NoticeStore keeps the network's notifications until AckNotice.
	NoticeStore
	// AckNotice forgets notification id, acknowledged; nothing when it is
	// not kept.
	AckNotice(ctx context.Context, id string) error
}

// New returns the sandbox issuer keeping its state in store, its
// card secrets sealed by sealer, which may be nil for a caller that issues
// no cards (it serves Cardholders only).
func New(store Store, sealer Sealer) *Issuer {
	return &Issuer{store: store, vault: sealer, Now: time.Now}
}

// Acknowledge forgets notification eventID, which we applied: the network
// stops delivering it again.
func (s *Issuer) Acknowledge(ctx context.Context, eventID string) error {
	if err := s.store.AckNotice(ctx, eventID); err != nil {
		return sandboxErr(err)
	}
	return nil
}

// The sandbox issuer's magic values: suffixes of a cardholder's identification number.
const (
	blockedSuffix  = "777"
	declinedSuffix = "999"
)

// Prefixes of the sandbox issuer's ids.
const (
	cardholderIDPrefix = "ch_"
	cardIDPrefix       = "card_"
)

// EnrollCardholder records the cardholder once per r.Reference. The
// enrolment that records it answers Active; a repeat returns the cardholder
// as it is now (blocked if its identification number ends in 777).
func (s *Issuer) EnrollCardholder(ctx context.Context, r issuer.CardholderRequest) (issuer.Cardholder, error) {
	if r.Reference == "" {
		return issuer.Cardholder{}, invalid("cardholder reference is required")
	}
	now := timestamp.Of(s.Now())
	id := cardholderIDPrefix + ids.NewV7(now)
	c, err := s.store.PutCardholder(ctx, Cardholder{
		ID: id, Reference: r.Reference, FirstName: r.FirstName, LastName: r.LastName,
		Email: r.Email, IdentificationNumber: r.IdentificationNumber, CreatedAt: now,
	})
	if err != nil {
		return issuer.Cardholder{}, sandboxErr(err)
	}
	h := c.cardholder()
	if c.ID == id {
		h.Active = true // screening blocks it only after this answer
	}
	return h, nil
}

// Cardholder reads a cardholder; one whose identification number ends in
// 777 is not Active.
func (s *Issuer) Cardholder(ctx context.Context, id string) (issuer.Cardholder, error) {
	c, err := s.store.Cardholder(ctx, id)
	if err != nil {
		return issuer.Cardholder{}, sandboxErr(err)
	}
	return c.cardholder(), nil
}

func (c Cardholder) cardholder() issuer.Cardholder {
	return issuer.Cardholder{
		ID: c.ID, Reference: c.Reference, CreatedAt: c.CreatedAt,
		Active: !strings.HasSuffix(c.IdentificationNumber, blockedSuffix),
	}
}

// IssueCard issues a card once per r.Reference, of brand r.Brand (VISA when
// empty) with r.Amount as balance, and returns it with its secrets, or
// declines it (ErrDeclined, again on every repeat) when the cardholder's
// identification number ends in 999. An unknown cardholder is ErrNotFound.
func (s *Issuer) IssueCard(ctx context.Context, r issuer.CardRequest) (issuer.Card, issuer.Secrets, error) {
	brand := r.Brand
	if brand == "" {
		brand = issuer.Visa
	}
	switch {
	case r.Reference == "":
		return issuer.Card{}, issuer.Secrets{}, invalid("card reference is required")
	case r.Amount < 0:
		return issuer.Card{}, issuer.Secrets{}, invalid("initial amount %d is negative", r.Amount)
	case brand != issuer.Visa && brand != issuer.Mastercard:
		return issuer.Card{}, issuer.Secrets{}, invalid("brand %q is not issued", brand)
	}
	holder, err := s.store.Cardholder(ctx, r.CardholderID)
	if err != nil {
		return issuer.Card{}, issuer.Secrets{}, sandboxErr(err)
	}
	now := timestamp.Of(s.Now())
	req := Card{Card: issuer.Card{Reference: r.Reference, CardholderID: holder.ID, CreatedAt: now}}
	if strings.HasSuffix(holder.IdentificationNumber, declinedSuffix) {
		req.Declined = true
	} else if s.vault == nil {
		return issuer.Card{}, issuer.Secrets{}, fmt.Errorf("%w: sandbox: no sealer to keep card secrets", issuer.ErrUnavailable)
	} else if req, err = s.newCard(ctx, r, holder.ID, brand, now); err != nil {
		return issuer.Card{}, issuer.Secrets{}, err
	}
	c, err := s.store.PutCard(ctx, req)
	if err != nil {
		return issuer.Card{}, issuer.Secrets{}, sandboxErr(err)
	}
	if c.Declined {
		return issuer.Card{}, issuer.Secrets{}, fmt.Errorf("%w: sandbox: card %s for cardholder %s", issuer.ErrDeclined, c.Reference, c.CardholderID)
	}
	number, err := s.vault.Open(ctx, c.Number, SecretField(c.ID, vault.FieldNumber))
	if err != nil {
		return issuer.Card{}, issuer.Secrets{}, fmt.Errorf("%w: sandbox: open card number: %v", issuer.ErrUnavailable, err)
	}
	cvv, err := s.vault.Open(ctx, c.CVV, SecretField(c.ID, vault.FieldCVC))
	if err != nil {
		return issuer.Card{}, issuer.Secrets{}, fmt.Errorf("%w: sandbox: open card CVV: %v", issuer.ErrUnavailable, err)
	}
	return c.Card, issuer.Secrets{Number: string(number), CVV: string(cvv)}, nil
}

// newCard makes a card for r: a fresh number and CVV, sealed.
func (s *Issuer) newCard(ctx context.Context, r issuer.CardRequest, holderID string, brand issuer.Brand, now time.Time) (Card, error) {
	prefix := "4"
	if brand == issuer.Mastercard {
		prefix = "5"
	}
	number, cvv := NewCardNumber(prefix), randomDigits(3)
	id := cardIDPrefix + ids.NewV7(now)
	// 36 months after the month of issue: from its first day, so that a
	// card issued on 29 February does not expire in March.
	expiry := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, 36, 0)
	c := Card{Card: issuer.Card{
		ID: id, Reference: r.Reference, CardholderID: holderID, Brand: brand, Last4: number[len(number)-4:],
		ExpiryMonth: int(expiry.Month()), ExpiryYear: expiry.Year(),
		Balance: r.Amount, Available: r.Amount, Status: issuer.CardActive, CreatedAt: now,
	}}
	var err error
	if c.Number, err = s.vault.Seal(ctx, []byte(number), SecretField(id, vault.FieldNumber)); err == nil {
		c.CVV, err = s.vault.Seal(ctx, []byte(cvv), SecretField(id, vault.FieldCVC))
	}
	if err != nil {
		return Card{}, fmt.Errorf("%w: sandbox: seal card secrets: %v", issuer.ErrUnavailable, err)
	}
	return c, nil
}

// SecretField is the context of a secret field of the simulated issuer's
// card id: the issuer's own card (its ids are not ours), which knows no
// company of ours.
func SecretField(id, field string) vault.Context {
	return vault.Context{"card_id": id, "field": field}
}

// NewCardNumber returns a random 16-digit card number that starts with
// prefix and ends with its Luhn check digit.
func NewCardNumber(prefix string) string {
	body := prefix + randomDigits(15-len(prefix))
	return body + strconv.Itoa(luhnCheckDigit(body))
}

// ValidCardNumber reports whether number is all digits and passes the Luhn
// check.
func ValidCardNumber(number string) bool {
	if len(number) < 2 || strings.Trim(number, "0123456789") != "" {
		return false
	}
	return luhnCheckDigit(number[:len(number)-1]) == int(number[len(number)-1]-'0')
}

// luhnCheckDigit returns the digit that makes body + digit pass the Luhn
// check: from the right of body, every first digit is doubled.
func luhnCheckDigit(body string) int {
	sum := 0
	for i := len(body) - 1; i >= 0; i-- {
		d := int(body[i] - '0')
		if (len(body)-1-i)%2 == 0 {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return (10 - sum%10) % 10
}

// randomDigits returns n decimal digits from the system's secure random
// source, without bias (bytes of 250 and more are drawn again).
func randomDigits(n int) string {
	out := make([]byte, 0, n)
	b := make([]byte, 1)
	for len(out) < n {
		rand.Read(b) // crypto/rand.Read never fails
		if b[0] < 250 {
			out = append(out, '0'+b[0]%10)
		}
	}
	return string(out)
}

// Card reads a card.
func (s *Issuer) Card(ctx context.Context, id string) (issuer.Card, error) {
	c, err := s.store.Card(ctx, id)
	if err != nil {
		return issuer.Card{}, sandboxErr(err)
	}
	return c.Card, nil
}

// FundCard adds m.Amount to an ACTIVE card once per m.Reference; a repeat
// returns the card as it is now.
func (s *Issuer) FundCard(ctx context.Context, m issuer.Movement) (issuer.Card, error) {
	return s.move(ctx, m, m.Amount)
}

// WithdrawCard takes m.Amount off an ACTIVE or FROZEN card once per
// m.Reference
// (ErrInsufficientFunds when its balance is smaller); a repeat returns the
// card as it is now.
func (s *Issuer) WithdrawCard(ctx context.Context, m issuer.Movement) (issuer.Card, error) {
	return s.move(ctx, m, -m.Amount)
}

func (s *Issuer) move(ctx context.Context, m issuer.Movement, delta int64) (issuer.Card, error) {
	switch {
	case m.Reference == "":
		return issuer.Card{}, invalid("movement reference is required")
	case m.Amount <= 0:
		return issuer.Card{}, invalid("movement amount %d is not positive", m.Amount)
	}
	c, err := s.store.MoveCard(ctx, Movement{
		Reference: m.Reference, CardID: m.CardID, Delta: delta, CreatedAt: timestamp.Of(s.Now()),
	})
	if err != nil {
		return issuer.Card{}, sandboxErr(err)
	}
	return c.Card, nil
}

// PostCard applies p to its card once per p.Reference: the balance moves
// by p.BalanceDelta and the holds by p.HeldDelta, whatever they are (a
// posting reports what the network and the fees did); a TERMINATED card
// takes none (ErrCardState). A repeat returns the card as it is now.
func (s *Issuer) PostCard(ctx context.Context, p issuer.Posting) (issuer.Card, error) {
	switch {
	case p.Reference == "":
		return issuer.Card{}, invalid("posting reference is required")
	case p.BalanceDelta == 0 && p.HeldDelta == 0:
		return issuer.Card{}, invalid("posting %s moves nothing", p.Reference)
	}
	c, err := s.store.PostCard(ctx, Movement{
		Reference: p.Reference, CardID: p.CardID, Delta: p.BalanceDelta, Held: p.HeldDelta, CreatedAt: timestamp.Of(s.Now()),
	})
	if err != nil {
		return issuer.Card{}, sandboxErr(err)
	}
	return c.Card, nil
}

// FreezeCard makes an ACTIVE card FROZEN; any other status is ErrCardState.
func (s *Issuer) FreezeCard(ctx context.Context, id string) (issuer.Card, error) {
	return s.setStatus(ctx, id, issuer.CardActive, issuer.CardFrozen)
}

// UnfreezeCard makes a FROZEN card ACTIVE; any other status is
// ErrCardState.
func (s *Issuer) UnfreezeCard(ctx context.Context, id string) (issuer.Card, error) {
	return s.setStatus(ctx, id, issuer.CardFrozen, issuer.CardActive)
}

func (s *Issuer) setStatus(ctx context.Context, id string, from, to issuer.CardStatus) (issuer.Card, error) {
	c, err := s.store.SetCardStatus(ctx, id, from, to)
	if err != nil {
		return issuer.Card{}, sandboxErr(err)
	}
	return c.Card, nil
}

// TerminateCard makes an ACTIVE or FROZEN card TERMINATED with balance 0
// and no holds, and returns the balance it held; a TERMINATED card answers
// the same again.
func (s *Issuer) TerminateCard(ctx context.Context, id string) (issuer.Card, int64, error) {
	c, err := s.store.TerminateCard(ctx, id)
	if err != nil {
		return issuer.Card{}, 0, sandboxErr(err)
	}
	return c.Card, c.HeldBalance, nil
}

// invalid is a request the sandbox refuses for its content.
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: sandbox: "+format, append([]any{issuer.ErrDeclined}, args...)...)
}

// sandboxErr passes the issuer's own answers through and makes any other
// failure of the store ErrUnavailable.
func sandboxErr(err error) error {
	if errors.Is(err, issuer.ErrNotFound) || errors.Is(err, issuer.ErrCardState) || errors.Is(err, issuer.ErrInsufficientFunds) || errors.Is(err, issuer.ErrDeclined) {
		return err
	}
	return fmt.Errorf("%w: sandbox: %v", issuer.ErrUnavailable, err)
}
