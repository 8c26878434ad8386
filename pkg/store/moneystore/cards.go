package moneystore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/cards"
	"payments/pkg/events"
	"payments/pkg/store"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
	"payments/pkg/timestamp"
	"payments/pkg/wallets"
)

var _ cards.Store = (*Cards)(nil)

// Cards stores a company's cards, their transactions and the audit
// records of their reveals. In the company partition (COMPANY#<id>):
//
//   - CARD#<card id>: the card, its balance in cents, the key id and
//     tokens of its sealed number and CVV (absent until the issuer has
//     issued it; a sandbox card issued before CARDSECRETS may still hold
//     the sealed values inline until the migration card-secrets); also on GSI1
//     (GSI1PK COMPANY#<id>#CUSTOMER#<customer id>, GSI1SK CARD#<card id>),
//     the customer's cards. A terminated card that still keeps money for
//     open holds carries GSI2 keys in OPEN_TERMINATION#<nn> (GSI2SK
//     "<terminated_at>#<company id>#<card id>"), which is how the sweeper
//     finds the holds a termination left to release (cards_terminations.go);
//   - CARDSECRETS#<card id>: the card's sealed number and CVV (sandbox
//     mode), written by its issuance's settlement; no index key, so no
//     index copies them (every GSI projects ALL);
//   - CARDSLOTS: {used}, the count of the company's live cards (neither
//     TERMINATED nor FAILED): an issuance takes a slot on the condition
//     used < the company's slots, a failed issuance and a termination give
//     it back;
//   - CTX#<uuid v7>: a card transaction, with what it has moved so far
//     (card_delta, wallet_delta); also on GSI1 (COMPANY#<id>#CARD#<card
//     id>, CTX#<uuid v7>), the card's transactions. While PROCESSING it
//     carries GSI2 keys in one of the IndexShards partitions
//     OPEN_CARDTX#<nn> (GSI2SK "<created_at>#<company id>#<id>"), which is
//     how the sweeper finds the movements the issuer has not answered;
//     settlement removes them. An authorization whose hold is open carries
//     GSI2 keys in OPEN_HOLD#<nn> instead (the same GSI2SK), which is how
//     the sweeper finds the holds to expire; the write that releases the
//     hold (settlement, reversal) removes them, and after an expiry
//     HoldTold does, once the issuer is told;
//   - REVEAL#<card id>#<uuid v7>: the audit record of a reveal of a card's
//     secrets.
//
// Acceptance, settlement and termination are one TransactWriteItems each,
// whose items are named for their cancellation reasons: card, slots, tx,
// event<n> (store.Txn.AddEvent) and, last, the posting of the money on the wallet
// (Wallets.post: wallet, entry<n>, and the debts a credit pays). The
// ledger entries that move a balance record the balances before and after
// them, read from the wallet just before the write.
type Cards struct {
	db      *store.DB
	wallets *Wallets
}

// NewCards returns the cards store on db.
func NewCards(db *store.DB) *Cards { return &Cards{db: db, wallets: NewWallets(db)} }

// Accept writes a in one transaction: the card (put as new, or its
// balance moved by a.Tx.CardDelta on the condition that its status is one
// of a.From and, for a debit, that its balance covers it), the slot a new
// card takes, the wallet's adjustment (on the condition that the wallet is
// active and no balance goes below 0) with its ledger entries, the new
// PROCESSING transaction and the events. A failed condition is
// cards.ErrNotFound, cards.ErrNotActive, cards.ErrInsufficientCard,
// cards.ErrNoSlots, wallets.ErrInsufficientWalletBalance, wallets.ErrNotFound or
// wallets.ErrInactive; a card that changed back in between is
// cards.ErrChanged.
func (s *Cards) Accept(ctx context.Context, a cards.Accept) error {
	c, tx := a.Card, a.Tx
	if tx.CompanyID != c.CompanyID || tx.CardID != c.ID {
		return fmt.Errorf("store: card transaction %s is not of card %s", tx.ID, c.ID)
	}
	if a.New && a.Slots <= 0 {
		return cards.ErrNoSlots
	}
	var card types.TransactWriteItem
	if a.New {
		item, err := attributevalue.MarshalMap(newCardItem(c))
		if err != nil {
			return fmt.Errorf("store: marshal card: %w", err)
		}
		card = s.wallets.putNew(item)
	} else {
		if len(a.From) == 0 {
			return fmt.Errorf("store: accept on card %s: no status to move from", c.ID)
		}
		card = s.cardMove(c, a.From, tx.CardDelta, a.Now)
	}
	txPut, err := s.txPut(tx)
	if err != nil {
		return err
	}
	effect := tx.ID // a funding or a withdrawal
	if a.New {
		effect = c.ID // an issuance
	}
	return s.db.Commit(ctx, "accept card transaction "+tx.ID, func(ctx context.Context) (*store.Txn, error) {
		t := &store.Txn{}
		s.db.RecordEffect(ctx, t, effect, a.Receipt)
		t.Add(schema.CardItem, card)
		if a.New {
			t.Add("slots", s.slotsChange(c.CompanyID, 1, a.Slots))
			ref, err := attributevalue.MarshalMap(claimItem{PK: schema.CardRefPK(c.ID), SK: schema.CardRefSK, Type: schema.KindCardRef, CompanyID: c.CompanyID, Of: c.ID})
			if err != nil {
				return nil, fmt.Errorf("store: marshal card ref: %w", err)
			}
			t.Add("card_ref", s.wallets.putNew(ref))
		}
		t.Add(schema.CardTxItem, txPut)
		t.Creates(tx.ID)
		if a.New {
			t.Creates(c.ID)
		}
		addEvents(t, a.Events)
		return t, s.addMoney(ctx, t, c.CompanyID, tx.WalletID, a.Wallet, a.Entries, a.Now, true)
	}, func(ctx context.Context, k dynamo.Cancellation) error {
		switch {
		case k.Failed(schema.CardItem) && !a.New:
			return s.whyCardRefused(ctx, c.CompanyID, c.ID, func(now cards.Card) error {
				switch {
				case !slices.Contains(a.From, now.Status):
					return cards.ErrNotActive
				case now.Available() < -tx.CardDelta:
					return cards.ErrInsufficientCard
				}
				return cards.ErrChanged
			})
		case k.Failed("slots"):
			return cards.ErrNoSlots
		case k.Failed(schema.WalletItem):
			return s.wallets.whyRefusedActive(ctx, c.CompanyID, tx.WalletID, wallets.ErrInsufficientWalletBalance)
		}
		return nil
	})
}

// Settle writes s in one transaction: the transaction's final status,
// deltas, error and completion, on the condition that it is still
// PROCESSING (else cards.ErrChanged), out of the open index; the card's
// balance moved by s.CardChange, its status, when s.NewStatus is set, on
// the condition that it is s.FromStatus (else cards.ErrChanged), and the
// issuer's card, when s.Issued is set; the slot released when asked; the
// wallet's adjustment with its ledger entries; and the events.
func (s *Cards) Settle(ctx context.Context, st cards.Settle) error {
	tx := st.Tx
	if tx.Open() {
		return fmt.Errorf("store: settle card transaction %s: status %s is not final", tx.ID, tx.Status)
	}
	txUpdate, err := s.settledTx(tx, st.Now)
	if err != nil {
		return err
	}
	card, err := s.settledCard(st)
	if err != nil {
		return err
	}
	secrets, err := s.secretsPut(st)
	if err != nil {
		return err
	}
	return s.db.Commit(ctx, "settle card transaction "+tx.ID, func(ctx context.Context) (*store.Txn, error) {
		t := &store.Txn{}
		t.Add(schema.CardTxItem, txUpdate)
		if card != nil {
			t.Add(schema.CardItem, *card)
		}
		if secrets != nil {
			t.Add("secrets", *secrets)
		}
		if st.ReleaseSlot {
			t.Add("slots", s.slotsChange(tx.CompanyID, -1, 0))
		}
		addEvents(t, st.Events)
		return t, s.addMoney(ctx, t, tx.CompanyID, tx.WalletID, st.Wallet, st.Entries, st.Now, false)
	}, func(ctx context.Context, k dynamo.Cancellation) error {
		switch {
		case debtRaced(k):
			return dynamo.ErrRetry
		case k.Failed(schema.CardTxItem):
			return cards.ErrChanged
		case k.Failed(schema.CardItem):
			return s.whyCardRefused(ctx, tx.CompanyID, tx.CardID, func(now cards.Card) error {
				if st.NewStatus == "" && now.Available() < -st.CardChange {
					return cards.ErrInsufficientCard
				}
				return cards.ErrChanged
			})
		case k.Failed(schema.WalletItem):
			return s.whyWalletRefused(ctx, tx.CompanyID, tx.WalletID)
		}
		return nil
	})
}

// Terminate writes t in one transaction: the card TERMINATED on the
// condition that its status, balance and holds are still t.Card's (else
// cards.ErrChanged), its balance down to what its open holds keep
// (t.Card.Held) and nothing available; while it keeps some, in the open
// termination index (Terminating), until the sweeper has released them
// (TerminationDone); its slot released, the wallet's adjustment with its
// ledger entries (the refund of what no hold keeps), the TERMINATION
// transaction, the issuer's event claimed (t.EventID) and the events.
func (s *Cards) Terminate(ctx context.Context, t cards.Termination) error {
	c, tx := t.Card, t.Tx
	switch {
	case c.Status == cards.Terminated:
		return cards.ErrTerminated
	case !c.Status.Live():
		return cards.ErrNotActive
	case tx.CompanyID != c.CompanyID || tx.CardID != c.ID:
		return fmt.Errorf("store: card transaction %s is not of card %s", tx.ID, c.ID)
	case tx.CardDelta != -c.Available():
		return fmt.Errorf("store: termination %s of card %s takes %d, not the %d it has available", tx.ID, c.ID, -tx.CardDelta, c.Available())
	}
	u := store.NewAttrUpdate()
	u.Set("status", string(cards.Terminated))
	u.Set("balance", c.Held)
	u.Set("available", 0)
	u.Set("updated_at", timestamp.Format(t.Now))
	if c.Held > 0 {
		u.Set(schema.AttrGSI2PK, schema.OpenTerminationGSI2PK(c.ID))
		u.Set(schema.AttrGSI2SK, schema.OpenTerminationGSI2SK(timestamp.Format(t.Now), c.CompanyID, c.ID))
	}
	card, err := s.conditional(c.CompanyID, schema.CardSK(c.ID), u, "#cst = :from AND #cbal = :balance AND #cheld = :held",
		map[string]string{"#cst": "status", "#cbal": "balance", "#cheld": "held"},
		map[string]types.AttributeValue{":from": dynamo.Str(string(c.Status)), ":balance": dynamo.Num(c.Balance), ":held": dynamo.Num(c.Held)})
	if err != nil {
		return err
	}
	txPut, err := s.txPut(tx)
	if err != nil {
		return err
	}
	return s.db.Commit(ctx, "terminate card "+c.ID, func(ctx context.Context) (*store.Txn, error) {
		w := &store.Txn{}
		s.db.RecordEffect(ctx, w, tx.ID, nil)
		w.Add(schema.CardItem, card)
		w.Add("slots", s.slotsChange(c.CompanyID, -1, 0))
		w.Add(schema.CardTxItem, txPut)
		w.Creates(tx.ID)
		if t.EventID != "" {
			claim, err := attributevalue.MarshalMap(claimItem{
				PK: schema.CompanyPK(c.CompanyID), SK: schema.IssuerEventSK(t.EventID), Type: schema.KindIssuerEvent, CompanyID: c.CompanyID, Of: tx.ID,
			})
			if err != nil {
				return nil, fmt.Errorf("store: marshal issuer event claim: %w", err)
			}
			w.Add(schema.EventClaimItem, s.wallets.putNew(claim))
		}
		addEvents(w, t.Events)
		return w, s.addMoney(ctx, w, c.CompanyID, tx.WalletID, t.Wallet, t.Entries, t.Now, false)
	}, func(ctx context.Context, k dynamo.Cancellation) error {
		switch {
		case debtRaced(k):
			return dynamo.ErrRetry
		case k.Failed(schema.EventClaimItem):
			return cards.ErrEventApplied
		case k.Failed(schema.CardItem):
			return s.whyCardRefused(ctx, c.CompanyID, c.ID, func(cards.Card) error { return cards.ErrChanged })
		case k.Failed(schema.WalletItem):
			return s.whyWalletRefused(ctx, c.CompanyID, tx.WalletID)
		}
		return nil
	})
}

// SetStatus moves card id from status from to status to, setting is_locked
// and updated_at, in one conditional UpdateItem, and returns the card
// after. Both statuses must be live or neither: a move that takes or
// frees a slot is an Accept, a Settle or a Terminate.
func (s *Cards) SetStatus(ctx context.Context, companyID, id string, from, to cards.Status, locked bool, now time.Time) (cards.Card, error) {
	if from.Live() != to.Live() {
		return cards.Card{}, fmt.Errorf("store: card %s from %s to %s would change its slot", id, from, to)
	}
	u := store.NewAttrUpdate()
	u.Set("status", string(to))
	u.Set("is_locked", locked)
	u.Set("updated_at", timestamp.Format(now))
	expr, names, values, err := u.Build()
	if err != nil {
		return cards.Card{}, fmt.Errorf("store: set card status: %w", err)
	}
	names["#cst"], values[":from"] = "status", dynamo.Str(string(from))
	out, err := s.db.Update(ctx, fmt.Sprintf("move card %s from %s to %s", id, from, to), &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.db.Table),
		Key:                       dynamo.Key(schema.CompanyPK(companyID), schema.CardSK(id)),
		UpdateExpression:          aws.String(expr),
		ConditionExpression:       aws.String("#cst = :from"),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
		ReturnValues:              types.ReturnValueAllNew,
	})
	if dynamo.ConditionFailed(err) {
		return cards.Card{}, s.whyCardRefused(ctx, companyID, id, func(cards.Card) error { return cards.ErrChanged })
	}
	if err != nil {
		return cards.Card{}, err
	}
	var it cardItem
	if err := attributevalue.UnmarshalMap(out.Attributes, &it); err != nil {
		return cards.Card{}, fmt.Errorf("store: decode card %s: %w", id, err)
	}
	return it.card()
}

// addMoney adds to t the posting (Wallets.post) of the card transaction's
// money on its wallet: the wallet's adjustment by adj, when not zero (with
// active, also on the condition that the wallet is active), and the ledger
// entries, with the balances before and after each, in turn from the
// wallet read now. It is the last thing added to t. A credit to a USD
// wallet's payout balance first pays the company's pending debts, as many
// as the transaction has room for; the caller's refused func answers
// dynamo.ErrRetry on debtRaced.
func (s *Cards) addMoney(ctx context.Context, t *store.Txn, companyID, walletID string, adj wallets.Adjustment, entries []wallets.Transaction, now time.Time, active bool) error {
	if adj == (wallets.Adjustment{}) && len(entries) == 0 {
		return nil
	}
	p, err := wallets.NewPosting(companyID, now, wallets.Leg{WalletID: walletID, Adjust: adj, ActiveOnly: active, Entries: entries})
	if err != nil {
		return fmt.Errorf("store: card money on wallet %s: %w", walletID, err)
	}
	_, err = s.wallets.post(ctx, t, p)
	return err
}

// addEvents adds evs to t as items event<n>.
func addEvents(t *store.Txn, evs []events.Event) {
	for i, ev := range evs {
		t.AddEvent(schema.EventItem+strconv.Itoa(i), ev)
	}
}

// whyCardRefused tells why a condition on card id failed: the card is gone
// (cards.ErrNotFound) or why says, from the card as it is now.
func (s *Cards) whyCardRefused(ctx context.Context, companyID, id string, why func(cards.Card) error) error {
	c, err := s.Card(ctx, companyID, id)
	if err != nil {
		return err
	}
	return why(c)
}

// whyWalletRefused tells why a wallet adjustment without the active
// condition failed: the wallet is gone (wallets.ErrNotFound) or short of
// money (wallets.ErrInsufficientWalletBalance).
func (s *Cards) whyWalletRefused(ctx context.Context, companyID, walletID string) error {
	err := s.wallets.whyRefused(ctx, companyID, walletID)
	if errors.Is(err, wallets.ErrInsufficientBalance) {
		return wallets.ErrInsufficientWalletBalance
	}
	return err
}

// CardCompany returns the company of card id, from its lookup item,
// strongly consistent; cards.ErrNotFound when there is none.
func (s *Cards) CardCompany(ctx context.Context, id string) (string, error) {
	var it claimItem
	if err := s.db.Get(ctx, "card ref "+id, schema.CardRefPK(id), schema.CardRefSK, &it, cards.ErrNotFound); err != nil {
		return "", err
	}
	return it.CompanyID, nil
}
