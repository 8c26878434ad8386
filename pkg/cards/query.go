package cards

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"payments/pkg/customers"
	"payments/pkg/field"
	"payments/pkg/metrics"
	"payments/pkg/page"
	"payments/pkg/providers/issuer"
)

// syncParallelism bounds the issuer reads of a list's sync.
const syncParallelism = 8

// ReadOptions are the query flags of GET /cards/{id}.
type ReadOptions struct {
	// Reveal asks for the clear number and CVV; Audit is then written
	// first.
	Reveal bool
	Audit  Reveal
	// IncludeRaw adds the issuer's record.
	IncludeRaw bool
	// Sync reads the issuer and applies what it says first.
	Sync bool
}

// Read is a card as GET /cards/{id} answers it.
type Read struct {
	Card Card
	// Number and CVV are the clear values, on a reveal only.
	Number, CVV string
	// Raw is the issuer's record of the card, with IncludeRaw.
	Raw *issuer.Card
}

// Get reads card id of the company. With o.Sync the issuer is read first
// (ErrIssuerUnavailable when it cannot be) and what it says applied: a card
// it terminated is terminated here, with its refund; a status it changed is
// followed. With o.Reveal the audit record is written before anything is
// decrypted: if it cannot be, nothing is revealed (ErrRevealNotAudited).
// An issuer that keeps card numbers to itself (Stripe) reveals them through
// sessions only: o.Reveal is then ErrRevealSessionRequired.
func (s *Service) Get(ctx context.Context, companyID, id string, o ReadOptions) (Read, error) {
	if _, remote := s.revealsThroughSessions(); o.Reveal && remote {
		return Read{}, ErrRevealSessionRequired
	}
	card, err := s.card(ctx, companyID, id)
	if err != nil {
		return Read{}, err
	}
	var r Read
	if (o.Sync || o.IncludeRaw) && card.IssuerCardID != "" {
		if s.Issuer == nil {
			return Read{}, ErrNoIssuer
		}
		ic, err := s.Issuer.Card(ctx, card.IssuerCardID)
		if err != nil {
			return Read{}, fmt.Errorf("%w: %w", ErrIssuerUnavailable, err)
		}
		if o.IncludeRaw {
			r.Raw = &ic
		}
		if o.Sync {
			if card, err = s.reconcile(ctx, card, ic); err != nil {
				return Read{}, err
			}
		}
	}
	r.Card = card
	if o.Reveal && card.Sealed.KeyID != "" {
		a, err := s.recordReveal(ctx, companyID, card, o.Audit)
		if err != nil {
			return Read{}, err
		}
		if r.Number, r.CVV, err = s.openSecrets(ctx, card); err != nil {
			return Read{}, err
		}
		slog.InfoContext(ctx, "card revealed", "company_id", companyID, "card_id", card.ID, "reveal_id", a.ID)
	}
	return r, nil
}

// reconcile applies to card what the issuer says of it, ic: a termination
// (with the refund, the issuer's form of card.terminated), a freeze or an
// unfreeze; a card we terminated that the issuer still holds open is
// terminated there again. A balance or an available balance that differs
// (at an issuer that keeps one) is logged: ours move only with the
// transactions that explain them.
func (s *Service) reconcile(ctx context.Context, card Card, ic issuer.Card) (Card, error) {
	if !ic.BalanceUnknown && (ic.Balance != card.Balance || ic.Available != card.Available()) && card.Status != Terminated {
		slog.WarnContext(ctx, "card balance differs at the issuer", "card_id", card.ID, "ours", card.Balance,
			"issuer", ic.Balance, "ours_available", card.Available(), "issuer_available", ic.Available)
	}
	switch {
	case ic.Status == issuer.CardTerminated && card.Status.Live():
		c, _, err := s.terminate(ctx, card, issuerTerminationReason, "sync:"+ic.ID)
		return c, err
	case card.Status == Terminated && ic.Status != issuer.CardTerminated:
		if _, _, err := s.Issuer.TerminateCard(ctx, ic.ID); err != nil {
			slog.WarnContext(ctx, "tell the issuer of a termination again", "card_id", card.ID, "error", err)
		}
	case ic.Status == issuer.CardFrozen && card.Status == Active, ic.Status == issuer.CardActive && card.Status == Frozen && !card.IsLocked:
		to := Frozen
		if ic.Status == issuer.CardActive {
			to = Active
		}
		c, err := s.Store.SetStatus(ctx, card.CompanyID, card.ID, card.Status, to, card.IsLocked && to == Frozen, s.now())
		if err != nil && !errors.Is(err, ErrChanged) {
			return Card{}, err
		}
		if err == nil {
			slog.InfoContext(ctx, "card status synced from the issuer", "card_id", card.ID, "status", to)
			return c, nil
		}
	}
	return card, nil
}

// issuerTerminationReason is the reason recorded for a termination the
// issuer made.
const issuerTerminationReason = "Card terminated by the card issuer"

// ListQuery filters GET /cards.
type ListQuery struct {
	Status Status
	Brand  Brand
	Last4  string
	Sync   bool
}

var last4Pattern = regexp.MustCompile(`^[0-9]{4}$`)

// badFilter is the spec's message for a list filter it does not know.
const badFilter = "invalid status, brand, type or date value"

// ParseListQuery reads status, brand (any case) and last4; a bad value is a
// 400 naming the parameter.
func ParseListQuery(status, brand, last4 string) (ListQuery, error) {
	var q ListQuery
	if status != "" {
		q.Status = Status(strings.ToUpper(status))
		if !slices.Contains(Statuses, q.Status) {
			return q, field.Invalid("status", badFilter)
		}
	}
	if brand != "" {
		q.Brand = Brand(strings.ToUpper(brand))
		if q.Brand != Visa && q.Brand != Mastercard {
			return q, field.Invalid("brand", badFilter)
		}
	}
	if last4 != "" && !last4Pattern.MatchString(last4) {
		return q, field.Invalid("last4", "must be the 4 last digits of a card number")
	}
	q.Last4 = last4
	return q, nil
}

// Statistics are the figures of GET /cards (spec §4.17) over the cards
// listed, except AvailableSlots, over all the company's cards.
type Statistics struct {
	Total, Active, Frozen, Terminated, Pending, Failed int
	TotalBalance                                       int64
	AvailableSlots                                     int
	ByCustomer                                         map[string]CustomerFigures
}

// CustomerFigures are one customer's cards in the statistics.
type CustomerFigures struct {
	Cards   int
	Balance int64
}

// List returns the company's cards that q selects, oldest first, with
// their statistics. With q.Sync each issued card is reconciled with the
// issuer first.
func (s *Service) List(ctx context.Context, companyID string, q ListQuery) ([]Card, Statistics, error) {
	all, err := s.Store.Cards(ctx, companyID)
	if err != nil {
		return nil, Statistics{}, fmt.Errorf("cards: list: %w", err)
	}
	if q.Sync {
		if all, err = s.syncAll(ctx, all); err != nil {
			return nil, Statistics{}, err
		}
	}
	slots, err := s.Companies.CardSlots(ctx, companyID)
	if err != nil {
		return nil, Statistics{}, fmt.Errorf("cards: read card slots: %w", err)
	}
	st := Statistics{ByCustomer: map[string]CustomerFigures{}, AvailableSlots: slots}
	var out []Card
	for _, c := range all {
		if c.Status.Live() {
			st.AvailableSlots--
		}
		if (q.Status != "" && c.Status != q.Status) || (q.Brand != "" && c.Brand != q.Brand) || (q.Last4 != "" && c.Last4 != q.Last4) {
			continue
		}
		out = append(out, c)
		st.Total++
		st.TotalBalance += c.Balance
		switch c.Status {
		case Active:
			st.Active++
		case Frozen:
			st.Frozen++
		case Terminated:
			st.Terminated++
		case Pending:
			st.Pending++
		case Failed:
			st.Failed++
		}
		f := st.ByCustomer[c.CustomerID]
		f.Cards++
		f.Balance += c.Balance
		st.ByCustomer[c.CustomerID] = f
	}
	st.AvailableSlots = max(st.AvailableSlots, 0)
	return out, st, nil
}

// CustomerCards returns the cards of a customer of the company, reconciled
// with the issuer with sync: ErrCustomerNotFound for a customer that is
// not the company's (as GET /customers/{id}/transactions answers), and
// ErrNoCards for one of its customers who has none.
func (s *Service) CustomerCards(ctx context.Context, companyID, customerID string, sync bool) ([]Card, error) {
	if !validID(customerID) {
		return nil, ErrCustomerNotFound
	}
	cs, err := s.Store.CustomerCards(ctx, companyID, customerID)
	if err != nil {
		return nil, fmt.Errorf("cards: list the customer's cards: %w", err)
	}
	if len(cs) == 0 {
		// Only then is the customer read: a card is a customer's.
		switch _, err := s.Customers.Get(ctx, companyID, customerID); {
		case errors.Is(err, customers.ErrNotFound):
			return nil, ErrCustomerNotFound
		case err != nil:
			return nil, fmt.Errorf("cards: read customer: %w", err)
		}
		return nil, ErrNoCards
	}
	if sync {
		return s.syncAll(ctx, cs)
	}
	return cs, nil
}

// syncAll reconciles each issued card of cs with the issuer, a few at a
// time; an issuer that cannot be read is ErrIssuerUnavailable.
func (s *Service) syncAll(ctx context.Context, cs []Card) ([]Card, error) {
	if s.Issuer == nil {
		return nil, ErrNoIssuer
	}
	errs := make([]error, len(cs))
	sem := make(chan struct{}, syncParallelism)
	var wg sync.WaitGroup
	for i := range cs {
		if cs[i].IssuerCardID == "" {
			continue
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			ic, err := s.Issuer.Card(ctx, cs[i].IssuerCardID)
			if err != nil {
				errs[i] = fmt.Errorf("%w: %w", ErrIssuerUnavailable, err)
				return
			}
			cs[i], errs[i] = s.reconcile(ctx, cs[i], ic)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return cs, nil
}

// Reveals returns page p of the reveal records of card id of the company,
// newest first.
func (s *Service) Reveals(ctx context.Context, companyID, id string, p page.Request) (page.Result[Reveal], error) {
	if _, err := s.card(ctx, companyID, id); err != nil {
		return page.Result[Reveal]{}, err
	}
	return s.Store.Reveals(ctx, companyID, id, p)
}

// Resume finishes an open card transaction the request that accepted it
// could not: the sweeper calls it for every transaction its index shows
// PROCESSING. The transaction is read again first (the index lags): one
// settled since is left alone. An issuer that still cannot answer leaves it
// open (ErrIssuerUnavailable).
func (s *Service) Resume(ctx context.Context, open Transaction) error {
	if s.Issuer == nil {
		return ErrNoIssuer
	}
	tx, err := s.Store.Transaction(ctx, open.CompanyID, open.ID)
	if err != nil {
		return fmt.Errorf("cards: resume %s: %w", open.ID, err)
	}
	if !tx.Open() {
		return nil
	}
	card, err := s.Store.Card(ctx, tx.CompanyID, tx.CardID)
	if err != nil {
		return fmt.Errorf("cards: resume %s: %w", tx.ID, err)
	}
	if !tx.Issuance {
		// Nobody waits for its answer: the balance before is not needed.
		_, err = s.finishMove(ctx, card, tx, card.Balance)
		if errors.Is(err, ErrIssuerDeclined) { // settled: reversed
			return nil
		}
		return err
	}
	c, err := s.Customers.Get(ctx, tx.CompanyID, tx.CustomerID)
	if err != nil {
		return fmt.Errorf("cards: resume %s: read customer: %w", tx.ID, err)
	}
	holder, err := s.Customers.Cardholder(ctx, c)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrIssuerUnavailable, err)
	}
	_, err = s.finishIssuance(ctx, card, tx, holder)
	return err
}

// RevealLimitError is a reveal refused by the company's hourly quota, with
// the time after which one would be admitted.
type RevealLimitError struct{ RetryAfter time.Duration }

func (e *RevealLimitError) Error() string {
	return fmt.Sprintf("%v: retry after %v", ErrRevealLimitExceeded, e.RetryAfter)
}

// Unwrap returns ErrRevealLimitExceeded.
func (e *RevealLimitError) Unwrap() error { return ErrRevealLimitExceeded }

// RetryAfterSeconds returns the wait in whole seconds, rounded up, at
// least 1: the answer's Retry-After.
func (e *RevealLimitError) RetryAfterSeconds() int {
	return max(1, int((e.RetryAfter+time.Second-1)/time.Second))
}

// admitReveal charges one reveal of card to the company's hourly quota:
// past it, the reveal is refused (a *RevealLimitError) and counted
// (CardRevealsRefused, which an alarm watches: a company revealing this
// many cards is unusual); a quota that cannot be read refuses it too.
func (s *Service) admitReveal(ctx context.Context, companyID, cardID string) error {
	if s.RevealQuota == nil {
		return fmt.Errorf("%w: this function keeps no reveal quota", ErrRevealNotAudited)
	}
	ok, wait, err := s.RevealQuota.Allow(ctx, companyID, s.now())
	switch {
	case err != nil:
		return fmt.Errorf("%w: the reveal quota: %w", ErrRevealNotAudited, err)
	case !ok:
		metrics.Count(ctx, metrics.CardRevealsRefused)
		slog.WarnContext(ctx, "reveal refused: the company's hourly quota is spent", "card_id", cardID, "retry_after", wait)
		return &RevealLimitError{RetryAfter: wait}
	}
	metrics.Count(ctx, metrics.CardsRevealed)
	return nil
}
