package reconcile

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"payments/pkg/cards"
	"payments/pkg/deadline"
	"payments/pkg/page"
	"payments/pkg/providers/issuer"
)

// The phases of an issuer's run, in order.
const (
	// phaseAuthorizations lists the issuer's authorizations since the
	// oldest hold we keep open (or the window's start): an approval it
	// made without us is recorded, each hold compared.
	phaseAuthorizations = "authorizations"
	// phaseTransactions lists the issuer's settlements and refunds of the
	// window: each applied unless recorded, then compared.
	phaseTransactions = "transactions"
	// phaseDeferred releases the holds the issuer released, or holds less
	// of, now that the captures that release them are applied.
	phaseDeferred = "holds"
	// phaseIssuerBalance compares the issuer's balance with the cards'.
	phaseIssuerBalance = "issuer_balance"
)

// CardLedger is what the reconciliation reads of our cards (moneystore.Cards).
type CardLedger interface {
	// CardCompany returns the company of card id; cards.ErrNotFound if
	// none.
	CardCompany(ctx context.Context, id string) (string, error)
	// Transaction reads a card transaction of the company.
	Transaction(ctx context.Context, companyID, id string) (cards.Transaction, error)
	// Outcome reads what became of issuer event (claim) eventID.
	Outcome(ctx context.Context, companyID, eventID string) (cards.Outcome, bool, error)
	// NetworkTransaction reads the card transaction recorded for the
	// network's authorization issuerTxID; cards.ErrTransactionNotFound if
	// none.
	NetworkTransaction(ctx context.Context, companyID, issuerTxID string) (cards.Transaction, error)
	// CardTransactions reads page p of a card's transactions, newest
	// first.
	CardTransactions(ctx context.Context, companyID, cardID string, f cards.TxFilter, p page.Request) (page.Result[cards.Transaction], error)
	// HoldsBefore returns up to limit authorizations of every company
	// whose hold is open, created before cutoff.
	HoldsBefore(ctx context.Context, cutoff time.Time, limit int) ([]cards.Transaction, error)
	// CardBalances returns the sum of the balances of every company's
	// cards, USD cents.
	CardBalances(ctx context.Context) (int64, error)
}

// cardTx is a card transaction of ours.
type cardTx = cards.Transaction

// maxHolds bounds the open holds of ours one run compares, oldest of each
// index shard first; the rest wait for a run that finds fewer.
const maxHolds = 500

// listMargin is how much earlier than our records the issuer's are
// listed: the issuer creates an authorization before we record it.
const listMargin = time.Minute

// scanMargin is how much earlier than the window our card transactions
// are read for the network's transaction ids (cardMovements).
const scanMargin = time.Hour

// reconPrefix starts the ids of the notifications the reconciliation
// builds: recon_<the issuer's transaction id> for a transaction,
// recon_<authorization id>_<what the issuer holds> for a hold released.
const reconPrefix = "recon_"

// holdRef names one of our holds and, once the issuer's authorization is
// listed, what the issuer holds of it: theirs, and its card's ids.
type holdRef struct {
	AuthID, CompanyID, TxID string
	IssuerCardID, CardID    string
	Theirs                  int64
}

func (h holdRef) String() string {
	return strings.Join([]string{h.AuthID, h.CompanyID, h.TxID, h.IssuerCardID, h.CardID, strconv.FormatInt(h.Theirs, 10)}, "|")
}

func parseHoldRef(s string) (holdRef, error) {
	f := strings.Split(s, "|")
	if len(f) != 6 {
		return holdRef{}, fmt.Errorf("reconcile: malformed hold reference %q", s)
	}
	theirs, err := strconv.ParseInt(f[5], 10, 64)
	if err != nil {
		return holdRef{}, fmt.Errorf("reconcile: malformed hold reference %q", s)
	}
	return holdRef{AuthID: f[0], CompanyID: f[1], TxID: f[2], IssuerCardID: f[3], CardID: f[4], Theirs: theirs}, nil
}

// authorizations runs one page of phaseAuthorizations; at its start it
// notes our open holds (Progress.Unseen) and where to list from.
func (rn *runner) authorizations(ctx context.Context) error {
	p := &rn.r.Progress
	if p.Since.IsZero() {
		if err := rn.noteHolds(ctx); err != nil {
			return err
		}
	}
	as, next, err := rn.svc.Issuer.Authorizations(ctx, p.Since, p.After, pageSize)
	if err != nil {
		return rn.failed(ctx, "list the issuer's authorizations", err)
	}
	for _, a := range as {
		if !a.CreatedAt.Before(rn.r.Window.To) {
			next = "" // the next run's
			break
		}
		if !deadline.Enough(ctx, itemTime) {
			return errOutOfTime
		}
		if err := rn.authorization(ctx, a); err != nil {
			return rn.failed(ctx, "reconcile authorization "+a.ID, err)
		}
		p.After = a.ID
	}
	if next != "" {
		return nil
	}
	for len(p.Unseen) > 0 {
		if !deadline.Enough(ctx, itemTime) {
			return errOutOfTime
		}
		if err := rn.unseen(ctx, p.Unseen[0]); err != nil {
			return rn.failed(ctx, "reconcile a hold", err)
		}
		p.Unseen = p.Unseen[1:]
	}
	rn.next(phaseTransactions)
	return nil
}

// noteHolds notes our open holds created before the window's end, which
// the issuer's list must name, and lists it from the oldest's creation
// (or the window's start, if earlier).
func (rn *runner) noteHolds(ctx context.Context) error {
	p := &rn.r.Progress
	holds, err := rn.svc.Cards.HoldsBefore(ctx, rn.r.Window.To, maxHolds)
	if err != nil {
		return rn.failed(ctx, "read our open holds", err)
	}
	if len(holds) == maxHolds {
		slog.WarnContext(ctx, "more open holds than one reconciliation compares: the oldest are", "reconciliation_id", rn.r.ID, "compared", maxHolds)
	}
	since := rn.r.Window.From
	p.Unseen = nil
	for _, h := range holds {
		if h.IssuerTxID == "" || h.Hold == 0 {
			continue
		}
		since = minTime(since, h.CreatedAt)
		p.Unseen = append(p.Unseen, holdRef{AuthID: h.IssuerTxID, CompanyID: h.CompanyID, TxID: h.ID, CardID: h.CardID}.String())
	}
	p.Since = since.Add(-listMargin)
	return nil
}

// authorization compares the issuer's authorization a with our record of
// it: an approval the issuer holds and we do not have is recorded (an
// advice APPROVED, approved without us); a hold the issuer holds less of
// than we do, or nothing of, is released once the transactions are
// applied (Deferred); one it holds more of, or that we released, is a
// mismatch.
func (rn *runner) authorization(ctx context.Context, a issuer.StatementAuthorization) error {
	p := &rn.r.Progress
	ours := rn.takeUnseen(a.ID)
	if a.Status != issuer.AuthorizationPending || !a.Approved || a.Held == 0 {
		if ours != nil { // the issuer holds nothing of it
			ours.IssuerCardID, ours.Theirs = a.CardID, 0
			p.Deferred = append(p.Deferred, ours.String())
		}
		return nil
	}
	companyID, found, err := rn.company(ctx, a.Reference)
	if err != nil {
		return err
	}
	m := Mismatch{Subject: SubjectAuthorization, ProviderID: a.ID, CompanyID: companyID, Reference: a.Reference,
		Currency: cards.Currency, ProviderAmount: amount(a.Held), ProviderStatus: a.Status}
	if !found {
		m.Kind, m.Detail = KindMissing, "the issuer holds it on a card we do not have"
		rn.mismatch(ctx, m)
		return nil
	}
	tx, err := rn.svc.Cards.NetworkTransaction(ctx, companyID, a.ID)
	recovered := false
	if errors.Is(err, cards.ErrTransactionNotFound) {
		applied := rn.apply(ctx, issuer.Notification{ID: reconPrefix + a.ID, Type: issuer.NotifyAdvice, CardID: a.CardID,
			Reference: a.Reference, Decision: issuer.Approved, Reason: issuer.ApprovedWithoutUs, CreatedAt: a.CreatedAt,
			Transaction: &issuer.NetworkTransaction{ID: a.ID, Kind: a.Kind, Amount: a.Held, Currency: cards.Currency, Merchant: a.Merchant}})
		if outOfTime(ctx, applied) {
			return errOutOfTime
		}
		tx, err = rn.svc.Cards.NetworkTransaction(ctx, companyID, a.ID)
		if errors.Is(err, cards.ErrTransactionNotFound) {
			m.Kind, m.Detail = KindMissing, "the issuer holds it and we have no record of it: "+appliedText(applied)
			rn.mismatch(ctx, m)
			return nil
		}
		recovered = true
	}
	if err != nil {
		return err
	}
	m.TransactionID, m.OurAmount, m.OurStatus = tx.ID, amount(tx.Hold), string(tx.Status)
	switch {
	case tx.Type != cards.TxAuthorization || tx.Hold == 0:
		m.Kind, m.OurStatus, m.Detail = KindStatus, string(tx.Type)+" "+string(tx.Status), "the issuer holds it; we hold nothing of it"
		rn.mismatch(ctx, m)
	case tx.Hold < a.Held:
		m.Kind, m.Detail = KindAmount, "the issuer holds more than we do"
		rn.mismatch(ctx, m)
	case tx.Hold > a.Held:
		p.Deferred = append(p.Deferred, holdRef{AuthID: a.ID, CompanyID: companyID, TxID: tx.ID, IssuerCardID: a.CardID,
			CardID: tx.CardID, Theirs: a.Held}.String())
	case recovered:
		rn.recovered(ctx, "an authorization approved without us", a.ID)
	default:
		rn.matched()
	}
	return nil
}

// takeUnseen takes authorization id's hold of ours out of the holds the
// issuer's list has not named yet, and returns it (nil when not one).
func (rn *runner) takeUnseen(id string) *holdRef {
	p := &rn.r.Progress
	for i, s := range p.Unseen {
		if h, err := parseHoldRef(s); err == nil && h.AuthID == id {
			p.Unseen = slices.Delete(p.Unseen, i, i+1)
			return &h
		}
	}
	return nil
}

// unseen reports our hold s, which the issuer's list never named, if it
// is still open.
func (rn *runner) unseen(ctx context.Context, s string) error {
	h, err := parseHoldRef(s)
	if err != nil {
		return err
	}
	tx, err := rn.svc.Cards.Transaction(ctx, h.CompanyID, h.TxID)
	if err != nil {
		return err
	}
	if tx.Type == cards.TxAuthorization && tx.Hold > 0 {
		rn.mismatch(ctx, Mismatch{Kind: KindMissing, Subject: SubjectHold, ProviderID: h.AuthID, CompanyID: h.CompanyID,
			Reference: tx.CardID, TransactionID: tx.ID, Currency: cards.Currency, OurAmount: amount(tx.Hold), OurStatus: string(tx.Status),
			Detail: "we hold it; the issuer lists no authorization of its id"})
	}
	return nil
}

// deferred runs phaseDeferred: each hold the issuer released, or holds
// less of, is released (a reversal of the difference, all of it when the
// issuer holds nothing), unless a transaction of its authorization could
// not be followed.
func (rn *runner) deferred(ctx context.Context) error {
	p := &rn.r.Progress
	for len(p.Deferred) > 0 {
		if !deadline.Enough(ctx, itemTime) {
			return errOutOfTime
		}
		h, err := parseHoldRef(p.Deferred[0])
		if err != nil {
			return rn.failed(ctx, "release a hold", err)
		}
		if err := rn.release(ctx, h); err != nil {
			return rn.failed(ctx, "release hold "+h.TxID, err)
		}
		p.Deferred = p.Deferred[1:]
	}
	rn.next(phaseIssuerBalance)
	return nil
}

// release releases what our hold h holds past what the issuer holds of
// it, by a reversal of the issuer's authorization (Amount the difference,
// 0 for all), whose id names the finding (recon_<authorization>_<theirs>):
// a run that finds the same again applies nothing more.
func (rn *runner) release(ctx context.Context, h holdRef) error {
	tx, err := rn.svc.Cards.Transaction(ctx, h.CompanyID, h.TxID)
	if err != nil {
		return err
	}
	m := Mismatch{Subject: SubjectHold, ProviderID: h.AuthID, CompanyID: h.CompanyID, Reference: tx.CardID, TransactionID: tx.ID,
		Currency: cards.Currency, ProviderAmount: amount(h.Theirs), OurAmount: amount(tx.Hold)}
	switch {
	case tx.Type != cards.TxAuthorization || tx.Hold == h.Theirs:
		rn.matched() // released meanwhile, by what the issuer reported
		return nil
	case tx.Hold < h.Theirs:
		m.Kind, m.Detail = KindAmount, "the issuer holds more than we do"
		rn.mismatch(ctx, m)
		return nil
	}
	release := tx.Hold - h.Theirs
	if h.Theirs == 0 {
		release = 0
	}
	id := fmt.Sprintf("%s%s_%d", reconPrefix, h.AuthID, h.Theirs)
	applied := rn.apply(ctx, issuer.Notification{ID: id, Type: issuer.NotifyReversal, CardID: h.IssuerCardID, Reference: tx.CardID,
		CreatedAt: rn.svc.now(), Transaction: &issuer.NetworkTransaction{ID: id, AuthorizationID: h.AuthID, Amount: release, Currency: cards.Currency}})
	if outOfTime(ctx, applied) {
		return errOutOfTime
	}
	if tx, err = rn.svc.Cards.Transaction(ctx, h.CompanyID, h.TxID); err != nil {
		return err
	}
	if tx.Hold == h.Theirs {
		rn.recovered(ctx, "a hold the issuer released", h.AuthID)
		return nil
	}
	m.OurAmount, m.OurStatus = amount(tx.Hold), string(tx.Status)
	m.Kind, m.Detail = KindAmount, "we hold more than the issuer, and releasing it left this: "+appliedText(applied)
	if h.Theirs == 0 {
		m.Kind, m.ProviderStatus = KindStatus, "RELEASED"
	}
	rn.mismatch(ctx, m)
	return nil
}

// issuerBalance runs phaseIssuerBalance: the issuer's balance must cover
// the cards' balances.
func (rn *runner) issuerBalance(ctx context.Context) error {
	bal, err := rn.svc.Issuer.Balance(ctx)
	if err != nil {
		return rn.failed(ctx, "read the issuer's balance", err)
	}
	ours, err := rn.svc.Cards.CardBalances(ctx)
	if err != nil {
		return rn.failed(ctx, "sum the cards' balances", err)
	}
	rn.r.Balances = []Balance{{Currency: cards.Currency, Provider: bal, Ours: amount(ours)}}
	if bal < ours {
		rn.mismatch(ctx, Mismatch{Kind: KindBalance, Subject: SubjectBalance, Currency: cards.Currency,
			ProviderAmount: amount(bal), OurAmount: amount(ours), Detail: "the issuer's balance is below the sum of the cards' balances"})
	} else {
		rn.matched()
	}
	rn.next(phaseDone)
	return nil
}

// company returns the company of our card reference; found is false when
// we have no such card.
func (rn *runner) company(ctx context.Context, reference string) (string, bool, error) {
	if reference == "" {
		return "", false, nil
	}
	id, err := rn.svc.Cards.CardCompany(ctx, reference)
	switch {
	case errors.Is(err, cards.ErrNotFound):
		return "", false, nil
	case err != nil:
		return "", false, err
	}
	return id, true, nil
}

// apply applies n through the cards' applier and returns what it
// answered; a notification that does not check is not applied.
func (rn *runner) apply(ctx context.Context, n issuer.Notification) error {
	if err := n.Check(); err != nil {
		return fmt.Errorf("%w: %v", issuer.ErrBadNotification, err)
	}
	err := rn.svc.Applier.Apply(ctx, n)
	if err != nil && !outOfTime(ctx, err) {
		slog.WarnContext(ctx, "reconciliation: applying the issuer's record failed", "reconciliation_id", rn.r.ID,
			"event_id", n.ID, "error", err)
	}
	return err
}

// appliedText says what applying answered, for a mismatch's detail.
func appliedText(err error) string {
	if err == nil {
		return "applying it recorded nothing"
	}
	return "applying it failed: " + err.Error()
}

// failed is err from what a run was doing, or errOutOfTime when its
// context ran out meanwhile.
func (rn *runner) failed(ctx context.Context, what string, err error) error {
	if errors.Is(err, errOutOfTime) || outOfTime(ctx, err) {
		return errOutOfTime
	}
	return fmt.Errorf("reconcile: %s: %w", what, err)
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
