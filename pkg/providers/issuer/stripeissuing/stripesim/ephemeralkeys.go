package stripesim

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"time"
)

// EphemeralKeyTTL is how long the simulation's ephemeral keys last.
const EphemeralKeyTTL = 15 * time.Minute

// createEphemeralKey answers POST /v1/ephemeral_keys for an Issuing card
// (Issuing Elements): Stripe requires an explicit Stripe-Version header, the
// card and the nonce Stripe.js made. The key is a fresh secret each time; the
// simulation keeps none, as no call of ours reads a key back.
func (s *Sim) createEphemeralKey(r *request) result {
	if r.Header.Get("Stripe-Version") == "" {
		return invalid("", "Stripe-Version header is required when creating an ephemeral key.")
	}
	card, nonce := r.form.Get("issuing_card"), r.form.Get("nonce")
	switch {
	case card == "":
		return invalid("parameter_missing", "Missing required param: issuing_card.")
	case nonce == "":
		return invalid("parameter_missing", "Missing required param: nonce.")
	}
	s.mu.Lock()
	_, found := s.cards[card]
	s.mu.Unlock()
	if !found {
		return invalid("resource_missing", "No such issuing.card: '"+card+"'")
	}
	secret := make([]byte, 24)
	_, _ = rand.Read(secret)
	now := s.cfg.Now().UTC()
	b, _ := json.Marshal(map[string]any{
		"id": newID("ephkey_"), "object": "ephemeral_key",
		"associated_objects": []map[string]string{{"id": card, "type": "issuing.card"}},
		"created":            now.Unix(), "expires": now.Add(EphemeralKeyTTL).Unix(), "livemode": false,
		"secret": "ek_test_" + hex.EncodeToString(secret),
	})
	return ok(b)
}
