package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"payments/pkg/contention"
	"payments/pkg/store"
	"payments/pkg/store/schema"
)

// conflicts runs the conflict scenarios on the hot wallet's deployment
// and prints their table and the payout transaction's items.
func conflicts(ctx context.Context, d *deployment, o options, out io.Writer) error {
	ws, err := d.setUp(ctx, 1)
	if err != nil {
		return err
	}
	w := ws[0]
	if err := splitWallet(ctx, d.db(), w, o.subItems); err != nil {
		return err
	}
	var rs []Result
	var sample *dynamodb.TransactWriteItemsInput
	for _, design := range []struct {
		name    string
		sub     *SubItems
		clients int
	}{
		{"one wallet item (CreatePayout as it is)", nil, o.conflictClients},
		{fmt.Sprintf("%d sub-items, random pick (prototype)", o.subItems), &SubItems{N: o.subItems}, o.conflictClients},
		{fmt.Sprintf("%d sub-items, sticky pick (prototype)", o.subItems), &SubItems{N: o.subItems, Sticky: true}, o.conflictClients},
		{fmt.Sprintf("%d sub-items, sticky pick, %d clients (prototype)", o.subItems, 3*o.conflictClients), &SubItems{N: o.subItems, Sticky: true}, 3 * o.conflictClients},
	} {
		sim := NewConflictSimulation()
		opts := []func(*middleware.Stack) error{sim.Register}
		name := design.name
		if design.sub != nil {
			opts = append(opts, design.sub.Register)
		} else {
			opts = append(opts, captureFirst(&sample))
		}
		fmt.Fprintf(os.Stderr, "loadtest: conflicts, %s…\n", name)
		r := direct(ctx, d.db(opts...), ws, design.clients, o.conflictDuration)
		r.Name, r.Attempts, r.Conflicts = name, sim.Attempts.Load(), sim.Conflicts.Load()
		rs = append(rs, r)
	}
	fmt.Fprintf(out, "\nSimulated transaction conflicts, one wallet, %d clients unless told, %s each, the store's retry policy (%d tries):\n\n",
		o.conflictClients, o.conflictDuration, contention.Retry.Attempts)
	writeConflictTable(out, rs)
	if sample != nil {
		return writeItems(ctx, d, sample, out)
	}
	return nil
}

// splitWallet writes the n sub-items of w's wallet for the SubItems
// prototype, each with 1/n of its payout_available.
func splitWallet(ctx context.Context, db *store.DB, w wallet, n int) error {
	key := map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: schema.CompanyPK(w.company)},
		"SK": &types.AttributeValueMemberS{Value: schema.WalletSK(w.id)},
	}
	got, err := db.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(db.Table), Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil || got.Item == nil {
		return fmt.Errorf("read wallet %s: %v", w.id, err)
	}
	share := strconv.Itoa(funding / n)
	for k := range n {
		item := map[string]types.AttributeValue{
			"PK": key["PK"], "SK": &types.AttributeValueMemberS{Value: SubItemSK(schema.WalletSK(w.id), k)},
			"payin_balance": &types.AttributeValueMemberN{Value: "0"}, "payout_balance": &types.AttributeValueMemberN{Value: share},
			"payout_reserved": &types.AttributeValueMemberN{Value: "0"}, "payout_available": &types.AttributeValueMemberN{Value: share},
			"version": &types.AttributeValueMemberN{Value: "0"}, "is_active": &types.AttributeValueMemberBOOL{Value: true},
			"updated_at": got.Item["updated_at"],
		}
		if _, err := db.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(db.Table), Item: item}); err != nil {
			return fmt.Errorf("write sub-item %d: %w", k, err)
		}
	}
	return nil
}

// captureFirst returns a middleware that keeps the first
// TransactWriteItems input it sees in *dst.
func captureFirst(dst **dynamodb.TransactWriteItemsInput) func(*middleware.Stack) error {
	var once atomic.Bool
	return func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("captureTransaction",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				if tx, ok := in.Parameters.(*dynamodb.TransactWriteItemsInput); ok && once.CompareAndSwap(false, true) {
					*dst = tx
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.Before)
	}
}

// writeItems prints the items of a payout's transaction with their sizes
// and the write units a transactional write of each costs; the wallet's
// size is read from the table.
func writeItems(ctx context.Context, d *deployment, tx *dynamodb.TransactWriteItemsInput, out io.Writer) error {
	db := d.db()
	fmt.Fprintln(out, "\nThe items of one payout's TransactWriteItems:")
	fmt.Fprintln(out)
	fmt.Fprintln(out, "| item | sort key | size | write units |")
	fmt.Fprintln(out, "|---|---|---:|---:|")
	total := 0
	for _, it := range tx.TransactItems {
		var item map[string]types.AttributeValue
		what := "put"
		switch {
		case it.Put != nil:
			item = it.Put.Item
		case it.Update != nil:
			what = "update"
			got, err := db.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(db.Table), Key: it.Update.Key})
			if err != nil {
				return err
			}
			item = got.Item
		}
		sk := attrString(item["SK"])
		if i := strings.IndexAny(sk, "#"); i >= 0 {
			sk = sk[:i+1] + "…"
		}
		size := ItemSize(item)
		wcu := TransactWriteUnits(size)
		total += wcu
		fmt.Fprintf(out, "| %s %s | `%s` | %d B | %d |\n", what, attrString(item["type"]), sk, size, wcu)
	}
	fmt.Fprintf(out, "| total | | | %d |\n", total)
	return nil
}
