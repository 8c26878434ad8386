// Package storetest gives tests a fresh table in DynamoDB Local and a fresh
// bucket in the S3 emulator, or, in a `go test -short` run (make
// test-unit), in an in-memory DynamoDB and S3 in the test process.
//
// The emulators' addresses come from AWS_ENDPOINT_URL_DYNAMODB and
// AWS_ENDPOINT_URL_S3, which `make test` sets after starting the local
// stack. A test that needs them fails, not skips, when they are not there.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"

	"payments/pkg/documents"
	"payments/pkg/store"
)

// Endpoint returns the DynamoDB Local address, failing t when it is unset;
// in -short runs, the in-memory DynamoDB's (MemoryDynamoDB).
func Endpoint(t testing.TB) string {
	t.Helper()
	if inMemory() {
		MemoryDynamoDB()
	}
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

// WithConflicts returns a DB on db's table whose first n TransactWriteItems
// calls are cancelled with a TransactionConflict reason (DynamoDB Local
// never raises one) without reaching the emulator, and the count of its
// TransactWriteItems calls. Its retry policy does not wait.
func WithConflicts(db *store.DB, n int64) (*store.DB, *atomic.Int64) {
	calls := new(atomic.Int64)
	inject := func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("injectConflict",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				tx, ok := in.Parameters.(*dynamodb.TransactWriteItemsInput)
				if !ok {
					return next.HandleInitialize(ctx, in)
				}
				if calls.Add(1) > n {
					return next.HandleInitialize(ctx, in)
				}
				reasons := make([]types.CancellationReason, len(tx.TransactItems))
				for i := range reasons {
					reasons[i].Code = aws.String("None")
				}
				reasons[len(reasons)-1].Code = aws.String("TransactionConflict")
				return middleware.InitializeOutput{}, middleware.Metadata{}, &types.TransactionCanceledException{
					Message: aws.String("Transaction cancelled (injected)"), CancellationReasons: reasons,
				}
			}), middleware.Before)
	}
	client := dynamodb.New(db.Client.Options(), func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, inject) })
	out := store.New(client, db.Table)
	out.Retry.Base, out.Retry.Max = 0, 0
	return out, calls
}

// DistinctGSI2Partitions scans db's table and returns how many distinct
// GSI2PK values that start with prefix its items use. The prefix is
// matched here, not by a FilterExpression: the in-memory DynamoDB refuses
// begins_with on an item without the attribute.
func DistinctGSI2Partitions(t testing.TB, db *store.DB, prefix string) int {
	t.Helper()
	seen := map[string]bool{}
	p := dynamodb.NewScanPaginator(db.Client, &dynamodb.ScanInput{
		TableName:            aws.String(db.Table),
		ProjectionExpression: aws.String("GSI2PK"),
	})
	for p.HasMorePages() {
		out, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range out.Items {
			if v, ok := item["GSI2PK"].(*types.AttributeValueMemberS); ok && strings.HasPrefix(v.Value, prefix) {
				seen[v.Value] = true
			}
		}
	}
	return len(seen)
}

// S3Endpoint returns the S3 emulator's address, failing t when it is unset;
// in -short runs, the in-memory S3's (MemoryS3).
func S3Endpoint(t testing.TB) string {
	t.Helper()
	if inMemory() {
		MemoryS3()
	}
	ep := os.Getenv("AWS_ENDPOINT_URL_S3")
	if ep == "" {
		t.Fatal("AWS_ENDPOINT_URL_S3 is not set: run the tests with `make test`, which starts the S3 emulator")
	}
	return ep
}

// S3Client returns a client of the S3 emulator.
func S3Client(t testing.TB) *s3.Client {
	return documents.NewClient(AWSConfig(), S3Endpoint(t))
}

// NewBucket creates a bucket with a unique name in the S3 emulator and
// returns its name; its objects and the bucket are deleted when the test
// ends.
func NewBucket(t testing.TB) string {
	t.Helper()
	c := S3Client(t)
	name := "test-" + RandomSuffix()
	if _, err := c.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("create test bucket: %v", err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String(name)})
		for p.HasMorePages() {
			out, err := p.NextPage(ctx)
			if err != nil {
				return
			}
			for _, o := range out.Contents {
				c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(name), Key: o.Key})
			}
		}
		c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(name)})
	})
	return name
}
