package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/wallets"
)

// EventPutForTest exposes eventPut to the external tests.
var EventPutForTest = eventPut

// PutLedgerForTest writes entries as the ledger stores them, 25 to a
// BatchWriteItem, without touching their wallets: a fast way to fill a
// ledger for tests and benchmarks of the reads (the ledger invariant does
// not hold afterwards).
func PutLedgerForTest(ctx context.Context, db *DB, entries []wallets.Transaction) error {
	for len(entries) > 0 {
		n := min(len(entries), 25)
		var reqs []types.WriteRequest
		for _, e := range entries[:n] {
			item, err := attributevalue.MarshalMap(newLedgerItem(e))
			if err != nil {
				return err
			}
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
		}
		pending := map[string][]types.WriteRequest{db.Table: reqs}
		for len(pending) > 0 {
			out, err := db.Client.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: pending})
			if err != nil {
				return err
			}
			pending = out.UnprocessedItems
		}
		entries = entries[n:]
	}
	return nil
}
