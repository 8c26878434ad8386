// Package cognitotest gives tests a throwaway user pool in cognito-local,
// whose address comes from AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER,
// which `make test` (devstack exec) sets after starting the local stack.
// The functions' harnesses (NewResources) get, in `go test -short` runs,
// a pool of the in-memory stand-in (MemoryCognito) instead; the adapter's
// own tests (NewPool) need cognito-local and fail, not skip, without it:
// their package is left out of `make test-unit` (the Makefile's
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
	"github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider/types"

	"payments/pkg/identity/cognitopool"
)

// EndpointEnv names the variable that holds cognito-local's base URL.
const EndpointEnv = "AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER"

// Endpoint returns cognito-local's base URL, failing t when it is unset;
// in -short runs, the in-memory stand-in's (MemoryCognito).
func Endpoint(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		MemoryCognito()
	}
	return emulator(t)
}

// emulator returns the endpoint EndpointEnv names, failing t when it is
// unset.
func emulator(t testing.TB) string {
	t.Helper()
	ep := os.Getenv(EndpointEnv)
	if ep == "" {
		t.Fatal(EndpointEnv + " is not set: run the tests with `make test` (devstack exec), which starts cognito-local")
	}
	return ep
}

// Client returns a Cognito client for cognito-local (Endpoint).
func Client(t testing.TB) *cip.Client {
	return client(Endpoint(t))
}

func client(endpoint string) *cip.Client {
	return cognitopool.NewClient(aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
	}, endpoint)
}

// NewResources provisions a pool with a unique name (cognitopool.Provision)
// in cognito-local, or in -short runs in the in-memory stand-in, and
// deletes it when the test ends. Its endpoint is Endpoint(t).
func NewResources(t testing.TB) cognitopool.Resources {
	t.Helper()
	return newResources(t, Endpoint(t))
}

func newResources(t testing.TB, endpoint string) cognitopool.Resources {
	t.Helper()
	c := client(endpoint)
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

// NewPool returns a Pool over a new throwaway pool in cognito-local, and
// the pool's ids. It fails t without cognito-local, -short or not: the
// in-memory stand-in signs nobody in.
func NewPool(t testing.TB) (*cognitopool.Pool, cognitopool.Resources) {
	t.Helper()
	ep := emulator(t)
	r := newResources(t, ep)
	p, err := cognitopool.New(cognitopool.Config{
		API: client(ep), Endpoint: ep, PoolID: r.PoolID, ClientID: r.ClientID,
	})
	if err != nil {
		t.Fatal(err)
	}
	return p, r
}

// SetTemporaryPassword gives the user email of the pool poolID in
// cognito-local the temporary password password (AdminSetUserPassword,
// not permanent): their next sign-in with it asks for a new one. The
// tests sign in a user the pool invited with a password it chose and
// emailed, which cognito-local only prints.
func SetTemporaryPassword(t testing.TB, poolID, email, password string) {
	t.Helper()
	_, err := Client(t).AdminSetUserPassword(t.Context(), &cip.AdminSetUserPasswordInput{
		UserPoolId: aws.String(poolID), Username: aws.String(email), Password: aws.String(password), Permanent: false,
	})
	if err != nil {
		t.Fatalf("set the temporary password of %s: %v", email, err)
	}
}

// AddAuthenticator gives the confirmed user email, signed in with
// password through the pool's app client clientID, an authenticator app
// as the user would from their account: AssociateSoftwareToken with
// their access token, VerifySoftwareToken with the app's code (code
// computes it from the secret), and SetUserMFAPreference, TOTP enabled
// and preferred. It returns the app's secret. From then on their sign-in
// asks for the app's code, and cognito-local checks it (RFC 6238).
func AddAuthenticator(t testing.TB, clientID, email, password string, code func(secret string) string) string {
	t.Helper()
	ctx, c := t.Context(), Client(t)
	in, err := c.InitiateAuth(ctx, &cip.InitiateAuthInput{
		AuthFlow: types.AuthFlowTypeUserPasswordAuth, ClientId: aws.String(clientID),
		AuthParameters: map[string]string{"USERNAME": email, "PASSWORD": password},
	})
	if err != nil || in.AuthenticationResult == nil {
		t.Fatalf("sign %s in for an authenticator: %+v, %v", email, in, err)
	}
	token := in.AuthenticationResult.AccessToken
	assoc, err := c.AssociateSoftwareToken(ctx, &cip.AssociateSoftwareTokenInput{AccessToken: token})
	if err != nil {
		t.Fatalf("associate an authenticator: %v", err)
	}
	secret := aws.ToString(assoc.SecretCode)
	if _, err := c.VerifySoftwareToken(ctx, &cip.VerifySoftwareTokenInput{AccessToken: token, UserCode: aws.String(code(secret))}); err != nil {
		t.Fatalf("verify the authenticator: %v", err)
	}
	_, err = c.SetUserMFAPreference(ctx, &cip.SetUserMFAPreferenceInput{AccessToken: token,
		SoftwareTokenMfaSettings: &types.SoftwareTokenMfaSettingsType{Enabled: true, PreferredMfa: true}})
	if err != nil {
		t.Fatalf("prefer the authenticator: %v", err)
	}
	return secret
}
