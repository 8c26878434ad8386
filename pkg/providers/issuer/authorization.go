package issuer

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// AuthorizationRequest is the card network's request for a decision on a
// card payment, which the issuer forwards to us as it happens (POST
// /issuer/authorizations, signed as its notifications are) and whose
// answer it waits for, within the network's deadline. Amounts are USD
// cents.
type AuthorizationRequest struct {
	// ID is the network's id of the authorization: a retry of the request
	// carries the same one, and what follows the authorization
	// (settlements, reversals, refunds, the advice) names it.
	ID string `json:"id"`
	// CardID is the issuer's card id, Reference our card id.
	CardID    string `json:"card_id"`
	Reference string `json:"reference"`
	// Kind is AUTHORIZATION, PREAUTHORIZATION or VERIFICATION.
	Kind      string    `json:"kind"`
	Amount    int64     `json:"amount"`
	Currency  string    `json:"currency"`
	Merchant  Merchant  `json:"merchant"`
	CreatedAt time.Time `json:"created_at"`
}

// Decisions of an AuthorizationAnswer, and of an advice.
const (
	Approved = "APPROVED"
	Declined = "DECLINED"
)

// StandInReason is the decline reason of the network's stand-in: it
// declined on its own because our answer was late or missing.
const StandInReason = "issuer_timeout"

// AuthorizationAnswer is our answer to an AuthorizationRequest.
type AuthorizationAnswer struct {
	// Decision is APPROVED or DECLINED.
	Decision string `json:"decision"`
	// DeclineReason says why a decline: card_terminated, card_locked,
	// card_frozen, card_inactive, insufficient_funds, issuer_timeout,
	// card_not_found; null for an approval.
	DeclineReason *string `json:"decline_reason"`
	// TransactionID is our card transaction recording the decision (the
	// AUTHORIZATION, or the DECLINE); null when nothing was recorded (a
	// card we do not have).
	TransactionID *string `json:"transaction_id"`
	// AvailableBalance is what the card has available once the decision
	// is written (its balance less its holds), in USD cents.
	AvailableBalance int64 `json:"available_balance"`
}

// ErrBadAuthorizationRequest is an authorization request that cannot be
// decided as read.
var ErrBadAuthorizationRequest = errors.New("issuer: malformed authorization request")

// ParseAuthorizationRequest reads an authorization request's JSON: an id,
// our card reference, a known kind, an amount in USD (above 0, but for a
// verification, which has 0) and a merchant's name are required.
func ParseAuthorizationRequest(b []byte) (AuthorizationRequest, error) {
	var r AuthorizationRequest
	if err := json.Unmarshal(b, &r); err != nil {
		return AuthorizationRequest{}, fmt.Errorf("%w: %v", ErrBadAuthorizationRequest, err)
	}
	if err := r.Check(); err != nil {
		return AuthorizationRequest{}, fmt.Errorf("%w: %v", ErrBadAuthorizationRequest, err)
	}
	return r, nil
}

// Check checks r as ParseAuthorizationRequest does, for a request built
// rather than read.
func (r AuthorizationRequest) Check() error {
	if r.Reference == "" {
		return errors.New("no card reference")
	}
	return r.Transaction().checkAuthorization()
}

// Transaction returns the network's transaction r asks about.
func (r AuthorizationRequest) Transaction() *NetworkTransaction {
	m := r.Merchant
	return &NetworkTransaction{ID: r.ID, Kind: r.Kind, Amount: r.Amount, Currency: r.Currency, Merchant: &m}
}
