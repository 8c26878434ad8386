// Package cognitotest gives tests a throwaway user pool in cognito-local,
// whose address comes from AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER,
// which `make test` (devstack exec) sets after starting the local stack. A
// test that needs it fails, not skips, when it is not there: the packages
// that use it are left out of `make test-unit` (the Makefile's
// UNIT_PACKAGES).
package cognitotest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	cip "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"

	"payments/pkg/identity/cognitopool"
)

// EndpointEnv names the variable that holds cognito-local's base URL.
const EndpointEnv = "AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER"

// Endpoint returns cognito-local's base URL, failing t when it is unset.
func Endpoint(t testing.TB) string {
	t.Helper()
	ep := os.Getenv(EndpointEnv)
	if ep == "" {
		t.Fatal(EndpointEnv + " is not set: run the tests with `make test` (devstack exec), which starts cognito-local")
	}
	return ep
}

// Client returns a Cognito client for cognito-local.
func Client(t testing.TB) *cip.Client {
	return cognitopool.NewClient(aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
	}, Endpoint(t))
}

// NewResources provisions a pool with a unique name (cognitopool.Provision)
// and deletes it when the test ends.
func NewResources(t testing.TB) cognitopool.Resources {
	t.Helper()
	c := Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b := make([]byte, 6)
	rand.Read(b)
	r, err := cognitopool.Provision(ctx, c, "test-"+hex.EncodeToString(b))
	if err != nil {
		t.Fatalf("provision a test pool: %v", err)
	}
	t.Cleanup(func() {
		c.DeleteUserPool(context.Background(), &cip.DeleteUserPoolInput{UserPoolId: aws.String(r.PoolID)})
	})
	return r
}

// NewPool returns a Pool over a new throwaway pool (NewResources), and the
// pool's ids.
func NewPool(t testing.TB) (*cognitopool.Pool, cognitopool.Resources) {
	t.Helper()
	r := NewResources(t)
	p, err := cognitopool.New(cognitopool.Config{
		API: Client(t), Endpoint: Endpoint(t), PoolID: r.PoolID, ClientID: r.ClientID,
	})
	if err != nil {
		t.Fatal(err)
	}
	return p, r
}
