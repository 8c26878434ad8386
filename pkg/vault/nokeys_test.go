package vault_test

import (
	"context"
	"errors"
	"testing"

	"payments/pkg/vault"
)

// TestNoKeys: a vault over NoKeys seals and opens nothing.
func TestNoKeys(t *testing.T) {
	v := vault.New(vault.NoKeys)
	ctx := context.Background()
	if _, err := v.Seal(ctx, []byte("4242424242424242"), vault.CardField("cmp_1", "card_1", vault.FieldNumber)); !errors.Is(err, vault.ErrNoKeys) {
		t.Errorf("Seal: %v, want ErrNoKeys", err)
	}
	if _, err := v.Open(ctx, vault.Sealed{KeyID: "k", DataKey: []byte{1}, Nonce: make([]byte, 12), Ciphertext: []byte{2}}, vault.CardField("cmp_1", "card_1", vault.FieldNumber)); !errors.Is(err, vault.ErrNoKeys) {
		t.Errorf("Open: %v, want ErrNoKeys", err)
	}
}
