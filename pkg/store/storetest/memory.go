package storetest

import (
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/truora/minidyn/server"
)

// In a `go test -short` run (make test-unit) the harness does not need
// the emulators: the first test that asks for DynamoDB or S3 starts, in
// the test process, an in-memory DynamoDB (minidyn's HTTP server) and an
// in-memory S3 (gofakes3), and points AWS_ENDPOINT_URL_DYNAMODB and
// AWS_ENDPOINT_URL_S3 at them for the rest of the process, so that the
// store and the functions run on them unchanged. Without -short (make
// test) the variables name the emulators, as the local stack set them.
var memory struct {
	dynamodb, s3 sync.Once
}

// MemoryDynamoDB starts this process's in-memory DynamoDB on first call
// and points AWS_ENDPOINT_URL_DYNAMODB at it. Endpoint, Client and NewDB
// call it in -short runs; a harness that reads the variable itself calls
// it first.
func MemoryDynamoDB() {
	memory.dynamodb.Do(func() {
		srv := httptest.NewServer(&dynamoShim{next: server.NewServer()})
		os.Setenv("AWS_ENDPOINT_URL_DYNAMODB", srv.URL)
	})
}

// MemoryS3 starts this process's in-memory S3 on first call and points
// AWS_ENDPOINT_URL_S3 at it.
func MemoryS3() {
	memory.s3.Do(func() {
		srv := httptest.NewServer(gofakes3.New(s3mem.New()).Server())
		os.Setenv("AWS_ENDPOINT_URL_S3", srv.URL)
	})
}

// inMemory reports whether this run is the unit run (go test -short),
// whose harness uses the in-memory DynamoDB, S3 and SQS.
func inMemory() bool { return testing.Short() }
