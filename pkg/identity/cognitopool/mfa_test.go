package cognitopool_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	cip "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"
	"github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider/types"
	"github.com/aws/smithy-go"

	"payments/pkg/identity"
	"payments/pkg/identity/cognitopool"
)

// mfaSetup is Cognito's side of an MFA_SETUP challenge as its API
// reference describes it (cognito-local cannot associate a token by
// session): AssociateSoftwareToken takes the challenge's session and
// answers the secret and a new session; VerifySoftwareToken takes that
// session and the app's code and answers SUCCESS and another session;
// RespondToAuthChallenge(MFA_SETUP) takes that one with USERNAME and signs
// in.
type mfaSetup struct {
	cognitopool.API
	code string
}

func (f *mfaSetup) AssociateSoftwareToken(_ context.Context, in *cip.AssociateSoftwareTokenInput, _ ...func(*cip.Options)) (*cip.AssociateSoftwareTokenOutput, error) {
	if aws.ToString(in.Session) != "challenge-session" || in.AccessToken != nil {
		return nil, &smithy.GenericAPIError{Code: "NotAuthorizedException"}
	}
	return &cip.AssociateSoftwareTokenOutput{SecretCode: aws.String("JBSWY3DPEHPK3PXP"), Session: aws.String("associated-session")}, nil
}

func (f *mfaSetup) VerifySoftwareToken(_ context.Context, in *cip.VerifySoftwareTokenInput, _ ...func(*cip.Options)) (*cip.VerifySoftwareTokenOutput, error) {
	switch {
	case aws.ToString(in.Session) != "associated-session":
		return nil, &smithy.GenericAPIError{Code: "NotAuthorizedException"}
	case aws.ToString(in.UserCode) != f.code:
		return nil, &smithy.GenericAPIError{Code: "EnableSoftwareTokenMFAException"}
	case aws.ToString(in.FriendlyDeviceName) != cognitopool.DeviceName:
		return nil, &smithy.GenericAPIError{Code: "InvalidParameterException"}
	}
	return &cip.VerifySoftwareTokenOutput{Status: types.VerifySoftwareTokenResponseTypeSuccess, Session: aws.String("verified-session")}, nil
}

func (f *mfaSetup) RespondToAuthChallenge(_ context.Context, in *cip.RespondToAuthChallengeInput, _ ...func(*cip.Options)) (*cip.RespondToAuthChallengeOutput, error) {
	if in.ChallengeName != types.ChallengeNameTypeMfaSetup || aws.ToString(in.Session) != "verified-session" ||
		in.ChallengeResponses["USERNAME"] != "ada@example.com" || aws.ToString(in.ClientId) != "c" {
		return nil, &smithy.GenericAPIError{Code: "NotAuthorizedException"}
	}
	return &cip.RespondToAuthChallengeOutput{AuthenticationResult: &types.AuthenticationResultType{IdToken: aws.String("id-token")}}, nil
}

// TestMFASetup: SetUpMFA and VerifyMFASetup make Cognito's three calls
// with the sessions each answer gives; a wrong code is ErrInvalidCode.
func TestMFASetup(t *testing.T) {
	p, err := cognitopool.New(cognitopool.Config{API: &mfaSetup{code: "123456"}, Region: "eu-west-1", PoolID: "p", ClientID: "c"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	secret, err := p.SetUpMFA(ctx, "challenge-session")
	if err != nil || secret != (identity.MFASecret{Secret: "JBSWY3DPEHPK3PXP", Session: "associated-session"}) {
		t.Fatalf("SetUpMFA = %+v, %v", secret, err)
	}
	if _, err := p.VerifyMFASetup(ctx, "ada@example.com", secret.Session, "654321"); !errors.Is(err, identity.ErrInvalidCode) {
		t.Errorf("a wrong code: %v, want ErrInvalidCode", err)
	}
	step, err := p.VerifyMFASetup(ctx, "ada@example.com", secret.Session, "123456")
	if err != nil || step.IDToken != "id-token" {
		t.Errorf("VerifyMFASetup = %+v, %v; want signed in", step, err)
	}
	if _, err := p.SetUpMFA(ctx, "stale"); !errors.Is(err, identity.ErrNotAuthorized) {
		t.Errorf("SetUpMFA of a stale session: %v, want ErrNotAuthorized", err)
	}
}
