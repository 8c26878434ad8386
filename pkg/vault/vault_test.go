package vault

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

const (
	testCardID = "card_0123456789abcdef"
	testPAN    = "4111111111111111"
)

// testContext is the context of testPAN.
var testContext = CardField("cmp_0123456789abcdef", testCardID, FieldNumber)

var tokenForm = regexp.MustCompile(`^tok_[0-9a-f]{32}$`)

func newMaster(t testing.TB) []byte {
	t.Helper()
	master := make([]byte, 32)
	rand.Read(master)
	return master
}

func newLocalVault(t testing.TB) *Vault {
	t.Helper()
	local, err := NewLocal(newMaster(t))
	if err != nil {
		t.Fatal(err)
	}
	return New(local)
}

// flip returns a copy of b with its byte i changed.
func flip(b []byte, i int) []byte {
	b = bytes.Clone(b)
	b[i] ^= 0x01
	return b
}

func TestSealOpenLocal(t *testing.T) {
	ctx := context.Background()
	v := newLocalVault(t)
	for _, secret := range []string{testPAN, "123", "", strings.Repeat("x", 4096)} {
		s, err := v.Seal(ctx, []byte(secret), testContext)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(s.KeyID, "local:") || len(s.KeyID) != len("local:")+8 {
			t.Errorf("key id %q, want local: and 8 hexadecimal characters", s.KeyID)
		}
		got, err := v.Open(ctx, s, testContext)
		if err != nil || string(got) != secret {
			t.Fatalf("Open of a sealed %d-byte secret: %d bytes, %v", len(secret), len(got), err)
		}
	}
}

// TestOpenRefuses: anything but the sealed data, its card id and its master
// key is ErrOpen, and the error never carries the secret.
func TestOpenRefuses(t *testing.T) {
	ctx := context.Background()
	master := newMaster(t)
	local, err := NewLocal(master)
	if err != nil {
		t.Fatal(err)
	}
	v := New(local)
	s, err := v.Seal(ctx, []byte(testPAN), testContext)
	if err != nil {
		t.Fatal(err)
	}
	otherMaster := bytes.Clone(master)
	otherMaster[0] ^= 0x80
	other, err := NewLocal(otherMaster)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		vault  *Vault
		sealed Sealed
		ec     Context
	}{
		{"another card id", v, s, CardField("cmp_0123456789abcdef", "card_0123456789abcdeg", FieldNumber)},
		{"another company", v, s, CardField("cmp_0123456789abcdeg", testCardID, FieldNumber)},
		{"the CVC's field", v, s, CardField("cmp_0123456789abcdef", testCardID, FieldCVC)},
		{"one more pair", v, s, Context{"company_id": "cmp_0123456789abcdef", "card_id": testCardID, "field": FieldNumber, "x": "y"}},
		{"a webhook secret's", v, s, WebhookSecret("cmp_0123456789abcdef", testCardID)},
		{"flipped data key, first byte", v, Sealed{s.KeyID, flip(s.DataKey, 0), s.Nonce, s.Ciphertext}, testContext},
		{"flipped data key, last byte", v, Sealed{s.KeyID, flip(s.DataKey, len(s.DataKey)-1), s.Nonce, s.Ciphertext}, testContext},
		{"flipped nonce", v, Sealed{s.KeyID, s.DataKey, flip(s.Nonce, 5), s.Ciphertext}, testContext},
		{"flipped ciphertext, first byte", v, Sealed{s.KeyID, s.DataKey, s.Nonce, flip(s.Ciphertext, 0)}, testContext},
		{"flipped ciphertext, tag", v, Sealed{s.KeyID, s.DataKey, s.Nonce, flip(s.Ciphertext, len(s.Ciphertext)-1)}, testContext},
		{"truncated ciphertext", v, Sealed{s.KeyID, s.DataKey, s.Nonce, s.Ciphertext[:len(s.Ciphertext)-1]}, testContext},
		{"truncated data key", v, Sealed{s.KeyID, s.DataKey[:10], s.Nonce, s.Ciphertext}, testContext},
		{"short nonce", v, Sealed{s.KeyID, s.DataKey, s.Nonce[:8], s.Ciphertext}, testContext},
		{"flipped key id", v, Sealed{"local:00000000", s.DataKey, s.Nonce, s.Ciphertext}, testContext},
		{"no key id", v, Sealed{"", s.DataKey, s.Nonce, s.Ciphertext}, testContext},
		{"empty", v, Sealed{}, testContext},
		{"another master key", New(other), s, testContext},
		{"another master key, its key id", New(other), Sealed{other.KeyID(), s.DataKey, s.Nonce, s.Ciphertext}, testContext},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.vault.Open(ctx, tt.sealed, tt.ec)
			if !errors.Is(err, ErrOpen) || got != nil {
				t.Fatalf("Open: %q, %v; want ErrOpen", got, err)
			}
			if strings.Contains(err.Error(), testPAN) {
				t.Fatalf("error %q carries the secret", err)
			}
		})
	}
	t.Run("another master key says which", func(t *testing.T) {
		_, err := New(other).Open(ctx, s, testContext)
		if !strings.Contains(err.Error(), s.KeyID) || !strings.Contains(err.Error(), other.KeyID()) {
			t.Fatalf("error %q names neither key id", err)
		}
	})
}

func TestSealAndOpenRefuseNoContext(t *testing.T) {
	ctx := context.Background()
	v := newLocalVault(t)
	s, err := v.Seal(ctx, []byte(testPAN), testContext)
	if err != nil {
		t.Fatal(err)
	}
	for name, ec := range map[string]Context{
		"nil":         nil,
		"empty":       {},
		"empty value": {"company_id": "cmp_1", "card_id": ""},
		"empty name":  {"": "card_1"},
	} {
		if _, err := v.Seal(ctx, []byte(testPAN), ec); !errors.Is(err, ErrAssociated) {
			t.Errorf("Seal with context %s: %v, want ErrAssociated", name, err)
		}
		if got, err := v.Open(ctx, s, ec); !errors.Is(err, ErrAssociated) || got != nil {
			t.Errorf("Open with context %s: %v, want ErrAssociated", name, err)
		}
	}
}

// TestCanonicalIsOneToOne: contexts that differ never share associated
// data, whatever their names and values hold.
func TestCanonicalIsOneToOne(t *testing.T) {
	contexts := []Context{
		{"a": "bc"},
		{"ab": "c"},
		{"a": "b", "c": "d"},
		{"a": "b\x00\x00\x00\x01c", "d": "e"},
		CardField("c", "d", FieldNumber),
		CardField("c", "d", FieldCVC),
		WebhookSecret("c", "d"),
	}
	seen := map[string]int{}
	for i, c := range contexts {
		b, err := c.Canonical()
		if err != nil {
			t.Fatal(err)
		}
		if j, dup := seen[string(b)]; dup {
			t.Errorf("contexts %v and %v share associated data", contexts[j], c)
		}
		seen[string(b)] = i
	}
	// One context, whatever the order its pairs were written in.
	a, _ := Context{"x": "1", "y": "2", "z": "3"}.Canonical()
	b, _ := Context{"z": "3", "x": "1", "y": "2"}.Canonical()
	if !bytes.Equal(a, b) {
		t.Error("one context, two canonical forms")
	}
}

func TestSealingsDiffer(t *testing.T) {
	ctx := context.Background()
	v := newLocalVault(t)
	a, err := v.Seal(ctx, []byte(testPAN), testContext)
	if err != nil {
		t.Fatal(err)
	}
	b, err := v.Seal(ctx, []byte(testPAN), testContext)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a.Ciphertext, b.Ciphertext) || bytes.Equal(a.DataKey, b.DataKey) || bytes.Equal(a.Nonce, b.Nonce) {
		t.Error("two sealings of one secret share a ciphertext, data key or nonce")
	}
	if a.Token() == b.Token() {
		t.Errorf("two sealings of one secret have one token %s", a.Token())
	}
}

func TestToken(t *testing.T) {
	ctx := context.Background()
	v := newLocalVault(t)
	s, err := v.Seal(ctx, []byte(testPAN), testContext)
	if err != nil {
		t.Fatal(err)
	}
	tok := s.Token()
	if !tokenForm.MatchString(tok) {
		t.Errorf("token %q, want tok_ and 32 lowercase hexadecimal characters", tok)
	}
	if strings.Contains(tok, testPAN) || strings.Contains(tok, testPAN[len(testPAN)-4:]) {
		t.Errorf("token %q carries the card number", tok)
	}
	if again := s.Token(); again != tok {
		t.Errorf("token of one sealing %q, then %q", tok, again)
	}
	// A copy is the same sealing; any changed field is another.
	if c := (Sealed{s.KeyID, bytes.Clone(s.DataKey), bytes.Clone(s.Nonce), bytes.Clone(s.Ciphertext)}); c.Token() != tok {
		t.Errorf("token of a copy %q, want %q", c.Token(), tok)
	}
	for name, changed := range map[string]Sealed{
		"key id":     {s.KeyID + "x", s.DataKey, s.Nonce, s.Ciphertext},
		"data key":   {s.KeyID, flip(s.DataKey, 0), s.Nonce, s.Ciphertext},
		"nonce":      {s.KeyID, s.DataKey, flip(s.Nonce, 0), s.Ciphertext},
		"ciphertext": {s.KeyID, s.DataKey, s.Nonce, flip(s.Ciphertext, 0)},
		// The same bytes split differently between fields.
		"shifted": {s.KeyID, s.DataKey[:len(s.DataKey)-1], append([]byte{s.DataKey[len(s.DataKey)-1]}, s.Nonce...), s.Ciphertext},
	} {
		if changed.Token() == tok {
			t.Errorf("%s changed: same token", name)
		}
	}
}

func TestNewLocal(t *testing.T) {
	for _, n := range []int{0, 16, 24, 31, 33, 64} {
		if _, err := NewLocal(make([]byte, n)); !errors.Is(err, ErrMasterKey) {
			t.Errorf("NewLocal of %d bytes: %v, want ErrMasterKey", n, err)
		}
	}
	master := newMaster(t)
	local, err := NewLocal(master)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^local:[0-9a-f]{8}$`).MatchString(local.KeyID()) {
		t.Errorf("key id %q", local.KeyID())
	}
	if s := fmt.Sprint(local); strings.Contains(s, hex.EncodeToString(master)) || !strings.Contains(s, local.KeyID()) {
		t.Errorf("printed as %q", s)
	}
	// NewLocal keeps no reference to the caller's key.
	ctx := context.Background()
	plain, encrypted, _, err := local.NewDataKey(ctx, testContext)
	if err != nil {
		t.Fatal(err)
	}
	clear(master)
	if got, err := local.OpenDataKey(ctx, encrypted, local.KeyID(), testContext); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("OpenDataKey after the caller cleared its key: %v", err)
	}
}

func TestLocalKeyFromHex(t *testing.T) {
	valid := strings.Repeat("0123456789abcdef", 4)
	tests := []struct {
		name string
		in   string
		ok   bool
	}{
		{"64 hexadecimal", valid, true},
		{"upper case", strings.ToUpper(valid), true},
		{"a file's newline", valid + "\n", true},
		{"empty", "", false},
		{"63 characters", valid[:63], false},
		{"65 characters", valid + "0", false},
		{"32 characters", valid[:32], false},
		{"not hexadecimal", valid[:63] + "g", false},
		{"inner space", valid[:32] + " " + valid[33:], false},
		{"base64", "ASNFZ4mrze8BI0VniavN7wEjRWeJq83vASNFZ4mrze8=", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key, err := LocalKeyFromHex(tt.in)
			if !tt.ok {
				if !errors.Is(err, ErrMasterKey) || key != nil {
					t.Fatalf("%d bytes, %v; want ErrMasterKey", len(key), err)
				}
				if strings.ContainsAny(err.Error(), "'\"") {
					t.Fatalf("error %q quotes the key", err)
				}
				return
			}
			if err != nil || len(key) != 32 || hex.EncodeToString(key) != valid {
				t.Fatalf("%x, %v", key, err)
			}
			if _, err := NewLocal(key); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func BenchmarkSealOpenLocal(b *testing.B) {
	ctx := context.Background()
	v := newLocalVault(b)
	secret := []byte(testPAN)
	for b.Loop() {
		s, err := v.Seal(ctx, secret, testContext)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := v.Open(ctx, s, testContext); err != nil {
			b.Fatal(err)
		}
	}
}
