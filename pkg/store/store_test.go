package store_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"payments/pkg/store"
)

// TestMaxTransactItems: a DB on DynamoDB Local (a client with an endpoint
// of its own) keeps its transactions to 10 items, one on DynamoDB to 100.
func TestMaxTransactItems(t *testing.T) {
	cfg := aws.Config{Region: "us-east-1"}
	if n := store.New(store.NewClient(cfg, ""), "t").MaxTransactItems; n != 100 {
		t.Errorf("DynamoDB: %d items", n)
	}
	if n := store.New(store.NewClient(cfg, "http://127.0.0.1:8000"), "t").MaxTransactItems; n != 10 {
		t.Errorf("DynamoDB Local: %d items", n)
	}
}
