package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"payments/pkg/store/schema"
)

// ConflictSimulation is a simulation, for DynamoDB Local, of how DynamoDB
// cancels a transaction that touches an item another transaction is
// writing: DynamoDB Local runs transactions one at a time and never
// cancels one with a TransactionConflict. Registered on a client
// (APIOptions), it keeps the keys of every TransactWriteItems in flight
// through that client; a TransactWriteItems that touches one of them fails
// at once, without reaching the emulator, with the
// TransactionCanceledException DynamoDB answers (reason
// TransactionConflict on the items that collided, None on the others).
// The first transaction holds an item from the moment it is sent until its
// answer arrives, so the window is longer than DynamoDB's own (which holds
// the item only while its coordinator writes): the rates it gives are an
// upper bound. It is for the load test only.
type ConflictSimulation struct {
	mu       sync.Mutex
	inFlight map[string]bool
	// Attempts counts the TransactWriteItems seen, Conflicts those it
	// cancelled.
	Attempts, Conflicts atomic.Int64
}

// NewConflictSimulation returns a simulation with nothing in flight.
func NewConflictSimulation() *ConflictSimulation {
	return &ConflictSimulation{inFlight: map[string]bool{}}
}

// Register adds the simulation to a client's middleware stack: pass it in
// dynamodb.Options.APIOptions.
func (s *ConflictSimulation) Register(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("simulateTransactionConflicts", s.handle), middleware.After)
}

func (s *ConflictSimulation) handle(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
	tx, ok := in.Parameters.(*dynamodb.TransactWriteItemsInput)
	if !ok {
		return next.HandleInitialize(ctx, in)
	}
	s.Attempts.Add(1)
	keys := make([]string, len(tx.TransactItems))
	for i, it := range tx.TransactItems {
		keys[i] = itemKey(it)
	}
	s.mu.Lock()
	var reasons []types.CancellationReason
	for i, k := range keys {
		if s.inFlight[k] {
			if reasons == nil {
				reasons = make([]types.CancellationReason, len(keys))
				for j := range reasons {
					reasons[j].Code = aws.String("None")
				}
			}
			reasons[i].Code = aws.String("TransactionConflict")
		}
	}
	if reasons == nil {
		for _, k := range keys {
			s.inFlight[k] = true
		}
	}
	s.mu.Unlock()
	if reasons != nil {
		s.Conflicts.Add(1)
		return middleware.InitializeOutput{}, middleware.Metadata{}, &types.TransactionCanceledException{
			Message:             aws.String("Transaction cancelled, please refer cancellation reasons for specific reasons [TransactionConflict] (simulated)"),
			CancellationReasons: reasons,
		}
	}
	defer func() {
		s.mu.Lock()
		for _, k := range keys {
			delete(s.inFlight, k)
		}
		s.mu.Unlock()
	}()
	return next.HandleInitialize(ctx, in)
}

// itemKey names the item a transaction item writes or checks: its table
// and primary key.
func itemKey(it types.TransactWriteItem) string {
	var table *string
	var key map[string]types.AttributeValue
	switch {
	case it.Put != nil:
		table, key = it.Put.TableName, it.Put.Item
	case it.Update != nil:
		table, key = it.Update.TableName, it.Update.Key
	case it.Delete != nil:
		table, key = it.Delete.TableName, it.Delete.Key
	case it.ConditionCheck != nil:
		table, key = it.ConditionCheck.TableName, it.ConditionCheck.Key
	}
	return aws.ToString(table) + "\x00" + attrString(key["PK"]) + "\x00" + attrString(key["SK"])
}

// attrString returns a key attribute's value as text.
func attrString(v types.AttributeValue) string {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return v.Value
	case *types.AttributeValueMemberN:
		return v.Value
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

// SubItemSK is the sort key of sub-item k of the wallet whose item has
// sort key walletSK, in the prototype of the split wallet. It does not
// start with schema.WalletSKPrefix, so listing a company's wallets never
// sees it. The store writes no such item: the key belongs to the
// prototype, not to the table's schema.
func SubItemSK(walletSK string, k int) string {
	return fmt.Sprintf("WALLETSUB#%s#%02d", strings.TrimPrefix(walletSK, schema.WalletSKPrefix), k)
}

// SubItems is the prototype of the split wallet (docs/scaling.md) for the
// load test: the payout_available of a wallet is split across N sub-items
// and each reservation takes from one of them. It moves the wallet's
// Update of each TransactWriteItems (the one item whose sort key starts
// with WALLET#) to a sub-item of that wallet, leaving the rest of the
// transaction — the very one store.CreatePayout builds — as it is.
// Registered before a ConflictSimulation, the simulation sees the
// sub-item's key.
type SubItems struct {
	// N is the number of sub-items of each wallet.
	N int
	// Sticky keeps each client on the sub-item it used last, picking
	// another at random only after a conflict (as a Lambda execution
	// environment, which serves one request at a time, would keep its
	// choice); otherwise every attempt picks one at random. A client is
	// the context of WithClient.
	Sticky bool
}

// clientKey is the context key of a client's state.
type clientKey struct{}

// clientState is what one client of the load test keeps between calls.
type clientState struct {
	// subItem is the sub-item it used last, -1 before the first.
	subItem int
}

// WithClient returns ctx for the calls of one client (one goroutine),
// which SubItems.Sticky keeps on its sub-item.
func WithClient(ctx context.Context) context.Context {
	return context.WithValue(ctx, clientKey{}, &clientState{subItem: -1})
}

// Register adds the rewrite to a client's middleware stack.
func (s SubItems) Register(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("walletSubItems",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			tx, ok := in.Parameters.(*dynamodb.TransactWriteItemsInput)
			if !ok {
				return next.HandleInitialize(ctx, in)
			}
			c, _ := ctx.Value(clientKey{}).(*clientState)
			k := rand.IntN(s.N)
			if s.Sticky && c != nil {
				if c.subItem < 0 {
					c.subItem = k
				}
				k = c.subItem
			}
			in.Parameters = s.rewrite(tx, k)
			out, md, err := next.HandleInitialize(ctx, in)
			if c != nil && conflicted(err) {
				c.subItem = -1 // pick again
			}
			return out, md, err
		}), middleware.Before)
}

// conflicted reports whether err cancelled a transaction for a conflict.
func conflicted(err error) bool {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		return false
	}
	for _, r := range tce.CancellationReasons {
		if aws.ToString(r.Code) == "TransactionConflict" {
			return true
		}
	}
	return false
}

// rewrite returns tx with the wallet's Update moved to sub-item k; tx is
// not changed.
func (s SubItems) rewrite(tx *dynamodb.TransactWriteItemsInput, k int) *dynamodb.TransactWriteItemsInput {
	out := *tx
	out.TransactItems = append([]types.TransactWriteItem(nil), tx.TransactItems...)
	for i, it := range out.TransactItems {
		if it.Update == nil {
			continue
		}
		sk := attrString(it.Update.Key["SK"])
		if !strings.HasPrefix(sk, schema.WalletSKPrefix) {
			continue
		}
		u := *it.Update
		u.Key = map[string]types.AttributeValue{
			"PK": it.Update.Key["PK"],
			"SK": &types.AttributeValueMemberS{Value: SubItemSK(sk, k)},
		}
		out.TransactItems[i] = types.TransactWriteItem{Update: &u}
	}
	return &out
}

// ItemSize returns the size DynamoDB bills for item: the UTF-8 length of
// each attribute name plus its value's size (a string's UTF-8 length, a
// number's about 1 byte per 2 significant digits plus 1, 1 for a boolean
// or null, 3 per list or map plus its elements).
func ItemSize(item map[string]types.AttributeValue) int {
	n := 0
	for name, v := range item {
		n += len(name) + valueSize(v)
	}
	return n
}

func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		digits := strings.TrimLeft(strings.NewReplacer("-", "", ".", "").Replace(v.Value), "0")
		return (len(digits)+1)/2 + 1
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range v.Value {
			n += 1 + len(k) + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n
	}
	return 0
}

// TransactWriteUnits returns the write capacity units a transactional
// write of an item of size bytes costs: 2 per started KB.
func TransactWriteUnits(size int) int {
	return 2 * max(1, (size+1023)/1024)
}
