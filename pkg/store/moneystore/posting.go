package moneystore

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/debts"
	"payments/pkg/store"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
	"payments/pkg/timestamp"
	"payments/pkg/wallets"
)

// posted is a leg of a posting as written: the wallet after it (as read
// just before the write, adjusted; zero when the leg needed no read) and
// its entries and updates with the balances before and after them.
type posted struct {
	After   wallets.Wallet
	Entries []wallets.Transaction
	// Balances holds, for each entry update, the balances before
	// and after it (nil when it moves no balance).
	Balances [][2]*int64
}

// post adds posting p to t, the one way money is written, and returns
// each leg as written. For each leg, in order:
//
//   - the wallet's adjustment (walletAdjustment), named schema.WalletLegItem(i), when
//     the leg's adjustment is not zero, activeOnly when the leg asks;
//   - its new entries, named "entry<n>" across the posting (ledgerPut),
//     its entry updates, named "updated<n>" (entryUpdate), and its draws,
//     named "draw<n>" (entryDraw); entries and updates each with
//     the balances before and after it in turn from the wallet as read
//     just before the write when it records them (see wallets.Leg);
//   - when it credits the payout balance of a USD wallet, the payment of
//     the company's pending debts out of that credit (recoverDebts), as
//     many as the transaction has room for: their FEE entries,
//     named "fee<n>", whose balances follow the leg's own entries, and
//     their debt.recovered events, named "debtevent<n>" (store.Txn.AddEvent),
//     which the outbox sweeper publishes. The wallet is adjusted by the credit less what
//     the debts took.
//
// The wallet's read is strongly consistent and made just before the
// write; the write is not conditioned on the balances being unchanged
// (that would make every write to a wallet wait for every other), so when
// another write to the same sub-balance commits in between, the balances
// an entry records are off by that write. The balances themselves, and
// the sums the ledger invariant checks, are always exact.
//
// A posting is the last thing added to t, so that the room it leaves for
// debts is counted here, once, from the items t holds: the caller adds
// its own items (the payment, the card, the event, the effect of an
// Idempotency-Key) first. The wallet is read when the leg records
// balances or credits the payout balance. The caller's refused func
// answers dynamo.ErrRetry on debtRaced, so that the transaction is built again
// from fresh reads.
func (s *Wallets) post(ctx context.Context, t *store.Txn, p wallets.Posting) ([]posted, error) {
	own := 0
	for _, l := range p.Legs {
		own += len(l.Entries) + len(l.Updates) + len(l.Draws)
		if l.Adjust != (wallets.Adjustment{}) {
			own++
		}
	}
	// The posting's items join t at the end, so that the room left for
	// debts is counted once: t as it was (with the events of the debts
	// paid so far, which join t at once), the posting's own items, and the
	// FEE entries of those debts.
	var items []namedItem
	add := func(name string, n int, item types.TransactWriteItem) {
		items = append(items, namedItem{schema.Nth(name, n), item})
	}
	out := make([]posted, len(p.Legs))
	entryN, updatedN, drawN, feeN, eventN := 0, 0, 0, 0, 0
	for i, l := range p.Legs {
		var w wallets.Wallet
		if needsRead(l) {
			var err error
			if w, err = s.GetWallet(ctx, p.CompanyID, l.WalletID); err != nil {
				return nil, err
			}
		}
		balance := map[wallets.SubBalance]int64{wallets.Payin: w.PayinBalance, wallets.Payout: w.PayoutBalance}
		step := func(b wallets.SubBalance, delta int64) (before, after *int64) {
			v, next := balance[b], balance[b]+delta
			balance[b] = next
			return &v, &next
		}
		for _, e := range l.Entries {
			if !e.Open() {
				e.BalanceBefore, e.BalanceAfter = step(e.Balance, e.Delta)
			}
			item, err := s.ledgerPut(e)
			if err != nil {
				return nil, err
			}
			add(schema.EntryItems, entryN, item)
			entryN++
			out[i].Entries = append(out[i].Entries, e)
		}
		for _, u := range l.Updates {
			var before, after *int64
			if u.Delta != 0 {
				before, after = step(u.Balance, u.Delta)
			}
			out[i].Balances = append(out[i].Balances, [2]*int64{before, after})
			add(schema.UpdatedItems, updatedN, s.entryUpdate(p.CompanyID, u, before, after))
			updatedN++
		}
		for _, d := range l.Draws {
			add(schema.DrawItems, drawN, s.entryDraw(p.CompanyID, d))
			drawN++
		}
		adj := l.Adjust
		if adj.Payout > 0 && w.Currency == debts.Currency {
			recovered, fees, evs, err := s.recoverDebts(ctx, t, p.CompanyID, w.ID, adj.Payout, own+feeN, p.Now)
			if err != nil {
				return nil, err
			}
			adj.Payout -= recovered
			for _, e := range fees {
				e.BalanceBefore, e.BalanceAfter = step(e.Balance, e.Delta)
				item, err := s.ledgerPut(e)
				if err != nil {
					return nil, err
				}
				add(schema.FeeItems, feeN, item)
				feeN++
			}
			for _, ev := range evs {
				t.AddEvent(schema.Nth(schema.DebtEventItems, eventN), ev)
				eventN++
			}
		}
		if l.Adjust != (wallets.Adjustment{}) {
			item := s.walletAdjustment(p.CompanyID, l.WalletID, adj, p.Now)
			if l.ActiveOnly {
				item = activeOnly(item)
			}
			items = append(items, namedItem{schema.WalletLegItem(i), item})
		}
		out[i].After = w.Adjusted(adj, p.Now)
	}
	for _, it := range items {
		t.Add(it.name, it.item)
	}
	return out, nil
}

// namedItem is a transaction item and its name.
type namedItem struct {
	name string
	item types.TransactWriteItem
}

// needsRead reports whether leg l reads its wallet: it records balances
// or credits the payout balance (which may pay debts).
func needsRead(l wallets.Leg) bool {
	if l.Adjust.Payout > 0 {
		return true
	}
	for _, e := range l.Entries {
		if !e.Open() {
			return true
		}
	}
	for _, u := range l.Updates {
		if u.Delta != 0 {
			return true
		}
	}
	return false
}

// entryUpdate returns the transaction item that moves the open ledger
// entry of u from u.From to u.To, with its delta, reservation, order id
// (when set), the balances around it (when not nil) and completion (when
// set), out of the open-funding index, on the condition that it is still
// u.From and holds u.Held: the reservation the adjustment releases is the
// one the entry held (a bulk batch's entry closes holding nothing).
func (s *Wallets) entryUpdate(companyID string, u wallets.EntryUpdate, before, after *int64) types.TransactWriteItem {
	names := map[string]string{"#st": "status", "#delta": "delta", "#res": "reserved"}
	values := map[string]types.AttributeValue{
		":from": dynamo.Str(string(u.From)), ":to": dynamo.Str(string(u.To)), ":delta": dynamo.Num(u.Delta), ":res": dynamo.Num(u.Reserved),
		":held": dynamo.Num(u.Held),
	}
	set := []string{"#st = :to", "#delta = :delta", "#res = :res"}
	add := func(attr, placeholder string, v types.AttributeValue) {
		names["#"+placeholder] = attr
		values[":"+placeholder] = v
		set = append(set, "#"+placeholder+" = :"+placeholder)
	}
	if u.OrderID != "" {
		add("order_id", "order", dynamo.Str(u.OrderID))
	}
	if before != nil && after != nil {
		add("wallet_balance_before", "before", dynamo.Num(*before))
		add("wallet_balance_after", "after", dynamo.Num(*after))
	}
	if u.CompletedAt != nil {
		add("completed_at", "done", dynamo.Str(timestamp.Format(*u.CompletedAt)))
	}
	return types.TransactWriteItem{Update: &types.Update{
		TableName:                 aws.String(s.db.Table),
		Key:                       dynamo.Key(schema.CompanyPK(companyID), schema.LedgerSK(u.ID)),
		UpdateExpression:          aws.String("SET " + strings.Join(set, ", ") + " REMOVE " + schema.AttrGSI2PK + ", " + schema.AttrGSI2SK),
		ConditionExpression:       aws.String("#st = :from AND #res = :held"),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	}}
}

// entryDraw returns the transaction item that takes d.Amount out of what
// the open entry d.ID holds in payout_reserved, on the condition that it is
// still PENDING and holds at least that much.
func (s *Wallets) entryDraw(companyID string, d wallets.EntryDraw) types.TransactWriteItem {
	return types.TransactWriteItem{Update: &types.Update{
		TableName:                aws.String(s.db.Table),
		Key:                      dynamo.Key(schema.CompanyPK(companyID), schema.LedgerSK(d.ID)),
		UpdateExpression:         aws.String("SET #res = #res - :amount"),
		ConditionExpression:      aws.String("#st = :pending AND #res >= :amount"),
		ExpressionAttributeNames: map[string]string{"#st": "status", "#res": "reserved"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pending": dynamo.Str(string(wallets.StatusPending)), ":amount": dynamo.Num(d.Amount),
		},
	}}
}
