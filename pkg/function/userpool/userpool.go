// Package userpool builds the company dashboard's user pool
// (pkg/identity/cognitopool) from a function's configuration: the admin
// function creates a company's first owner in it, the dashboard function
// signs people in with it. Only those two link it, and with it Cognito's
// client.
package userpool

import (
	"fmt"

	"payments/pkg/function"
	"payments/pkg/identity/cognitopool"
)

// New returns the pool named by cfg's USER_POOL_ID and USER_POOL_CLIENT_ID,
// reached through cfg's AWS configuration (cognito-local's endpoint,
// AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER, under make run).
func New(cfg function.Config) (*cognitopool.Pool, error) {
	pool, err := cognitopool.New(cognitopool.Config{
		API: cognitopool.NewClient(cfg.AWS, cfg.CognitoEndpoint), Region: cfg.AWS.Region, Endpoint: cfg.CognitoEndpoint,
		PoolID: cfg.UserPoolID, ClientID: cfg.UserPoolClientID,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", function.ErrConfig, err)
	}
	return pool, nil
}
