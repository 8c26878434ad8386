// Package keyvaults builds the vaults of a function's secrets from its
// configuration: the card secrets' (sandbox mode) and the webhook signing
// secrets', each under its KMS key in AWS or a local key under make run.
package keyvaults

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"

	"payments/pkg/function"
	"payments/pkg/vault"
)

// Card returns the vault of card secrets: under the KMS key of
// CARD_KEY_ARN in AWS, through the KeyService kms returns
// (kmskeys.FromConfig), under the local key CARD_KEY locally. In
// production mode, where the issuer keeps the card secrets and the stack
// gives no key, it is a vault that seals and opens nothing (vault.NoKeys).
func Card(cfg function.Config, kms func(cfg aws.Config, endpoint, keyID string) vault.KeyService) (*vault.Vault, error) {
	if cfg.CardKeyARN == "" && cfg.CardKey == "" && cfg.Mode == function.ModeProduction {
		return vault.New(vault.NoKeys), nil
	}
	return keyed(cfg, kms, cfg.CardKeyARN, cfg.CardKey, "CARD_KEY")
}

// Webhook returns the vault of webhook signing secrets: under the KMS
// key of WEBHOOK_KEY_ARN in AWS, through the KeyService kms returns
// (kmskeys.FromConfig), under the local key WEBHOOK_KEY locally.
func Webhook(cfg function.Config, kms func(cfg aws.Config, endpoint, keyID string) vault.KeyService) (*vault.Vault, error) {
	return keyed(cfg, kms, cfg.WebhookKeyARN, cfg.WebhookKey, "WEBHOOK_KEY")
}

// keyed returns the vault under the KMS key arn, or else under the local
// key localHex of the setting name.
func keyed(cfg function.Config, kms func(cfg aws.Config, endpoint, keyID string) vault.KeyService, arn, localHex, name string) (*vault.Vault, error) {
	if arn != "" {
		return vault.New(kms(cfg.AWS, cfg.KMSEndpoint, arn)), nil
	}
	key, err := vault.LocalKeyFromHex(localHex)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", function.ErrConfig, name, err)
	}
	local, err := vault.NewLocal(key)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", function.ErrConfig, name, err)
	}
	return vault.New(local), nil
}
