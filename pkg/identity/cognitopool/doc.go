// Package cognitopool is the Amazon Cognito user pool of the company
// dashboard: the adapter of identity.Pool over Cognito's API
// (cognito-idp), and the pool's definition, which the local stack
// provisions in cognito-local and template.yaml declares in AWS.
package cognitopool
