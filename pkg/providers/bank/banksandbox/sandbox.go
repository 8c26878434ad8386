// Package banksandbox is the simulated bank of sandbox stages, a bank.Bank
// that keeps nothing: it answers a declared transfer on a queue, deciding by
// its reference.
package banksandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"payments/pkg/providers/bank"
)

// Magic values of the sandbox bank (the README's table).
const (
	// RejectSuffix ends the references of the transfers the sandbox
	// bank refuses; it receives every other transfer.
	RejectSuffix = "-reject"
	// Delay is how long after a transfer is declared the sandbox
	// bank answers.
	Delay = 5 * time.Second
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

// Bank is the simulated bank. It keeps nothing: Expect queues a Message
// to be delivered after Delay, and Check decides by the reference
// alone, at once.
type Bank struct {
	queue Queue
}

var _ bank.Bank = (*Bank)(nil)

// New returns the sandbox bank, which queues its answers on q. With
// a nil q it only answers Check (the consumer of the queue), and Expect
// fails.
func New(q Queue) *Bank { return &Bank{queue: q} }

// Expect queues the Message of t, delayed by Delay.
func (s *Bank) Expect(ctx context.Context, t bank.Transfer) error {
	if s.queue == nil {
		return errors.New("bank: sandbox: no queue to answer on")
	}
	body, err := json.Marshal(Message{CompanyID: t.CompanyID, FundingID: t.FundingID})
	if err != nil {
		return fmt.Errorf("bank: encode message: %w", err)
	}
	if err := s.queue.Send(ctx, body, Delay); err != nil {
		return fmt.Errorf("bank: sandbox: queue funding %s: %w", t.FundingID, err)
	}
	return nil
}

// Check refuses a transfer whose reference ends in RejectSuffix and
// receives any other.
func (s *Bank) Check(_ context.Context, t bank.Transfer) (bank.Outcome, error) {
	if strings.HasSuffix(t.Reference, RejectSuffix) {
		return bank.Refused, nil
	}
	return bank.Received, nil
}
