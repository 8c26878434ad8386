package idempotency

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
)

// Held is the key a request holds while it runs, carried in its context
// (WithHeld): the store writes the request's Effect onto the key's record in
// the same transaction as the movement of money itself, on the condition
// that the request still holds the key (its LeaseID) and that no effect is
// recorded yet, so that a request never commits twice under one key and a
// retry after any crash finds what the first one did.
type Held struct {
	CompanyID, Key, LeaseID string
	recorded                atomic.Bool
}

// Recorded marks the request's effect as committed: later transactions of
// the same request do not record one again (a card funding settles in a
// second transaction).
func (h *Held) Recorded() { h.recorded.Store(true) }

type heldKey struct{}

type replayKey struct{}

// WithHeld returns ctx carrying the key h the request holds.
func WithHeld(ctx context.Context, h *Held) context.Context {
	return context.WithValue(ctx, heldKey{}, h)
}

// HeldBy returns the key held by ctx's request, while its effect is not
// yet recorded: the store writes the effect of the transaction that moves
// the money with it.
func HeldBy(ctx context.Context) (*Held, bool) {
	h, ok := ctx.Value(heldKey{}).(*Held)
	if !ok || h.recorded.Load() {
		return nil, false
	}
	return h, true
}

// WithReplay returns ctx for the retry of a request whose first run
// committed e but stored no response: the route answers from e
// (Replaying) instead of moving money again.
func WithReplay(ctx context.Context, e Effect) context.Context {
	return context.WithValue(ctx, replayKey{}, e)
}

// Replaying returns the effect that ctx's request answers from, if it is
// the retry of a request that committed one. A route that moves money
// checks it first and then builds its answer from what the effect names,
// as it stands now.
func Replaying(ctx context.Context) (Effect, bool) {
	e, ok := ctx.Value(replayKey{}).(Effect)
	return e, ok && e.Committed()
}

// EncodeReceipt encodes v, the answer of a movement, as the receipt of
// its effect.
func EncodeReceipt(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("idempotency: encode receipt: %w", err)
	}
	return b, nil
}

// DecodeReceipt decodes the receipt of e, encoded by EncodeReceipt.
func DecodeReceipt[T any](e Effect) (T, error) {
	var v T
	if err := json.Unmarshal(e.Receipt, &v); err != nil {
		return v, fmt.Errorf("idempotency: the receipt of %s: %w", e.ID, err)
	}
	return v, nil
}
