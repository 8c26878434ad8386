package dynamo_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"payments/pkg/contention"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/storetest"
)

type thing struct {
	PK   string `dynamodbav:"PK"`
	SK   string `dynamodbav:"SK"`
	Name string `dynamodbav:"name"`
}

var errNoThing = errors.New("no such thing")

// TestGetAnswersTheCallersSentinel: Get decodes an item that exists and
// answers a missing one with the sentinel it is given; Find tells the two
// apart without one.
func TestGetAnswersTheCallersSentinel(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t).DB
	pk := "TEST#" + uuid.NewString()
	err := db.Put(ctx, "put thing", &dynamodb.PutItemInput{TableName: aws.String(db.Table), Item: map[string]types.AttributeValue{
		"PK": dynamo.Str(pk), "SK": dynamo.Str("THING"), "name": dynamo.Str("kettle"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		sk    string
		want  error
		found bool
		name  string
	}{
		{"THING", nil, true, "kettle"},
		{"NOTHING", errNoThing, false, ""},
	}
	for _, tt := range tests {
		var got thing
		if err := db.Get(ctx, "thing", pk, tt.sk, &got, errNoThing); err != tt.want || got.Name != tt.name {
			t.Errorf("Get %s: %+v, %v; want name %q, %v", tt.sk, got, err, tt.name, tt.want)
		}
		var again thing
		found, err := db.Find(ctx, pk, tt.sk, &again)
		if err != nil || found != tt.found || again.Name != tt.name {
			t.Errorf("Find %s: %+v, %v, %v; want name %q, %v", tt.sk, again, found, err, tt.name, tt.found)
		}
	}
}

// TestWriteKeepsToTheItemBudget: a transaction past the DB's item budget
// is refused before it is sent (this DB has no client to send it with).
func TestWriteKeepsToTheItemBudget(t *testing.T) {
	db := &dynamo.DB{Table: "t", Retry: contention.Policy{Attempts: 1}, MaxTransactItems: 2}
	tx := &dynamo.Txn{}
	for _, name := range []string{"a", "b", "c"} {
		tx.Add(name, types.TransactWriteItem{Put: &types.Put{TableName: aws.String("t"), Item: dynamo.Key(name, name)}})
	}
	if tx.Len() != 3 || tx.Item("b") == nil || tx.Item("d") != nil {
		t.Fatalf("Len %d, Item(b) %v, Item(d) %v", tx.Len(), tx.Item("b"), tx.Item("d"))
	}
	err := db.WriteOnce(context.Background(), "write three", tx, func(context.Context, dynamo.Cancellation) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "past the budget of 2") {
		t.Fatalf("err %v, want the budget of 2 named", err)
	}
}
