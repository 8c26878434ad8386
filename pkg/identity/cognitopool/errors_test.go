package cognitopool_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	cip "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"
	"github.com/aws/smithy-go"

	"payments/pkg/identity"
	"payments/pkg/identity/cognitopool"
)

// failing is an API whose sign-in and forgotten-password calls fail with err.
type failing struct {
	cognitopool.API
	err error
}

func (f failing) InitiateAuth(context.Context, *cip.InitiateAuthInput, ...func(*cip.Options)) (*cip.InitiateAuthOutput, error) {
	return nil, f.err
}

func (f failing) ConfirmForgotPassword(context.Context, *cip.ConfirmForgotPasswordInput, ...func(*cip.Options)) (*cip.ConfirmForgotPasswordOutput, error) {
	return nil, f.err
}

func TestErrorsMapped(t *testing.T) {
	const secret = "the SDK's own words"
	for _, tt := range []struct {
		code          string
		signIn, reset error
	}{
		{"NotAuthorizedException", identity.ErrNotAuthorized, identity.ErrNotAuthorized},
		{"InvalidPasswordException", identity.ErrNotAuthorized, identity.ErrInvalidPassword},
		{"CodeMismatchException", identity.ErrInvalidCode, identity.ErrInvalidCode},
		{"ExpiredCodeException", identity.ErrInvalidCode, identity.ErrInvalidCode},
		{"UsernameExistsException", identity.ErrUserExists, identity.ErrUserExists},
		{"UserNotFoundException", identity.ErrUserNotFound, identity.ErrInvalidCode},
		{"TooManyRequestsException", identity.ErrTooManyAttempts, identity.ErrTooManyAttempts},
		{"LimitExceededException", identity.ErrTooManyAttempts, identity.ErrTooManyAttempts},
	} {
		t.Run(tt.code, func(t *testing.T) {
			p, err := cognitopool.New(cognitopool.Config{
				API: failing{err: &smithy.GenericAPIError{Code: tt.code, Message: secret}}, Region: "eu-west-1", PoolID: "p", ClientID: "c",
			})
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.SignIn(context.Background(), "a@a.example", "x")
			if !errors.Is(err, tt.signIn) || strings.Contains(err.Error(), secret) {
				t.Errorf("SignIn = %v, want %v without Cognito's message", err, tt.signIn)
			}
			err = p.ConfirmForgotPassword(context.Background(), "a@a.example", "1", "x")
			if !errors.Is(err, tt.reset) || strings.Contains(err.Error(), secret) {
				t.Errorf("ConfirmForgotPassword = %v, want %v without Cognito's message", err, tt.reset)
			}
		})
	}
}

func TestNewNamesWhatIsMissing(t *testing.T) {
	_, err := cognitopool.New(cognitopool.Config{})
	if err == nil || !strings.Contains(err.Error(), "API, PoolID, ClientID, Region or Endpoint") {
		t.Errorf("New(Config{}) = %v, want the missing fields named", err)
	}
	if got := cognitopool.Issuer("eu-west-1", "", "eu-west-1_abc"); got != "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_abc" {
		t.Errorf("Issuer in AWS = %s", got)
	}
}
