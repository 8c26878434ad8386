package issuer

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"payments/pkg/ids"
)

// SandboxNetwork is the simulated card network of sandbox stages: it makes
// up what a merchant does with a card (authorizations, settlements,
// reversals, refunds) and what the issuer does on its own (a
// termination), and reports each as the issuer would, a notification
// delivered by Deliver, which signs it and hands it to POST
// /issuer/webhooks. It records nothing of ours: its transaction and event
// ids are its own (ntx_<uuid>, evt_<uuid>), and whether a transaction is
// approved is decided by us when the notification is applied.
type SandboxNetwork struct {
	// Deliver delivers a notification's JSON body to us.
	Deliver func(ctx context.Context, body []byte) error
	// Now returns the current time; tests may replace it.
	Now func() time.Time
}

// NewSandboxNetwork returns the sandbox network delivering by deliver.
func NewSandboxNetwork(deliver func(ctx context.Context, body []byte) error) *SandboxNetwork {
	return &SandboxNetwork{Deliver: deliver, Now: time.Now}
}

// Authorize reports an authorization of kind for amount cents at m on the
// issuer's card cardID (our card reference) and returns its event id.
func (n *SandboxNetwork) Authorize(ctx context.Context, cardID, reference, kind string, amount int64, m Merchant) (string, error) {
	return n.send(ctx, Notification{Type: NotifyAuthorization, CardID: cardID, Reference: reference,
		Transaction: &NetworkTransaction{Kind: kind, Amount: amount, Merchant: &m}})
}

// Follow reports a settlement, a reversal or a refund (typ, one of
// NotifySettlement, NotifyReversal, NotifyRefund) of amount cents on
// authorization authorizationID and returns its event id.
func (n *SandboxNetwork) Follow(ctx context.Context, typ, cardID, reference, authorizationID string, amount int64) (string, error) {
	return n.send(ctx, Notification{Type: typ, CardID: cardID, Reference: reference,
		Transaction: &NetworkTransaction{AuthorizationID: authorizationID, Amount: amount}})
}

// Terminated reports that the issuer terminated card cardID, for reason,
// and returns its event id.
func (n *SandboxNetwork) Terminated(ctx context.Context, cardID, reference, reason string) (string, error) {
	return n.send(ctx, Notification{Type: NotifyCardTerminated, CardID: cardID, Reference: reference, Reason: reason})
}

// send gives n its ids and delivers it.
func (n *SandboxNetwork) send(ctx context.Context, no Notification) (string, error) {
	now := n.Now().UTC()
	no.ID, no.CreatedAt = "evt_"+ids.NewV7(now), now
	if t := no.Transaction; t != nil {
		t.ID, t.Currency = "ntx_"+ids.NewV7(now), "USD"
	}
	if err := no.check(); err != nil {
		return "", fmt.Errorf("%w: %v", ErrBadNotification, err)
	}
	body, err := json.Marshal(no)
	if err != nil {
		return "", fmt.Errorf("issuer: encode notification: %w", err)
	}
	if err := n.Deliver(ctx, body); err != nil {
		return "", fmt.Errorf("issuer: deliver notification %s: %w", no.ID, err)
	}
	return no.ID, nil
}
