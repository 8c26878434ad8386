package bank

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Magic values of the sandbox bank (the README's table).
const (
	// SandboxRejectSuffix ends the references of the transfers the sandbox
	// bank refuses; it receives every other transfer.
	SandboxRejectSuffix = "-reject"
	// SandboxDelay is how long after a transfer is declared the sandbox
	// bank answers.
	SandboxDelay = 5 * time.Second
)

// Queue sends a message, visible after delay.
type Queue interface {
	Send(ctx context.Context, body []byte, delay time.Duration) error
}

// Message is what the sandbox bank queues for a declared transfer: the
// fund-worker, which consumes the queue, asks it to Check the funding named
// and confirms or rejects it.
type Message struct {
	CompanyID string `json:"company_id"`
	FundingID string `json:"transaction_id"`
}

// Sandbox is the simulated bank. It keeps nothing: Expect queues a Message
// to be delivered after SandboxDelay, and Check decides by the reference
// alone, at once.
type Sandbox struct {
	queue Queue
}

var _ Bank = (*Sandbox)(nil)

// NewSandbox returns the sandbox bank, which queues its answers on q. With
// a nil q it only answers Check (the consumer of the queue), and Expect
// fails.
func NewSandbox(q Queue) *Sandbox { return &Sandbox{queue: q} }

// Expect queues the Message of t, delayed by SandboxDelay.
func (s *Sandbox) Expect(ctx context.Context, t Transfer) error {
	if s.queue == nil {
		return errors.New("bank: sandbox: no queue to answer on")
	}
	body, err := json.Marshal(Message{CompanyID: t.CompanyID, FundingID: t.FundingID})
	if err != nil {
		return fmt.Errorf("bank: encode message: %w", err)
	}
	if err := s.queue.Send(ctx, body, SandboxDelay); err != nil {
		return fmt.Errorf("bank: sandbox: queue funding %s: %w", t.FundingID, err)
	}
	return nil
}

// Check refuses a transfer whose reference ends in SandboxRejectSuffix and
// receives any other.
func (s *Sandbox) Check(_ context.Context, t Transfer) (Outcome, error) {
	if strings.HasSuffix(t.Reference, SandboxRejectSuffix) {
		return Refused, nil
	}
	return Received, nil
}
