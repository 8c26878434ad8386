// Package kmskeys is the vault.KeyService of a deployment: data keys made
// and opened by AWS KMS. Only the functions that seal or open card secrets
// import it, so only they link the KMS client.
package kmskeys

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"

	"payments/pkg/vault"
)

// KMS is the KeyService of a deployment: data keys are made by AWS KMS
// GenerateDataKey (KeySpec AES_256) under one KMS key and opened by KMS
// Decrypt, given that key. The key id it reports is the KeyId KMS answers:
// the key ARN, whatever form of id or alias it was configured with.
type KMS struct {
	client *kms.Client
	keyID  string
}

// New returns the KMS KeyService that makes data keys under the KMS key
// keyID (a key id, key ARN, alias name or alias ARN).
func New(client *kms.Client, keyID string) *KMS {
	return &KMS{client: client, keyID: keyID}
}

// NewClient returns a KMS client for cfg; endpoint, when set, is a local
// or test endpoint (BaseEndpoint).
func NewClient(cfg aws.Config, endpoint string) *kms.Client {
	return kms.NewFromConfig(cfg, func(o *kms.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
}

// NewDataKey asks KMS for a fresh 256-bit data key under the configured key,
// for the encryption context ec, and returns it in clear and encrypted with
// the ARN of the key. A failing call is vault.ErrKey.
func (k *KMS) NewDataKey(ctx context.Context, ec vault.Context) (plain, encrypted []byte, keyID string, err error) {
	out, err := k.client.GenerateDataKey(ctx, &kms.GenerateDataKeyInput{
		KeyId:             aws.String(k.keyID),
		KeySpec:           types.DataKeySpecAes256,
		EncryptionContext: ec,
	})
	if err != nil {
		return nil, nil, "", fmt.Errorf("%w: %w", vault.ErrKey, err)
	}
	if len(out.Plaintext) != vault.DataKeySize || len(out.CiphertextBlob) == 0 || aws.ToString(out.KeyId) == "" {
		clear(out.Plaintext)
		return nil, nil, "", fmt.Errorf("%w: KMS GenerateDataKey answered a data key of %d bytes, %d encrypted, key id %q",
			vault.ErrKey, len(out.Plaintext), len(out.CiphertextBlob), aws.ToString(out.KeyId))
	}
	return out.Plaintext, out.CiphertextBlob, *out.KeyId, nil
}

// OpenDataKey asks KMS to decrypt encrypted under the KMS key keyID for the
// encryption context ec. A ciphertext KMS does not recognise (another
// context is one), or one made under another key, is vault.ErrOpen; any
// other failure is vault.ErrKey.
func (k *KMS) OpenDataKey(ctx context.Context, encrypted []byte, keyID string, ec vault.Context) ([]byte, error) {
	out, err := k.client.Decrypt(ctx, &kms.DecryptInput{
		CiphertextBlob:    encrypted,
		KeyId:             aws.String(keyID),
		EncryptionContext: ec,
	})
	var invalid *types.InvalidCiphertextException
	var incorrect *types.IncorrectKeyException
	switch {
	case errors.As(err, &invalid), errors.As(err, &incorrect):
		return nil, fmt.Errorf("%w: %w", vault.ErrOpen, err)
	case err != nil:
		return nil, fmt.Errorf("%w: %w", vault.ErrKey, err)
	}
	return out.Plaintext, nil
}

// FromConfig returns the KMS KeyService of the KMS key keyID through a new
// client for cfg and endpoint: what keyvaults.Card is given.
func FromConfig(cfg aws.Config, endpoint, keyID string) vault.KeyService {
	return New(NewClient(cfg, endpoint), keyID)
}
