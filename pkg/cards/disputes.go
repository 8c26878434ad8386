package cards

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"payments/pkg/debts"
	"payments/pkg/events"
	"payments/pkg/field"
	"payments/pkg/idempotency"
	"payments/pkg/ids"
	"payments/pkg/page"
	"payments/pkg/providers/issuer"
	"payments/pkg/timestamp"
	"payments/pkg/wallets"
)

// A dispute is the company's claim, at the card issuer, against a
// settlement of one of its cards (docs/cards.md, "Disputes"). The company
// opens it (OpenDispute), or the issuer does without us (its dashboard);
// the issuer decides it and reports each step (issuer.NotifyDispute),
// which moves the money (applyDispute, disputes_apply.go): the card
// follows what the issuer has credited for the dispute.

// Errors of disputes.
var (
	ErrDisputeNotFound = errors.New("cards: dispute not found")
	// ErrNotDisputable is a transaction that is not a settlement, or
	// whose settlement was refunded in full: there is nothing to dispute.
	ErrNotDisputable = errors.New("cards: not a settlement with anything left to dispute")
	// ErrDisputeExists is a settlement disputed already.
	ErrDisputeExists = errors.New("cards: the transaction is disputed already")
	// ErrDisputeDeclined is a dispute the issuer refused to open: the
	// dispute is FAILED, nothing moved.
	ErrDisputeDeclined = errors.New("cards: the card issuer refused the dispute")
	// ErrNoDisputes is a card issuer that takes no disputes.
	ErrNoDisputes = errors.New("cards: the card issuer takes no disputes")
)

// DisputeStatus is where a dispute stands.
type DisputeStatus string

// Dispute statuses: the issuer's (issuer.DisputeSubmitted, …) and ours
// before and instead of them.
const (
	// DisputeOpening is a dispute recorded whose opening the issuer has
	// not answered yet: the request may be repeated, and the issuer's
	// first report of it completes it too.
	DisputeOpening   DisputeStatus = "OPENING"
	DisputeSubmitted DisputeStatus = issuer.DisputeSubmitted
	DisputeWon       DisputeStatus = issuer.DisputeWon
	DisputeLost      DisputeStatus = issuer.DisputeLost
	// DisputeFailed is a dispute the issuer refused to open.
	DisputeFailed DisputeStatus = "FAILED"
)

// DisputeStatuses lists the dispute statuses.
var DisputeStatuses = []DisputeStatus{DisputeOpening, DisputeSubmitted, DisputeWon, DisputeLost, DisputeFailed}

// Dispute is a dispute of a card settlement. Amounts are USD cents.
type Dispute struct {
	ID         string // UUID v7
	CompanyID  string
	CardID     string
	CustomerID string
	// TransactionID is the SETTLEMENT disputed, IssuerTxID the network's id
	// of it.
	TransactionID string
	IssuerTxID    string
	// IssuerDisputeID is the issuer's id of the dispute (Stripe's idp_…),
	// "" while OPENING.
	IssuerDisputeID string
	Status          DisputeStatus
	// Amount is what is disputed; Credited what the issuer has credited
	// for it so far, net of what it took back, as applied here: the card
	// (or the wallet of a terminated card) has received it.
	Amount   int64
	Credited int64
	Reason   string
	// Explanation is the company's account of it; "" for a dispute the
	// issuer opened without us.
	Explanation string
	// Error says why a FAILED dispute failed.
	Error string
	// Seq is the number of events about the dispute so far: every write
	// of the dispute is conditioned on it (and numbers its events after
	// it).
	Seq int64
	// Movements are the DISPUTE card transactions that moved its credit,
	// oldest first, each with what it moved on the card: the issuer is
	// told of each (tellDispute).
	Movements []DisputeMovement
	CreatedAt time.Time
	UpdatedAt time.Time
}

// DisputeMovement is a DISPUTE card transaction of a dispute and what it
// moved on the card's balance.
type DisputeMovement struct {
	TxID      string
	CardDelta int64
}

// DisputeFilter selects disputes: each field set must match.
type DisputeFilter struct {
	Status DisputeStatus
	CardID string
}

// DisputeMove is the write of a dispute's new state as the issuer reported
// it, with the money its credit's change moves, as one transaction: the
// dispute becomes After on the condition that its event count (Seq) and
// its Credited are still Dispute's (else ErrChanged: a replay, a
// concurrent delivery or an older report lost the race, and the state is
// read again).
type DisputeMove struct {
	Dispute, After Dispute
	// Card is the card as read; CardDelta is added to its balance (and
	// what it has available) on the condition that the card is live for a
	// credit, or has it available for a debit (else ErrChanged).
	Card      Card
	CardDelta int64
	// Tx is the DISPUTE card transaction that moves the change; nil when
	// the credit did not change.
	Tx *Transaction
	// WalletID is the USD wallet; Wallet its change and Entries its ledger
	// entries (a debit on the condition that payout_available covers it,
	// else ErrChanged).
	WalletID string
	Wallet   wallets.Adjustment
	Entries  []wallets.Transaction
	// Debt is what neither the card nor the wallet could give back.
	Debt   *debts.Debt
	Events []events.Event
	Now    time.Time
}

// DisputeStore keeps the disputes (pkg/store/cards_disputes.go). Every
// write but OpenDispute and FailDispute is conditioned on the dispute's
// event count as read (Dispute.Seq), and numbers its events after it.
type DisputeStore interface {
	// OpenDispute records d, OPENING, with the claim of its transaction
	// (ErrDisputeExists when a dispute claims it) and the effect of the
	// request's Idempotency-Key, if it holds one.
	OpenDispute(ctx context.Context, d Dispute) error
	// CreateDispute records d, which the issuer opened without us, with
	// its lookup by the issuer's id (ErrDisputeExists when the issuer's
	// id is recorded) and, when claim, the claim of its transaction
	// (ErrChanged when a dispute claims it since it was read), and evs.
	CreateDispute(ctx context.Context, d Dispute, claim bool, evs []events.Event) error
	// AttachDispute makes OPENING dispute d SUBMITTED under the issuer's
	// id issuerID, with its lookup and evs; ErrChanged when d is no
	// longer OPENING.
	AttachDispute(ctx context.Context, d Dispute, issuerID string, evs []events.Event, now time.Time) error
	// FailDispute makes OPENING dispute d FAILED, for why, and releases
	// its transaction; ErrChanged when d is no longer OPENING.
	FailDispute(ctx context.Context, d Dispute, why string, now time.Time) error
	// MoveDispute writes m (see DisputeMove).
	MoveDispute(ctx context.Context, m DisputeMove) error
	// Dispute reads dispute id of the company; ErrDisputeNotFound if
	// none.
	Dispute(ctx context.Context, companyID, id string) (Dispute, error)
	// TransactionDispute reads the dispute that claims transaction txID;
	// found is false when none does.
	TransactionDispute(ctx context.Context, companyID, txID string) (d Dispute, found bool, err error)
	// IssuerDispute reads the dispute recorded under the issuer's id
	// issuerID; found is false when none is.
	IssuerDispute(ctx context.Context, companyID, issuerID string) (d Dispute, found bool, err error)
	// Disputes reads page p of the company's disputes that f selects,
	// newest first.
	Disputes(ctx context.Context, companyID string, f DisputeFilter, p page.Request) (page.Result[Dispute], error)
	// CardSettlement reads the SETTLEMENT of card cardID recorded for the
	// network's transaction issuerTxID; ErrTransactionNotFound if none.
	CardSettlement(ctx context.Context, companyID, cardID, issuerTxID string) (Transaction, error)
}

// DisputeInput is the body of POST /cards/transactions/{id}/disputes.
type DisputeInput struct {
	Reason      string `json:"reason"`
	Explanation string `json:"explanation"`
}

// MaxExplanation bounds a dispute's explanation, in characters.
const MaxExplanation = 1000

// DisputesPageSize is the default page size of GET /cards/disputes.
const DisputesPageSize = 20

// check returns in's reason (any case) and explanation, trimmed, or the
// field that is wrong.
func (in DisputeInput) check() (reason, explanation string, err error) {
	reason = strings.ToUpper(strings.TrimSpace(in.Reason))
	switch {
	case reason == "":
		return "", "", field.Invalid("reason", "is required")
	case !slices.Contains(issuer.DisputeReasons, reason):
		return "", "", field.Invalid("reason", "must be one of "+strings.Join(issuer.DisputeReasons, ", "))
	}
	explanation = strings.TrimSpace(in.Explanation)
	switch n := len([]rune(explanation)); {
	case n == 0:
		return "", "", field.Invalid("explanation", "is required")
	case n > MaxExplanation:
		return "", "", field.Invalid("explanation", fmt.Sprintf("must be at most %d characters", MaxExplanation))
	}
	return reason, explanation, nil
}

// OpenDispute disputes settlement txID of the company at the card issuer
// (docs/cards.md, "Disputes"): what it settled, less what its
// authorization refunded since (disputable). The dispute is recorded
// OPENING first, with the claim of the settlement (one dispute per
// settlement: ErrDisputeExists) and the request's Idempotency-Key effect,
// then the issuer is asked, idempotently on our dispute id: its answer
// makes the dispute SUBMITTED (card.dispute.created); its refusal FAILED
// (ErrDisputeDeclined); no answer leaves it OPENING
// (ErrIssuerUnavailable, with the dispute): asking again, the same request
// with its key, or a new one for the same settlement, asks the issuer again
// for the same dispute. Money moves only with the issuer's reports of the
// dispute (applyDispute).
func (s *Service) OpenDispute(ctx context.Context, companyID, txID string, in DisputeInput) (Dispute, error) {
	if e, ok := idempotency.Replaying(ctx); ok {
		d, err := s.Store.Dispute(ctx, companyID, e.ID)
		if err != nil {
			return Dispute{}, fmt.Errorf("cards: replay %s: %w", e.ID, err)
		}
		return s.resumeDispute(ctx, d)
	}
	reason, explanation, err := in.check()
	if err != nil {
		return Dispute{}, err
	}
	if _, err := s.disputes(); err != nil {
		return Dispute{}, err
	}
	if !validID(txID) {
		return Dispute{}, ErrTransactionNotFound
	}
	tx, err := s.Store.Transaction(ctx, companyID, txID)
	if err != nil {
		return Dispute{}, err
	}
	amount, err := s.disputable(ctx, tx)
	if err != nil {
		return Dispute{}, err
	}
	if d, found, err := s.Store.TransactionDispute(ctx, companyID, tx.ID); err != nil || found {
		if err != nil {
			return Dispute{}, err
		}
		return s.resumeDispute(ctx, d)
	}
	now := s.now()
	d := Dispute{
		ID: ids.NewV7(now), CompanyID: companyID, CardID: tx.CardID, CustomerID: tx.CustomerID,
		TransactionID: tx.ID, IssuerTxID: tx.IssuerTxID, Status: DisputeOpening, Amount: amount,
		Reason: reason, Explanation: explanation, CreatedAt: now, UpdatedAt: now,
	}
	switch err := s.Store.OpenDispute(ctx, d); {
	case errors.Is(err, ErrDisputeExists):
		// Another request opened it meanwhile.
		other, found, rerr := s.Store.TransactionDispute(ctx, companyID, tx.ID)
		if rerr != nil || !found {
			return Dispute{}, err
		}
		return s.resumeDispute(ctx, other)
	case err != nil:
		return Dispute{}, err
	}
	slog.InfoContext(ctx, "card dispute recorded", "dispute_id", d.ID, "transaction_id", tx.ID, "amount", amount, "reason", reason)
	return s.askDispute(ctx, d)
}

// disputes returns the issuer's disputes: ErrNoIssuer without an issuer,
// ErrNoDisputes when it takes none.
func (s *Service) disputes() (issuer.Disputes, error) {
	if s.Issuer == nil {
		return nil, ErrNoIssuer
	}
	ds, ok := s.Issuer.(issuer.Disputes)
	if !ok {
		return nil, ErrNoDisputes
	}
	return ds, nil
}

// disputable returns what settlement tx may dispute: what it settled, at
// most what its authorization still has settled and not refunded (a
// refund names the authorization, not one of its settlements: with
// several settlements, what was refunded may be of any of them).
func (s *Service) disputable(ctx context.Context, tx Transaction) (int64, error) {
	if tx.Type != TxSettlement || tx.Status != TxSuccess {
		return 0, ErrNotDisputable
	}
	amount := tx.Amount
	if tx.OriginalID != "" {
		auth, err := s.Store.Transaction(ctx, tx.CompanyID, tx.OriginalID)
		if err != nil {
			return 0, fmt.Errorf("cards: read the authorization of settlement %s: %w", tx.ID, err)
		}
		amount = min(amount, auth.Settled-auth.Refunded)
	}
	if amount <= 0 {
		return 0, ErrNotDisputable
	}
	return amount, nil
}

// resumeDispute answers a request for dispute d that exists already: an
// OPENING one is asked of the issuer again (the first request's answer
// was lost), a FAILED one is its refusal; a dispute the issuer has is
// ErrDisputeExists, unless the request is the replay of the one that opened
// it, which answers it.
func (s *Service) resumeDispute(ctx context.Context, d Dispute) (Dispute, error) {
	_, replay := idempotency.Replaying(ctx)
	switch {
	case d.Status == DisputeOpening:
		return s.askDispute(ctx, d)
	case d.Status == DisputeFailed && replay:
		return Dispute{}, fmt.Errorf("%w: %s (dispute %s)", ErrDisputeDeclined, d.Error, d.ID)
	case replay:
		return d, nil
	}
	return Dispute{}, fmt.Errorf("%w: dispute %s", ErrDisputeExists, d.ID)
}

// askDispute asks the issuer to open OPENING dispute d and records its
// answer: the issuer's id (SUBMITTED, card.dispute.created), or its
// refusal (FAILED, ErrDisputeDeclined). An issuer that does not answer
// leaves d OPENING: ErrIssuerUnavailable with d.
func (s *Service) askDispute(ctx context.Context, d Dispute) (Dispute, error) {
	ds, err := s.disputes()
	if err != nil {
		return d, err
	}
	card, err := s.Store.Card(ctx, d.CompanyID, d.CardID)
	if err != nil {
		return Dispute{}, fmt.Errorf("cards: read the card of dispute %s: %w", d.ID, err)
	}
	answer, err := ds.OpenDispute(ctx, issuer.DisputeRequest{
		Reference: d.ID, CardID: card.IssuerCardID, TransactionID: d.IssuerTxID,
		Reason: d.Reason, Explanation: d.Explanation, Amount: d.Amount,
	})
	switch {
	case err != nil && definitive(err):
		slog.WarnContext(ctx, "the card issuer refused a dispute", "dispute_id", d.ID, "error", err)
		if ferr := s.Store.FailDispute(ctx, d, err.Error(), s.now()); ferr != nil {
			if errors.Is(ferr, ErrChanged) {
				return s.disputeNow(ctx, d)
			}
			return Dispute{}, ferr
		}
		return Dispute{}, fmt.Errorf("%w: %v (dispute %s)", ErrDisputeDeclined, err, d.ID)
	case err != nil:
		return d, fmt.Errorf("%w: %w", ErrIssuerUnavailable, err)
	case answer.ID == "":
		return d, fmt.Errorf("%w: the answer names no dispute", ErrIssuerUnavailable)
	}
	if err := s.attachDispute(ctx, d, answer.ID); err != nil && !errors.Is(err, ErrChanged) {
		return Dispute{}, err
	}
	return s.disputeNow(ctx, d)
}

// disputeNow reads d again, as its last write left it.
func (s *Service) disputeNow(ctx context.Context, d Dispute) (Dispute, error) {
	now, err := s.Store.Dispute(ctx, d.CompanyID, d.ID)
	if err != nil {
		return Dispute{}, fmt.Errorf("cards: read dispute %s: %w", d.ID, err)
	}
	if now.Status == DisputeFailed {
		return Dispute{}, fmt.Errorf("%w: %s (dispute %s)", ErrDisputeDeclined, now.Error, now.ID)
	}
	return now, nil
}

// attachDispute records the issuer's id of OPENING dispute d: it is
// SUBMITTED, and card.dispute.created says so. ErrChanged when d is no
// longer OPENING (the issuer's report of it, or a concurrent request,
// attached it first).
func (s *Service) attachDispute(ctx context.Context, d Dispute, issuerID string) error {
	now := s.now()
	after := d
	after.Status, after.IssuerDisputeID, after.UpdatedAt = DisputeSubmitted, issuerID, now
	ev, err := events.Build(d.CompanyID, events.CardDisputeCreatedData{CardDispute: after.event(), CreatedAt: timestamp.Format(d.CreatedAt)}, now)
	if err != nil {
		return err
	}
	if err := s.Store.AttachDispute(ctx, d, issuerID, []events.Event{ev}, now); err != nil {
		return err
	}
	slog.InfoContext(ctx, "card dispute submitted", "dispute_id", d.ID, "issuer_dispute_id", issuerID)
	s.publish(ctx, []events.Event{ev})
	return nil
}

// event is d as its events show it.
func (d Dispute) event() events.CardDispute {
	return events.CardDispute{
		DisputeID: d.ID, CardID: d.CardID, CustomerID: d.CustomerID, TransactionID: d.TransactionID,
		Status: string(d.Status), Reason: optional(d.Reason), Amount: moneyJSON(d.Amount), CreditedAmount: moneyJSON(d.Credited),
		Currency: Currency,
	}
}

// GetDispute reads dispute id of the company.
func (s *Service) GetDispute(ctx context.Context, companyID, id string) (Dispute, error) {
	if !validID(id) {
		return Dispute{}, ErrDisputeNotFound
	}
	return s.Store.Dispute(ctx, companyID, id)
}

// ListDisputes returns page p of the company's disputes that f selects,
// newest first.
func (s *Service) ListDisputes(ctx context.Context, companyID string, f DisputeFilter, p page.Request) (page.Result[Dispute], error) {
	res, err := s.Store.Disputes(ctx, companyID, f, p)
	if err != nil {
		return page.Result[Dispute]{}, fmt.Errorf("cards: list disputes: %w", err)
	}
	return res, nil
}

// ParseDisputeFilter reads the filters of GET /cards/disputes: status (any
// case) and card_id; a bad value is a 400 naming its parameter.
func ParseDisputeFilter(status, cardID string) (DisputeFilter, error) {
	var f DisputeFilter
	if status != "" {
		f.Status = DisputeStatus(strings.ToUpper(status))
		if !slices.Contains(DisputeStatuses, f.Status) {
			return f, field.Invalid("status", badFilter)
		}
	}
	if cardID != "" && !validID(cardID) {
		return f, field.Invalid("card_id", "must be a card id")
	}
	f.CardID = cardID
	return f, nil
}
