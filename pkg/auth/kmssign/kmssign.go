// Package kmssign holds the token keys of a deployment in AWS KMS: an
// asymmetric key (KeySpec ECC_NIST_P256, KeyUsage SIGN_VERIFY) signs the
// auth function's tokens (kms:Sign, granted to it alone), and every
// function reads the public keys once at start (kms:GetPublicKey). Only the
// functions that sign or check tokens import it.
package kmssign

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/asn1"
	"fmt"
	"math/big"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"

	"payments/pkg/auth"
)

// NewClient returns a KMS client for cfg; endpoint, when set, is a test
// endpoint (BaseEndpoint).
func NewClient(cfg aws.Config, endpoint string) *kms.Client {
	return kms.NewFromConfig(cfg, func(o *kms.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
}

// PublicKey returns the public key of the KMS key keyID, which must be
// an ECC_NIST_P256 key for SIGN_VERIFY.
func PublicKey(ctx context.Context, client *kms.Client, keyID string) (*ecdsa.PublicKey, error) {
	out, err := client.GetPublicKey(ctx, &kms.GetPublicKeyInput{KeyId: aws.String(keyID)})
	if err != nil {
		return nil, fmt.Errorf("%w: token key %s: %w", auth.ErrConfig, keyID, err)
	}
	if out.KeySpec != types.KeySpecEccNistP256 || out.KeyUsage != types.KeyUsageTypeSignVerify {
		return nil, fmt.Errorf("%w: token key %s is a %s key for %s, not %s for %s", auth.ErrConfig, keyID,
			out.KeySpec, out.KeyUsage, types.KeySpecEccNistP256, types.KeyUsageTypeSignVerify)
	}
	pub, err := x509.ParsePKIXPublicKey(out.PublicKey)
	ec, ok := pub.(*ecdsa.PublicKey)
	if err != nil || !ok || ec.Curve != elliptic.P256() {
		return nil, fmt.Errorf("%w: token key %s: its public key is not a P-256 key (%v)", auth.ErrConfig, keyID, err)
	}
	return ec, nil
}

// Signer is the auth.Signer of a KMS key: KMS Sign of the digest with
// ECDSA_SHA_256.
type Signer struct {
	client *kms.Client
	keyID  string
	public *ecdsa.PublicKey
}

// NewSigner returns the Signer of the KMS key keyID, reading its public
// key.
func NewSigner(ctx context.Context, client *kms.Client, keyID string) (*Signer, error) {
	pub, err := PublicKey(ctx, client, keyID)
	if err != nil {
		return nil, err
	}
	return &Signer{client: client, keyID: keyID, public: pub}, nil
}

// Public returns the key's public half.
func (s *Signer) Public() *ecdsa.PublicKey { return s.public }

// Sign asks KMS to sign digest and returns the signature as JWS writes it,
// r||s (KMS answers it DER-encoded).
func (s *Signer) Sign(ctx context.Context, digest []byte) ([]byte, error) {
	out, err := s.client.Sign(ctx, &kms.SignInput{
		KeyId:            aws.String(s.keyID),
		Message:          digest,
		MessageType:      types.MessageTypeDigest,
		SigningAlgorithm: types.SigningAlgorithmSpecEcdsaSha256,
	})
	if err != nil {
		return nil, fmt.Errorf("kms sign: %w", err)
	}
	return RawSignature(out.Signature)
}

// RawSignature converts an ECDSA signature from its DER encoding (an
// ASN.1 SEQUENCE of r and s, as KMS answers it) to r||s, 32 bytes each.
func RawSignature(der []byte) ([]byte, error) {
	var sig struct{ R, S *big.Int }
	rest, err := asn1.Unmarshal(der, &sig)
	switch {
	case err != nil:
		return nil, fmt.Errorf("kms sign: signature: %w", err)
	case len(rest) > 0:
		return nil, fmt.Errorf("kms sign: signature: %d bytes after it", len(rest))
	case sig.R.Sign() <= 0 || sig.S.Sign() <= 0 || sig.R.BitLen() > 256 || sig.S.BitLen() > 256:
		return nil, fmt.Errorf("kms sign: signature: r or s out of range")
	}
	raw := make([]byte, auth.SignatureSize)
	sig.R.FillBytes(raw[:32])
	sig.S.FillBytes(raw[32:])
	return raw, nil
}
