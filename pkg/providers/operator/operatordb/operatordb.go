// Package operatordb is the sandbox operator's own store
// (operatorsandbox.Store) in DynamoDB: the simulated operator keeps its
// orders in partitions of its own, as a remote operator would.
package operatordb

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"payments/pkg/providers/operator"
	"payments/pkg/providers/operator/operatorsandbox"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
	"payments/pkg/timestamp"
)

// Store keeps the sandbox operator's orders, in partitions of
// their own (SANDBOX#OPERATOR#<our reference>) that none of our records
// share: the simulated operator's state stays apart from ours, as a remote
// operator's would.
type Store struct{ db *dynamo.DB }

var _ operatorsandbox.Store = (*Store)(nil)

// New returns the sandbox operator's store on db.
func New(db *dynamo.DB) *Store { return &Store{db: db} }

type sandboxOrderItem struct {
	PK          string `dynamodbav:"PK"`
	SK          string `dynamodbav:"SK"`
	Type        string `dynamodbav:"type"`
	OrderID     string `dynamodbav:"order_id"`
	Reference   string `dynamodbav:"reference"`
	Kind        string `dynamodbav:"kind"`
	PhoneNumber string `dynamodbav:"phone_number"`
	Amount      int64  `dynamodbav:"amount"`
	Currency    string `dynamodbav:"currency"`
	Outcome     string `dynamodbav:"outcome"`
	CreatedAt   string `dynamodbav:"created_at"`
}

func (it sandboxOrderItem) order() (operatorsandbox.Order, error) {
	at, err := timestamp.Parse(it.CreatedAt)
	if err != nil {
		return operatorsandbox.Order{}, fmt.Errorf("store: sandbox order %s: %w", it.OrderID, err)
	}
	return operatorsandbox.Order{
		OrderID: it.OrderID, Reference: it.Reference, Kind: operator.Kind(it.Kind), PhoneNumber: it.PhoneNumber,
		Amount: it.Amount, Currency: it.Currency, Outcome: it.Outcome, CreatedAt: at,
	}, nil
}

// PutOrder records o unless its reference has an order, and returns the
// order of the reference.
func (s *Store) PutOrder(ctx context.Context, o operatorsandbox.Order) (operatorsandbox.Order, error) {
	item, err := attributevalue.MarshalMap(sandboxOrderItem{
		PK: schema.SandboxOrderPK(o.Reference), SK: schema.SandboxOrderSK, Type: schema.KindSandboxOrder,
		OrderID: o.OrderID, Reference: o.Reference, Kind: string(o.Kind), PhoneNumber: o.PhoneNumber,
		Amount: o.Amount, Currency: o.Currency, Outcome: o.Outcome, CreatedAt: timestamp.Format(o.CreatedAt),
	})
	if err != nil {
		return operatorsandbox.Order{}, fmt.Errorf("store: marshal sandbox order: %w", err)
	}
	err = s.db.Put(ctx, "put sandbox order "+o.Reference, &dynamodb.PutItemInput{
		TableName: aws.String(s.db.Table), Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)"),
	})
	switch {
	case dynamo.ConditionFailed(err):
		return s.Order(ctx, o.Reference)
	case err != nil:
		return operatorsandbox.Order{}, err
	}
	return o, nil
}

// Order returns the order with our reference ref, strongly consistent.
func (s *Store) Order(ctx context.Context, ref string) (operatorsandbox.Order, error) {
	var it sandboxOrderItem
	if err := s.db.Get(ctx, "sandbox order "+ref, schema.SandboxOrderPK(ref), schema.SandboxOrderSK, &it, operator.ErrNotFound); err != nil {
		return operatorsandbox.Order{}, err
	}
	return it.order()
}
