package moneystore

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/cards"
	"payments/pkg/debts"
	"payments/pkg/store"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
	"payments/pkg/wallets"
)

// AddDebtForTest writes the new pending debt d in a transaction of its
// own, with addDebt, as the card fee code adds one inside its own.
func AddDebtForTest(ctx context.Context, db *store.DB, d debts.Debt) error {
	t := &store.Txn{}
	if err := addDebt(t, db.Table, d); err != nil {
		return err
	}
	return db.CommitOnce(ctx, "add debt "+d.ID, t, func(context.Context, dynamo.Cancellation) error { return nil })
}

// PutLedgerForTest writes entries as the ledger stores them, 25 to a
// BatchWriteItem, without touching their wallets: a fast way to fill a
// ledger for tests and benchmarks of the reads (the ledger invariant does
// not hold afterwards).
func PutLedgerForTest(ctx context.Context, db *store.DB, entries []wallets.Transaction) error {
	return putAllForTest(ctx, db, entries, newLedgerItem)
}

// PutCardTransactionsForTest writes card transactions as the card store
// does, without touching their cards or wallets: for tests of the lists.
func PutCardTransactionsForTest(ctx context.Context, db *store.DB, txs []cards.Transaction) error {
	return putAllForTest(ctx, db, txs, newCardTxItem)
}

// putAllForTest writes the items of vs, 25 to a BatchWriteItem.
func putAllForTest[V, I any](ctx context.Context, db *store.DB, vs []V, item func(V) I) error {
	for len(vs) > 0 {
		n := min(len(vs), 25)
		var reqs []types.WriteRequest
		for _, v := range vs[:n] {
			av, err := attributevalue.MarshalMap(item(v))
			if err != nil {
				return err
			}
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: av}})
		}
		pending := map[string][]types.WriteRequest{db.Table: reqs}
		for len(pending) > 0 {
			out, err := db.Client.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: pending})
			if err != nil {
				return err
			}
			pending = out.UnprocessedItems
		}
		vs = vs[n:]
	}
	return nil
}

// SequenceForTest returns the number of the last event about object of
// the company, from its counter (0 when it has none).
func SequenceForTest(ctx context.Context, db *store.DB, companyID, object string) (int64, error) {
	var it struct {
		Seq int64 `dynamodbav:"seq"`
	}
	_, err := db.Find(ctx, schema.CompanyPK(companyID), schema.SequenceSK(object), &it)
	return it.Seq, err
}
