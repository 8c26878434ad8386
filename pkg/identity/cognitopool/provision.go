package cognitopool

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	cip "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"
	"github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider/types"

	"payments/pkg/identity"
)

// NewClient returns a Cognito user pools client; endpoint, when not "",
// replaces AWS's (cognito-local's base URL).
func NewClient(cfg aws.Config, endpoint string) *cip.Client {
	return cip.NewFromConfig(cfg, func(o *cip.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
}

// The pool's names, as template.yaml declares them.
const (
	// CompanyAttribute is the custom attribute that holds a user's
	// company id, as the pool's schema declares it (company_id) and as
	// the API and the tokens spell it.
	CompanyAttribute = "custom:company_id"
	// ClientName is the name of the dashboard's app client.
	ClientName = "dashboard"
)

// The dashboard client's token validity, in the units
// TokenValidityUnits states: ID and access tokens for an hour, the
// refresh token for a day, so that a user signs in once a working day.
const (
	IDTokenValidityMinutes     = 60
	AccessTokenValidityMinutes = 60
	RefreshTokenValidityDays   = 1
)

// Resources are the ids of a pool and of its dashboard client.
type Resources struct {
	PoolID   string
	ClientID string
}

// PoolDefinition is the user pool named name as template.yaml declares it,
// but for what cognito-local has no use for (MFA left OPTIONAL, no
// advanced security, no email configuration).
func PoolDefinition(name string) *cip.CreateUserPoolInput {
	p := identity.Policy
	return &cip.CreateUserPoolInput{
		PoolName:               aws.String(name),
		UsernameAttributes:     []types.UsernameAttributeType{types.UsernameAttributeTypeEmail},
		UsernameConfiguration:  &types.UsernameConfigurationType{CaseSensitive: aws.Bool(false)},
		AutoVerifiedAttributes: []types.VerifiedAttributeType{types.VerifiedAttributeTypeEmail},
		Policies: &types.UserPoolPolicyType{PasswordPolicy: &types.PasswordPolicyType{
			MinimumLength:                 aws.Int32(int32(p.MinimumLength)),
			RequireLowercase:              p.RequireLowercase,
			RequireUppercase:              p.RequireUppercase,
			RequireNumbers:                p.RequireNumbers,
			RequireSymbols:                p.RequireSymbols,
			TemporaryPasswordValidityDays: int32(p.TemporaryPasswordValidityDays),
		}},
		Schema: []types.SchemaAttributeType{{
			Name:              aws.String("company_id"),
			AttributeDataType: types.AttributeDataTypeString,
			Mutable:           aws.Bool(false),
		}},
		MfaConfiguration:      types.UserPoolMfaTypeOptional,
		AdminCreateUserConfig: &types.AdminCreateUserConfigType{AllowAdminCreateUserOnly: true},
		AccountRecoverySetting: &types.AccountRecoverySettingType{RecoveryMechanisms: []types.RecoveryOptionType{
			{Name: types.RecoveryOptionNameTypeVerifiedEmail, Priority: aws.Int32(1)},
		}},
	}
}

// ClientDefinition is the dashboard's app client of the pool poolID: no
// secret, sign-in by password over TLS (USER_PASSWORD_AUTH) and refresh,
// no answer that tells whether a user exists, and no write of the company.
func ClientDefinition(poolID string) *cip.CreateUserPoolClientInput {
	return &cip.CreateUserPoolClientInput{
		UserPoolId: aws.String(poolID),
		ClientName: aws.String(ClientName),
		ExplicitAuthFlows: []types.ExplicitAuthFlowsType{
			types.ExplicitAuthFlowsTypeAllowUserPasswordAuth, types.ExplicitAuthFlowsTypeAllowRefreshTokenAuth,
		},
		PreventUserExistenceErrors: types.PreventUserExistenceErrorTypesEnabled,
		EnableTokenRevocation:      aws.Bool(true),
		IdTokenValidity:            aws.Int32(IDTokenValidityMinutes),
		AccessTokenValidity:        aws.Int32(AccessTokenValidityMinutes),
		RefreshTokenValidity:       RefreshTokenValidityDays,
		TokenValidityUnits: &types.TokenValidityUnitsType{
			IdToken: types.TimeUnitsTypeMinutes, AccessToken: types.TimeUnitsTypeMinutes, RefreshToken: types.TimeUnitsTypeDays,
		},
		ReadAttributes:  []string{"email", "email_verified", CompanyAttribute},
		WriteAttributes: []string{"email"},
	}
}

// Provision creates the pool named name with its groups (one per role) and
// its dashboard client, each unless it exists, and returns their ids: the
// local stack's pool, kept across runs, and the tests' throwaway pools.
func Provision(ctx context.Context, client *cip.Client, name string) (Resources, error) {
	var r Resources
	pools := cip.NewListUserPoolsPaginator(client, &cip.ListUserPoolsInput{MaxResults: aws.Int32(60)})
	for pools.HasMorePages() && r.PoolID == "" {
		page, err := pools.NextPage(ctx)
		if err != nil {
			return r, fmt.Errorf("cognitopool: list pools: %w", err)
		}
		for _, p := range page.UserPools {
			if aws.ToString(p.Name) == name {
				r.PoolID = aws.ToString(p.Id)
				break
			}
		}
	}
	if r.PoolID == "" {
		out, err := client.CreateUserPool(ctx, PoolDefinition(name))
		if err != nil {
			return r, fmt.Errorf("cognitopool: create pool %s: %w", name, err)
		}
		r.PoolID = aws.ToString(out.UserPool.Id)
	}
	// The groups are listed, not read one by one: cognito-local fails
	// GetGroup (500) in a pool that has no group yet.
	groups := map[string]bool{}
	listed := cip.NewListGroupsPaginator(client, &cip.ListGroupsInput{UserPoolId: aws.String(r.PoolID)})
	for listed.HasMorePages() {
		page, err := listed.NextPage(ctx)
		if err != nil {
			return r, fmt.Errorf("cognitopool: list groups: %w", err)
		}
		for _, g := range page.Groups {
			groups[aws.ToString(g.GroupName)] = true
		}
	}
	for _, role := range identity.Roles {
		if groups[string(role)] {
			continue
		}
		if _, err := client.CreateGroup(ctx, &cip.CreateGroupInput{
			UserPoolId: aws.String(r.PoolID), GroupName: aws.String(string(role)),
			Description: aws.String("The dashboard's " + string(role) + "s"),
		}); err != nil {
			return r, fmt.Errorf("cognitopool: create group %s: %w", role, err)
		}
	}
	clients := cip.NewListUserPoolClientsPaginator(client, &cip.ListUserPoolClientsInput{UserPoolId: aws.String(r.PoolID), MaxResults: aws.Int32(60)})
	for clients.HasMorePages() && r.ClientID == "" {
		page, err := clients.NextPage(ctx)
		if err != nil {
			return r, fmt.Errorf("cognitopool: list clients: %w", err)
		}
		for _, c := range page.UserPoolClients {
			if aws.ToString(c.ClientName) == ClientName {
				r.ClientID = aws.ToString(c.ClientId)
				break
			}
		}
	}
	if r.ClientID == "" {
		out, err := client.CreateUserPoolClient(ctx, ClientDefinition(r.PoolID))
		if err != nil {
			return r, fmt.Errorf("cognitopool: create client: %w", err)
		}
		r.ClientID = aws.ToString(out.UserPoolClient.ClientId)
	}
	return r, nil
}
