// Package secrets reads a function's secrets from AWS Secrets Manager. Only
// the functions given a secret import it, so only they link its client.
package secrets

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"payments/pkg/function"
)

// Manager reads secrets with one Secrets Manager client.
type Manager struct {
	client *secretsmanager.Client
}

// New returns the Manager of cfg; endpoint, when set, is a stand-in's
// address (tests). Its type is function.NewSecretReader.
func New(cfg aws.Config, endpoint string) function.SecretReader {
	return &Manager{client: secretsmanager.NewFromConfig(cfg, func(o *secretsmanager.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})}
}

// SecretValue returns the secret string of arn.
func (m *Manager) SecretValue(ctx context.Context, arn string) (string, error) {
	out, err := m.client.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(arn)})
	if err != nil {
		return "", err
	}
	return aws.ToString(out.SecretString), nil
}
