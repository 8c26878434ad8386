// Package storetest gives tests a fresh table in DynamoDB Local.
//
// The emulator's address comes from AWS_ENDPOINT_URL_DYNAMODB, which
// `make test` sets after starting the local stack. A test that needs the
// table fails, not skips, when the emulator is not there.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"payments/pkg/store"
)

// Endpoint returns the DynamoDB Local address, failing t when it is unset.
func Endpoint(t testing.TB) string {
	t.Helper()
	ep := os.Getenv("AWS_ENDPOINT_URL_DYNAMODB")
	if ep == "" {
		t.Fatal("AWS_ENDPOINT_URL_DYNAMODB is not set: run the tests with `make test`, which starts DynamoDB Local")
	}
	return ep
}

// AWSConfig returns the static configuration used against the emulators.
func AWSConfig() aws.Config {
	return aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
	}
}

// Client returns a DynamoDB client for the emulator.
func Client(t testing.TB) *dynamodb.Client {
	return store.NewClient(AWSConfig(), Endpoint(t))
}

// NewDB creates a table with a unique name from store.TableDefinition and
// deletes it when the test ends.
func NewDB(t testing.TB) *store.DB {
	t.Helper()
	db := store.New(Client(t), "test-"+RandomSuffix())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := db.CreateTable(ctx); err != nil {
		t.Fatalf("create test table: %v", err)
	}
	t.Cleanup(func() {
		db.Client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(db.Table)})
	})
	return db
}

// RandomSuffix returns 12 random hex characters for unique resource names.
func RandomSuffix() string {
	b := make([]byte, 6)
	rand.Read(b)
	return hex.EncodeToString(b)
}
