package cognitopool

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	cip "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"
	"github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider/types"
	"github.com/aws/smithy-go"

	"payments/pkg/identity"
)

// API is the part of Cognito's user pools API the pool calls
// (*cognitoidentityprovider.Client implements it).
type API interface {
	InitiateAuth(context.Context, *cip.InitiateAuthInput, ...func(*cip.Options)) (*cip.InitiateAuthOutput, error)
	RespondToAuthChallenge(context.Context, *cip.RespondToAuthChallengeInput, ...func(*cip.Options)) (*cip.RespondToAuthChallengeOutput, error)
	AssociateSoftwareToken(context.Context, *cip.AssociateSoftwareTokenInput, ...func(*cip.Options)) (*cip.AssociateSoftwareTokenOutput, error)
	VerifySoftwareToken(context.Context, *cip.VerifySoftwareTokenInput, ...func(*cip.Options)) (*cip.VerifySoftwareTokenOutput, error)
	ForgotPassword(context.Context, *cip.ForgotPasswordInput, ...func(*cip.Options)) (*cip.ForgotPasswordOutput, error)
	ConfirmForgotPassword(context.Context, *cip.ConfirmForgotPasswordInput, ...func(*cip.Options)) (*cip.ConfirmForgotPasswordOutput, error)
	AdminCreateUser(context.Context, *cip.AdminCreateUserInput, ...func(*cip.Options)) (*cip.AdminCreateUserOutput, error)
	AdminAddUserToGroup(context.Context, *cip.AdminAddUserToGroupInput, ...func(*cip.Options)) (*cip.AdminAddUserToGroupOutput, error)
	AdminRemoveUserFromGroup(context.Context, *cip.AdminRemoveUserFromGroupInput, ...func(*cip.Options)) (*cip.AdminRemoveUserFromGroupOutput, error)
	AdminListGroupsForUser(context.Context, *cip.AdminListGroupsForUserInput, ...func(*cip.Options)) (*cip.AdminListGroupsForUserOutput, error)
	AdminGetUser(context.Context, *cip.AdminGetUserInput, ...func(*cip.Options)) (*cip.AdminGetUserOutput, error)
	AdminDeleteUser(context.Context, *cip.AdminDeleteUserInput, ...func(*cip.Options)) (*cip.AdminDeleteUserOutput, error)
	ListUsersInGroup(context.Context, *cip.ListUsersInGroupInput, ...func(*cip.Options)) (*cip.ListUsersInGroupOutput, error)
}

// Config is everything a Pool needs.
type Config struct {
	// API is the Cognito client (NewClient).
	API API
	// Region is the pool's AWS region; it names the issuer of its tokens
	// in AWS.
	Region string
	// Endpoint is cognito-local's base URL, "" in AWS: its tokens' issuer
	// is Endpoint/<pool id>.
	Endpoint string
	// PoolID and ClientID are the pool's and the dashboard client's ids
	// (USER_POOL_ID, USER_POOL_CLIENT_ID).
	PoolID, ClientID string
	// HTTP fetches the pool's published keys (default: a client with a
	// 5 s time-out).
	HTTP *http.Client
	// Now is the clock tokens are checked against (default time.Now).
	Now func() time.Time
}

// Pool is identity.Pool over a Cognito user pool.
type Pool struct {
	api      API
	poolID   string
	clientID string
	issuer   string
	now      func() time.Time
	keys     *keySet
}

var _ identity.Pool = (*Pool)(nil)

// New returns the Pool c describes, or an error naming what c lacks.
func New(c Config) (*Pool, error) {
	var missing []string
	if c.API == nil {
		missing = append(missing, "API")
	}
	if c.PoolID == "" {
		missing = append(missing, "PoolID")
	}
	if c.ClientID == "" {
		missing = append(missing, "ClientID")
	}
	if c.Region == "" && c.Endpoint == "" {
		missing = append(missing, "Region or Endpoint")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("cognitopool: missing %s", strings.Join(missing, ", "))
	}
	if c.HTTP == nil {
		c.HTTP = &http.Client{Timeout: 5 * time.Second}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	issuer := Issuer(c.Region, c.Endpoint, c.PoolID)
	return &Pool{
		api: c.API, poolID: c.PoolID, clientID: c.ClientID, issuer: issuer, now: c.Now,
		keys: newKeySet(c.HTTP, issuer+"/.well-known/jwks.json", c.Now),
	}, nil
}

// Issuer returns the iss of the pool's tokens: in AWS
// https://cognito-idp.<region>.amazonaws.com/<pool id>, under
// cognito-local <endpoint>/<pool id>.
func Issuer(region, endpoint, poolID string) string {
	if endpoint != "" {
		return strings.TrimSuffix(endpoint, "/") + "/" + poolID
	}
	return "https://cognito-idp." + region + ".amazonaws.com/" + poolID
}

// SignIn implements identity.Pool.
func (p *Pool) SignIn(ctx context.Context, email, password string) (identity.Step, error) {
	out, err := p.api.InitiateAuth(ctx, &cip.InitiateAuthInput{
		AuthFlow: types.AuthFlowTypeUserPasswordAuth, ClientId: aws.String(p.clientID),
		AuthParameters: map[string]string{"USERNAME": email, "PASSWORD": password},
	})
	if err != nil {
		// A password refused at sign-in is a wrong one (cognito-local says
		// InvalidPasswordException where Cognito says NotAuthorized).
		return identity.Step{}, mapError("sign in", err, map[string]error{"InvalidPasswordException": identity.ErrNotAuthorized})
	}
	return step(out.ChallengeName, out.Session, out.AuthenticationResult)
}

// SetNewPassword implements identity.Pool.
func (p *Pool) SetNewPassword(ctx context.Context, email, session, newPassword string) (identity.Step, error) {
	return p.respond(ctx, "set new password", types.ChallengeNameTypeNewPasswordRequired, session,
		map[string]string{"USERNAME": email, "NEW_PASSWORD": newPassword})
}

// AnswerMFA implements identity.Pool.
func (p *Pool) AnswerMFA(ctx context.Context, email, session, code string) (identity.Step, error) {
	return p.respond(ctx, "answer MFA", types.ChallengeNameTypeSoftwareTokenMfa, session,
		map[string]string{"USERNAME": email, "SOFTWARE_TOKEN_MFA_CODE": code})
}

// DeviceName is the name the pool gives the authenticator a person sets
// up at sign-in.
const DeviceName = "Payments dashboard"

// SetUpMFA implements identity.Pool: AssociateSoftwareToken with the
// sign-in's session (an MFA_SETUP challenge's).
func (p *Pool) SetUpMFA(ctx context.Context, session string) (identity.MFASecret, error) {
	out, err := p.api.AssociateSoftwareToken(ctx, &cip.AssociateSoftwareTokenInput{Session: aws.String(session)})
	if err != nil {
		return identity.MFASecret{}, mapError("set up MFA", err, nil)
	}
	return identity.MFASecret{Secret: aws.ToString(out.SecretCode), Session: aws.ToString(out.Session)}, nil
}

// VerifyMFASetup implements identity.Pool: VerifySoftwareToken with the
// app's first code, then the MFA_SETUP challenge answered with the session
// it gives.
func (p *Pool) VerifyMFASetup(ctx context.Context, email, session, code string) (identity.Step, error) {
	out, err := p.api.VerifySoftwareToken(ctx, &cip.VerifySoftwareTokenInput{
		Session: aws.String(session), UserCode: aws.String(code), FriendlyDeviceName: aws.String(DeviceName),
	})
	if err != nil {
		return identity.Step{}, mapError("verify MFA set-up", err, map[string]error{"EnableSoftwareTokenMFAException": identity.ErrInvalidCode})
	}
	if out.Status != types.VerifySoftwareTokenResponseTypeSuccess {
		return identity.Step{}, fmt.Errorf("cognitopool: verify MFA set-up: %s: %w", out.Status, identity.ErrInvalidCode)
	}
	return p.respond(ctx, "finish MFA set-up", types.ChallengeNameTypeMfaSetup, aws.ToString(out.Session), map[string]string{"USERNAME": email})
}

func (p *Pool) respond(ctx context.Context, op string, challenge types.ChallengeNameType, session string, answers map[string]string) (identity.Step, error) {
	out, err := p.api.RespondToAuthChallenge(ctx, &cip.RespondToAuthChallengeInput{
		ClientId: aws.String(p.clientID), ChallengeName: challenge, Session: aws.String(session),
		ChallengeResponses: answers,
	})
	if err != nil {
		return identity.Step{}, mapError(op, err, nil)
	}
	return step(out.ChallengeName, out.Session, out.AuthenticationResult)
}

// step reads a sign-in answer: a challenge the dashboard answers, or the
// ID token.
func step(challenge types.ChallengeNameType, session *string, result *types.AuthenticationResultType) (identity.Step, error) {
	switch c := identity.Challenge(challenge); c {
	case identity.NoChallenge:
		if result == nil || aws.ToString(result.IdToken) == "" {
			return identity.Step{}, errors.New("cognitopool: signed in without an ID token")
		}
		return identity.Step{IDToken: aws.ToString(result.IdToken)}, nil
	case identity.NewPasswordRequired, identity.SoftwareTokenMFA, identity.MFASetup:
		return identity.Step{Challenge: c, Session: aws.ToString(session)}, nil
	default:
		return identity.Step{}, fmt.Errorf("cognitopool: challenge %s is not one the dashboard answers", c)
	}
}

// ForgotPassword implements identity.Pool.
func (p *Pool) ForgotPassword(ctx context.Context, email string) error {
	_, err := p.api.ForgotPassword(ctx, &cip.ForgotPasswordInput{ClientId: aws.String(p.clientID), Username: aws.String(email)})
	if err = mapError("forgot password", err, nil); errors.Is(err, identity.ErrUserNotFound) {
		return nil // as Cognito with PreventUserExistenceErrors; cognito-local tells
	}
	return err
}

// ConfirmForgotPassword implements identity.Pool.
func (p *Pool) ConfirmForgotPassword(ctx context.Context, email, code, newPassword string) error {
	_, err := p.api.ConfirmForgotPassword(ctx, &cip.ConfirmForgotPasswordInput{
		ClientId: aws.String(p.clientID), Username: aws.String(email),
		ConfirmationCode: aws.String(code), Password: aws.String(newPassword),
	})
	// An unknown user is a wrong code, as Cognito with
	// PreventUserExistenceErrors says.
	return mapError("confirm forgot password", err, map[string]error{"UserNotFoundException": identity.ErrInvalidCode})
}

// CreateUser implements identity.Pool. The user is created with their
// email verified (the operator or an owner vouches for it, and Cognito
// sends the temporary password there) and put in their role's group; if
// the group cannot be given, the user is deleted again, so that the call
// can be made again.
func (p *Pool) CreateUser(ctx context.Context, companyID, email string, role identity.Role, temporaryPassword string) error {
	if !role.Valid() {
		return fmt.Errorf("cognitopool: create user: unknown role %q", role)
	}
	if companyID == "" {
		return errors.New("cognitopool: create user: no company")
	}
	in := &cip.AdminCreateUserInput{
		UserPoolId: aws.String(p.poolID), Username: aws.String(email),
		UserAttributes: []types.AttributeType{
			{Name: aws.String("email"), Value: aws.String(email)},
			{Name: aws.String("email_verified"), Value: aws.String("true")},
			{Name: aws.String(CompanyAttribute), Value: aws.String(companyID)},
		},
		DesiredDeliveryMediums: []types.DeliveryMediumType{types.DeliveryMediumTypeEmail},
	}
	if temporaryPassword != "" {
		in.TemporaryPassword = aws.String(temporaryPassword)
	}
	out, err := p.api.AdminCreateUser(ctx, in)
	if err != nil {
		return mapError("create user", err, nil)
	}
	username := email
	if out.User != nil && aws.ToString(out.User.Username) != "" {
		username = aws.ToString(out.User.Username)
	}
	if err := p.addToGroup(ctx, username, role); err != nil {
		if _, derr := p.api.AdminDeleteUser(ctx, &cip.AdminDeleteUserInput{UserPoolId: aws.String(p.poolID), Username: aws.String(username)}); derr != nil {
			return errors.Join(err, fmt.Errorf("cognitopool: create user: the user is left without a role: %w", mapError("delete user", derr, nil)))
		}
		return err
	}
	return nil
}

func (p *Pool) addToGroup(ctx context.Context, username string, role identity.Role) error {
	_, err := p.api.AdminAddUserToGroup(ctx, &cip.AdminAddUserToGroupInput{
		UserPoolId: aws.String(p.poolID), Username: aws.String(username), GroupName: aws.String(string(role)),
	})
	return mapError("add user to group "+string(role), err, nil)
}

// Members implements identity.Pool. Cognito's ListUsers cannot filter on a
// custom attribute, so Members lists each role's group and keeps the
// company's users: the pool stays the one record of who belongs where, at
// the cost of reading every company's users (docs/dashboard.md).
func (p *Pool) Members(ctx context.Context, companyID string) ([]identity.Member, error) {
	var members []identity.Member
	for _, role := range identity.Roles {
		pages := cip.NewListUsersInGroupPaginator(p.api, &cip.ListUsersInGroupInput{
			UserPoolId: aws.String(p.poolID), GroupName: aws.String(string(role)), Limit: aws.Int32(60),
		})
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return nil, mapError("list group "+string(role), err, nil)
			}
			for _, u := range page.Users {
				if attribute(u.Attributes, CompanyAttribute) != companyID {
					continue
				}
				members = append(members, identity.Member{
					Email: attribute(u.Attributes, "email"), Role: role, Status: string(u.UserStatus),
				})
			}
		}
	}
	return members, nil
}

// SetRole implements identity.Pool: the user is added to the new role's
// group before they leave their others, so that they always have one.
func (p *Pool) SetRole(ctx context.Context, companyID, email string, role identity.Role) error {
	if !role.Valid() {
		return fmt.Errorf("cognitopool: set role: unknown role %q", role)
	}
	username, err := p.companyUser(ctx, "set role", companyID, email)
	if err != nil {
		return err
	}
	groups, err := p.api.AdminListGroupsForUser(ctx, &cip.AdminListGroupsForUserInput{
		UserPoolId: aws.String(p.poolID), Username: aws.String(username), Limit: aws.Int32(60),
	})
	if err != nil {
		return mapError("set role", err, nil)
	}
	if err := p.addToGroup(ctx, username, role); err != nil {
		return err
	}
	for _, g := range groups.Groups {
		name := aws.ToString(g.GroupName)
		if name == string(role) || !identity.Role(name).Valid() {
			continue
		}
		if _, err := p.api.AdminRemoveUserFromGroup(ctx, &cip.AdminRemoveUserFromGroupInput{
			UserPoolId: aws.String(p.poolID), Username: aws.String(username), GroupName: aws.String(name),
		}); err != nil {
			return mapError("remove user from group "+name, err, nil)
		}
	}
	return nil
}

// RemoveUser implements identity.Pool.
func (p *Pool) RemoveUser(ctx context.Context, companyID, email string) error {
	username, err := p.companyUser(ctx, "remove user", companyID, email)
	if err != nil {
		return err
	}
	_, err = p.api.AdminDeleteUser(ctx, &cip.AdminDeleteUserInput{UserPoolId: aws.String(p.poolID), Username: aws.String(username)})
	return mapError("remove user", err, nil)
}

// companyUser returns the pool's username of email (the user's sub, in a
// pool whose usernames are emails) when email is a user of companyID,
// else identity.ErrUserNotFound: another company's user is nobody to this
// one. The calls that follow name the user by that username, which
// cognito-local's AdminListGroupsForUser needs (it does not resolve an
// email) and Cognito takes as well.
func (p *Pool) companyUser(ctx context.Context, op, companyID, email string) (string, error) {
	u, err := p.api.AdminGetUser(ctx, &cip.AdminGetUserInput{UserPoolId: aws.String(p.poolID), Username: aws.String(email)})
	if err != nil {
		return "", mapError(op, err, nil)
	}
	if companyID == "" || attribute(u.UserAttributes, CompanyAttribute) != companyID {
		return "", fmt.Errorf("cognitopool: %s: %w", op, identity.ErrUserNotFound)
	}
	return aws.ToString(u.Username), nil
}

func attribute(attrs []types.AttributeType, name string) string {
	for _, a := range attrs {
		if aws.ToString(a.Name) == name {
			return aws.ToString(a.Value)
		}
	}
	return ""
}

// errorCodes maps Cognito's error codes to the pool's errors.
var errorCodes = map[string]error{
	"NotAuthorizedException":         identity.ErrNotAuthorized,
	"PasswordResetRequiredException": identity.ErrNotAuthorized,
	"UserNotConfirmedException":      identity.ErrNotAuthorized,
	"InvalidPasswordException":       identity.ErrInvalidPassword,
	"CodeMismatchException":          identity.ErrInvalidCode,
	"ExpiredCodeException":           identity.ErrInvalidCode,
	"UsernameExistsException":        identity.ErrUserExists,
	"AliasExistsException":           identity.ErrUserExists,
	"UserNotFoundException":          identity.ErrUserNotFound,
	"TooManyRequestsException":       identity.ErrTooManyAttempts,
	"LimitExceededException":         identity.ErrTooManyAttempts,
	"TooManyFailedAttemptsException": identity.ErrTooManyAttempts,
}

// mapError returns nil for nil, the pool's error for one of Cognito's
// errors it knows (by operation first, in ops), wrapped with op and
// Cognito's code but not its message, and any other error wrapped as it
// is.
func mapError(op string, err error, ops map[string]error) error {
	if err == nil {
		return nil
	}
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		code := apiErr.ErrorCode()
		sentinel, ok := ops[code]
		if !ok {
			sentinel, ok = errorCodes[code]
		}
		if ok {
			return fmt.Errorf("cognitopool: %s: %s: %w", op, code, sentinel)
		}
	}
	return fmt.Errorf("cognitopool: %s: %w", op, err)
}
