package wallets

import (
	"errors"
	"fmt"
	"time"
)

// ErrUnbalanced is a posting whose ledger entries do not add up to the
// changes of its wallets' balances: the ledger invariant (VerifyLedger)
// would break, so nothing is written.
var ErrUnbalanced = errors.New("wallets: entries do not add up to the balance changes")

// Posting is one money movement as the ledger sees it: for each wallet it
// touches (a Leg), the change of the wallet's balances and the ledger
// entries that record it, committed together in one transaction with what
// else the movement writes (a payment, a card, an event). Every money
// movement is one: a payout's acceptance and its settlement or refund, a
// collection, a card's movements and fees, a conversion or deposit, a
// funding's settlement, an internal transfer, a sandbox credit. The store
// commits it, and pays the company's pending debts out of a credit to the
// payout balance of its USD wallet in the same transaction (package
// debts). NewPosting builds it.
type Posting struct {
	CompanyID string
	// Now is written as the wallets' updated_at.
	Now  time.Time
	Legs []Leg
}

// Leg is what a posting does to one wallet: its balances adjusted by
// Adjust (on the condition that none goes below 0 and, with ActiveOnly,
// that the wallet is active: money leaves a wallet for a new payout, card
// movement or conversion only while it is), its new ledger Entries written,
// its open entries Updated and Drawn from, in that order.
//
// The store records on each entry the balances before and after it, in
// turn from the wallet as read just before the write: on every new entry
// that is final (SUCCESS or FAILED; an open entry has none), and on every
// updated entry that moves a balance.
type Leg struct {
	WalletID   string
	Adjust     Adjustment
	ActiveOnly bool
	Entries    []Transaction
	Updates    []EntryUpdate
	Draws      []EntryDraw
}

// EntryDraw takes Amount out of what an open entry holds in
// payout_reserved (a bulk batch's reservation, TypeBulkPayout, as one of
// its items settles or is released), on the condition that the entry is
// still PENDING and holds at least Amount. The entry stays open.
type EntryDraw struct {
	ID     string
	Amount int64
}

// EntryUpdate moves an open ledger entry (a payout's reservation, a
// declared funding) from status From to status To, on the condition that
// it is still From: Delta is what it applies to its sub-balance from then
// on (0 while open), Reserved what it holds in payout_reserved (counted
// while To is open), Held what it held before.
type EntryUpdate struct {
	ID          string
	Balance     SubBalance
	From, To    Status
	Delta       int64
	Held        int64
	Reserved    int64
	OrderID     string
	CompletedAt *time.Time
}

// NewPosting returns the posting of legs for the company at now. It
// refuses (ErrUnbalanced) a leg whose entries are another wallet's or name
// no sub-balance, whose entries and updates do not add up to its
// adjustment on each balance (payin and payout: their Delta; reserved: the
// Reserved of its open entries, new or updated, less what the updated ones
// held and what the draws take), a draw of nothing, or a posting that
// touches a wallet twice.
func NewPosting(companyID string, now time.Time, legs ...Leg) (Posting, error) {
	seen := make(map[string]bool, len(legs))
	for _, l := range legs {
		if l.WalletID == "" || seen[l.WalletID] {
			return Posting{}, fmt.Errorf("%w: wallet %q is not one leg of the posting", ErrUnbalanced, l.WalletID)
		}
		seen[l.WalletID] = true
		var sum Adjustment
		add := func(id string, b SubBalance, delta int64) error {
			switch b {
			case Payin:
				sum.Payin += delta
			case Payout:
				sum.Payout += delta
			default:
				return fmt.Errorf("%w: entry %s of wallet %s has no sub-balance", ErrUnbalanced, id, l.WalletID)
			}
			return nil
		}
		for _, e := range l.Entries {
			if e.CompanyID != companyID || e.WalletID != l.WalletID || e.ID == "" {
				return Posting{}, fmt.Errorf("%w: entry %q is not one of wallet %s", ErrUnbalanced, e.ID, l.WalletID)
			}
			if err := add(e.ID, e.Balance, e.Delta); err != nil {
				return Posting{}, err
			}
			if e.Open() {
				sum.Reserved += e.Reserved
			}
		}
		for _, u := range l.Updates {
			if u.ID == "" || u.From.Terminal() {
				return Posting{}, fmt.Errorf("%w: entry %q of wallet %s is not open", ErrUnbalanced, u.ID, l.WalletID)
			}
			if err := add(u.ID, u.Balance, u.Delta); err != nil {
				return Posting{}, err
			}
			if !u.To.Terminal() {
				sum.Reserved += u.Reserved
			}
			sum.Reserved -= u.Held
		}
		for _, d := range l.Draws {
			if d.ID == "" || d.Amount <= 0 {
				return Posting{}, fmt.Errorf("%w: draw of %d from entry %q of wallet %s", ErrUnbalanced, d.Amount, d.ID, l.WalletID)
			}
			sum.Reserved -= d.Amount
		}
		if sum != l.Adjust {
			return Posting{}, fmt.Errorf("%w: wallet %s: entries add up to %+v, the adjustment is %+v", ErrUnbalanced, l.WalletID, sum, l.Adjust)
		}
	}
	return Posting{CompanyID: companyID, Now: now, Legs: legs}, nil
}

// Completed returns a completed (SUCCESS) ledger entry id on wallet w, of
// type typ and referencing reference, that moves sub-balance b by delta at
// now; its amount, amount with fee and net amount are |delta|.
func Completed(id string, w Wallet, typ Type, reference string, b SubBalance, delta int64, now time.Time) Transaction {
	amount := max(delta, -delta)
	return Transaction{
		ID: id, CompanyID: w.CompanyID, WalletID: w.ID,
		Amount: amount, AmountWithFee: amount, NetAmount: amount, Currency: w.Currency,
		Status: StatusSuccess, Type: typ, Reference: reference,
		Balance: b, Delta: delta, CreatedAt: now, CompletedAt: &now,
	}
}
