package stripesim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/stripe/stripe-go/v85"
)

// state is what a simulation keeps in Config.StateFile: Stripe's records,
// which outlive a restart as they do at Stripe.
type state struct {
	Cardholders []*stripe.IssuingCardholder    `json:"cardholders"`
	Cards       []*stripe.IssuingCard          `json:"cards"`
	Auths       []*stripe.IssuingAuthorization `json:"authorizations"` // oldest first
	Txns        []*stripe.IssuingTransaction   `json:"transactions"`   // oldest first
	Disputes    []savedDispute                 `json:"disputes"`       // oldest first
	RefundOf    map[string]string              `json:"refund_of"`
	CardCount   int64                          `json:"card_count"`
	Balance     int64                          `json:"balance"`
	Seen        map[string]savedAnswer         `json:"idempotency"`
	Events      []savedEvent                   `json:"undelivered_events"`
}

type savedDispute struct {
	Dispute *stripe.IssuingDispute       `json:"dispute"`
	Credits []*stripe.BalanceTransaction `json:"credits"`
}

type savedAnswer struct {
	Request string    `json:"request"`
	At      time.Time `json:"at"`
	Status  int       `json:"status"`
	Body    []byte    `json:"body"`
}

type savedEvent struct {
	ID   string          `json:"id"`
	Type string          `json:"type"`
	Body json.RawMessage `json:"body"`
}

// save writes s's records to Config.StateFile, when set, replacing it
// whole (a file written aside, then renamed). s.mu must be held.
func (s *Sim) save() error {
	if s.cfg.StateFile == "" {
		return nil
	}
	st := state{Auths: s.authList, Txns: s.txnList, RefundOf: s.refundOf, CardCount: s.cardCount,
		Balance: s.balance, Seen: map[string]savedAnswer{}}
	for _, h := range s.cardholders {
		st.Cardholders = append(st.Cardholders, h)
	}
	for _, c := range s.cards {
		st.Cards = append(st.Cards, c)
	}
	for _, d := range s.disputeList {
		st.Disputes = append(st.Disputes, savedDispute{Dispute: d.d, Credits: d.credits})
	}
	for k, a := range s.seen {
		if a.done {
			st.Seen[k] = savedAnswer{Request: a.request, At: a.at, Status: a.status, Body: a.body}
		}
	}
	for _, e := range s.events {
		if !e.delivered {
			st.Events = append(st.Events, savedEvent{ID: e.id, Type: e.typ, Body: e.body})
		}
	}
	b, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("stripesim: saving the state: %w", err)
	}
	tmp := s.cfg.StateFile + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("stripesim: saving the state: %w", err)
	}
	if err := os.Rename(tmp, s.cfg.StateFile); err != nil {
		return fmt.Errorf("stripesim: saving the state: %w", err)
	}
	return nil
}

// saveOrLog saves s's records, recording a failure as a violation (the
// local stack logs them). s.mu must not be held.
func (s *Sim) saveOrLog() {
	s.mu.Lock()
	err := s.save()
	s.mu.Unlock()
	if err != nil {
		s.violation("%v", err)
	}
}

// load reads Config.StateFile, when it exists, into s, which is new, and
// links its records again as the handlers made them (an authorization's
// card, a card's cardholder, an authorization's transactions are the
// records themselves, not copies).
func (s *Sim) load() error {
	if s.cfg.StateFile == "" {
		return nil
	}
	b, err := os.ReadFile(s.cfg.StateFile)
	if errors.Is(err, fs.ErrNotExist) {
		return os.MkdirAll(filepath.Dir(s.cfg.StateFile), 0o700)
	}
	if err != nil {
		return fmt.Errorf("stripesim: reading the state: %w", err)
	}
	var st state
	if err := json.Unmarshal(b, &st); err != nil {
		return fmt.Errorf("stripesim: reading the state %s: %w", s.cfg.StateFile, err)
	}
	for _, h := range st.Cardholders {
		s.cardholders[h.ID] = h
	}
	for _, c := range st.Cards {
		if c.Cardholder != nil && s.cardholders[c.Cardholder.ID] != nil {
			c.Cardholder = s.cardholders[c.Cardholder.ID]
		}
		s.cards[c.ID] = c
	}
	for _, t := range st.Txns {
		s.txns[t.ID] = t
	}
	s.txnList = st.Txns
	for _, a := range st.Auths {
		if a.Card != nil && s.cards[a.Card.ID] != nil {
			a.Card = s.cards[a.Card.ID]
		}
		for i, t := range a.Transactions {
			if s.txns[t.ID] != nil {
				a.Transactions[i] = s.txns[t.ID]
			}
		}
		s.auths[a.ID] = a
	}
	s.authList = st.Auths
	for _, d := range st.Disputes {
		x := &dispute{d: d.Dispute, credits: d.Credits}
		s.disputes[d.Dispute.ID] = x
		s.disputeList = append(s.disputeList, x)
	}
	if st.RefundOf != nil {
		s.refundOf = st.RefundOf
	}
	s.cardCount, s.balance = st.CardCount, st.Balance
	for k, a := range st.Seen {
		s.seen[k] = &answer{request: a.Request, at: a.At, done: true, status: a.Status, body: a.Body}
	}
	for _, e := range st.Events {
		s.events = append(s.events, &event{id: e.ID, typ: e.Type, body: e.Body})
	}
	return nil
}
