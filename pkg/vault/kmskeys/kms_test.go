package kmskeys_test

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"

	"payments/pkg/vault"
	"payments/pkg/vault/kmskeys"
	"payments/pkg/vault/vaulttest"
)

const testPAN = "4111111111111111"

// testContext is the context of testPAN.
var testContext = vault.CardField("cmp_0123456789abcdef", "card_0123456789abcdef", vault.FieldNumber)

// flip returns a copy of b with its byte i changed.
func flip(b []byte, i int) []byte {
	b = bytes.Clone(b)
	b[i] ^= 0x01
	return b
}

// newFakeKMS starts a fake KMS that also holds otherKeyARN, and
// disabledKeyARN, which answers DisabledException.
func newFakeKMS(t *testing.T) (*vaulttest.FakeKMS, string) {
	f := vaulttest.NewFakeKMS(t)
	f.Keys[otherKeyARN], f.Keys[disabledKeyARN] = otherKeyARN, disabledKeyARN
	f.Disabled = disabledKeyARN
	return f, f.URL
}

const (
	testKeyARN     = vaulttest.KeyARN
	otherKeyARN    = "arn:aws:kms:us-east-1:000000000000:key/66666666-7777-8888-9999-000000000000"
	disabledKeyARN = "arn:aws:kms:us-east-1:000000000000:key/dddddddd-dddd-dddd-dddd-dddddddddddd"
)

func newTestKMS(url, keyID string) *kmskeys.KMS {
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("a", "b", "")}
	return kmskeys.New(kmskeys.NewClient(cfg, url), keyID)
}

func TestKMS(t *testing.T) {
	ctx := context.Background()
	for _, configured := range []string{testKeyARN, "alias/payments-cards"} {
		t.Run(configured, func(t *testing.T) {
			f, url := newFakeKMS(t)
			v := vault.New(newTestKMS(url, configured))
			s, err := v.Seal(ctx, []byte(testPAN), testContext)
			if err != nil {
				t.Fatal(err)
			}
			if s.KeyID != testKeyARN {
				t.Errorf("key id %q, want the ARN KMS answered %q", s.KeyID, testKeyARN)
			}
			asked := f.TakeAsked()
			if len(asked) != 1 || asked[0].Target != "TrentService.GenerateDataKey" || asked[0].KeyId != configured ||
				asked[0].KeySpec != "AES_256" || asked[0].NumberOfBytes != 0 || !maps.Equal(asked[0].EncryptionContext, testContext) {
				t.Errorf("asked KMS %+v, want one GenerateDataKey of KeySpec AES_256 under %s for %v", asked, configured, testContext)
			}
			got, err := v.Open(ctx, s, testContext)
			if err != nil || string(got) != testPAN {
				t.Fatalf("Open: %d bytes, %v", len(got), err)
			}
			asked = f.TakeAsked()
			if len(asked) != 1 || asked[0].Target != "TrentService.Decrypt" || asked[0].KeyId != testKeyARN ||
				!bytes.Equal(asked[0].CiphertextBlob, s.DataKey) || !maps.Equal(asked[0].EncryptionContext, testContext) {
				t.Errorf("asked KMS %+v, want one Decrypt of the data key under %s for %v", asked, testKeyARN, testContext)
			}
			for _, other := range []vault.Context{
				vault.CardField("cmp_0123456789abcdef", "card_other", vault.FieldNumber),
				vault.CardField("cmp_0123456789abcdef", "card_0123456789abcdef", vault.FieldCVC),
				vault.CardField("cmp_other", "card_0123456789abcdef", vault.FieldNumber),
			} {
				if _, err := v.Open(ctx, s, other); !errors.Is(err, vault.ErrOpen) {
					t.Errorf("Open with context %v: %v, want vault.ErrOpen", other, err)
				}
				// KMS itself refuses the data key under another context.
				if asked := f.TakeAsked(); len(asked) != 1 || !maps.Equal(asked[0].EncryptionContext, other) {
					t.Errorf("asked KMS %+v, want one Decrypt for %v", asked, other)
				}
			}
		})
	}
}

// TestKMSFailures: a KMS error is an error, never a panic, and one about the
// sealed data (a ciphertext it does not know, another key) is vault.ErrOpen.
func TestKMSFailures(t *testing.T) {
	ctx := context.Background()
	f, url := newFakeKMS(t)
	v := vault.New(newTestKMS(url, testKeyARN))
	s, err := v.Seal(ctx, []byte(testPAN), testContext)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("disabled key", func(t *testing.T) {
		_, err := vault.New(newTestKMS(url, disabledKeyARN)).Seal(ctx, []byte(testPAN), testContext)
		var disabled *types.DisabledException
		if !errors.Is(err, vault.ErrKey) || !errors.As(err, &disabled) {
			t.Fatalf("Seal under a disabled key: %v, want vault.ErrKey and DisabledException", err)
		}
		_, err = v.Open(ctx, vault.Sealed{KeyID: disabledKeyARN, DataKey: s.DataKey, Nonce: s.Nonce, Ciphertext: s.Ciphertext}, testContext)
		if !errors.Is(err, vault.ErrKey) || !errors.As(err, &disabled) {
			t.Fatalf("Open under a disabled key: %v, want vault.ErrKey and DisabledException", err)
		}
	})
	t.Run("unknown key", func(t *testing.T) {
		_, err := vault.New(newTestKMS(url, "alias/none")).Seal(ctx, []byte(testPAN), testContext)
		var notFound *types.NotFoundException
		if !errors.Is(err, vault.ErrKey) || !errors.As(err, &notFound) {
			t.Fatalf("Seal under an unknown key: %v, want vault.ErrKey and NotFoundException", err)
		}
	})
	t.Run("flipped data key", func(t *testing.T) {
		_, err := v.Open(ctx, vault.Sealed{KeyID: s.KeyID, DataKey: flip(s.DataKey, 3), Nonce: s.Nonce, Ciphertext: s.Ciphertext}, testContext)
		var invalid *types.InvalidCiphertextException
		if !errors.Is(err, vault.ErrOpen) || !errors.As(err, &invalid) {
			t.Fatalf("Open: %v, want vault.ErrOpen and InvalidCiphertextException", err)
		}
	})
	t.Run("another key", func(t *testing.T) {
		_, err := v.Open(ctx, vault.Sealed{KeyID: otherKeyARN, DataKey: s.DataKey, Nonce: s.Nonce, Ciphertext: s.Ciphertext}, testContext)
		var incorrect *types.IncorrectKeyException
		if !errors.Is(err, vault.ErrOpen) || !errors.As(err, &incorrect) {
			t.Fatalf("Open: %v, want vault.ErrOpen and IncorrectKeyException", err)
		}
	})
	t.Run("data key of 16 bytes", func(t *testing.T) {
		f.SetDataKeySize(16)
		defer f.SetDataKeySize(0)
		if _, err := v.Seal(ctx, []byte(testPAN), testContext); !errors.Is(err, vault.ErrKey) {
			t.Fatalf("Seal: %v, want vault.ErrKey", err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := v.Seal(ctx, []byte(testPAN), testContext); !errors.Is(err, vault.ErrKey) || !errors.Is(err, context.Canceled) {
			t.Fatalf("Seal: %v, want vault.ErrKey and context.Canceled", err)
		}
		if _, err := v.Open(ctx, s, testContext); !errors.Is(err, vault.ErrKey) || !errors.Is(err, context.Canceled) {
			t.Fatalf("Open: %v, want vault.ErrKey and context.Canceled", err)
		}
	})
}
