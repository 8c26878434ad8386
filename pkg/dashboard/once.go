package dashboard

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"

	"payments/pkg/idempotency"
)

// A form that moves money carries a key made when the form was shown
// (formKey): sent twice (a double click, a reload, a retry after a lost
// answer), it moves the money once. The key is an Idempotency-Key of the
// company (the API's store and its rules: idempotency.Store), kept as long
// as the API keeps one.

// Errors of a form sent again.
var (
	// errFormInUse: the form's first sending still runs.
	errFormInUse = errors.New("dashboard: the form is being sent")
	// errFormReused: the key came back with other values.
	errFormReused = errors.New("dashboard: the form was sent with other values")
)

// formKeyPrefix keeps the dashboard's keys apart from the API clients'.
const formKeyPrefix = "dashboard-"

// newFormKey returns the key of a form shown now.
func newFormKey() string { return rand.Text() }

// once runs move, the movement of money a form asks for, once per form
// key: the first sending runs it holding the key (its effect is recorded
// with the money it moves); a later one answers the id the first created.
// A move refused with an error lets the form be sent again. hash
// identifies what the form asked (idempotency.RequestHash).
func (h *Handler) once(ctx context.Context, companyID, key, hash string, move func(context.Context) (string, error)) (string, error) {
	if key == "" || len(key) > idempotency.MaxKeyLength-len(formKeyPrefix) {
		return "", errFormReused
	}
	key = formKeyPrefix + key
	now := h.deps.Now()
	c := idempotency.Claim{RequestHash: hash, LeaseID: rand.Text(), Now: now,
		LeaseUntil: now.Add(idempotency.Lease), ExpiresAt: now.Add(idempotency.Retention)}
	rec, claimed, err := h.deps.Forms.Claim(ctx, companyID, key, c)
	switch {
	case err != nil:
		return "", err
	case !claimed && rec.RequestHash != hash:
		return "", errFormReused
	case !claimed && rec.Response != nil:
		return string(rec.Response.Body), nil
	case !claimed:
		return "", errFormInUse
	}
	ctx = idempotency.WithHeld(ctx, &idempotency.Held{CompanyID: companyID, Key: key, LeaseID: c.LeaseID})
	if rec.Effect.Committed() {
		ctx = idempotency.WithReplay(ctx, rec.Effect)
	}
	id, err := move(ctx)
	if err != nil {
		if rerr := h.deps.Forms.Release(context.WithoutCancel(ctx), companyID, key, c.LeaseID); rerr != nil {
			slog.WarnContext(ctx, "dashboard: release form key", "error", rerr)
		}
		return "", err
	}
	if err := h.deps.Forms.Complete(context.WithoutCancel(ctx), companyID, key, c.LeaseID, idempotency.Response{Status: 303, Body: []byte(id)}); err != nil {
		slog.WarnContext(ctx, "dashboard: complete form key", "error", err)
	}
	return id, nil
}
