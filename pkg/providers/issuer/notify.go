package issuer

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Notification is what an issuer reports about one of its cards by calling
// us: it reaches the issuer-events queue and the card-worker applies it,
// once per ID whatever the queue repeats.
type Notification struct {
	// ID is the issuer's id of the event; an event is applied once.
	ID   string `json:"id"`
	Type string `json:"type"`
	// CardID is the issuer's card id, Reference our card id.
	CardID    string `json:"card_id"`
	Reference string `json:"reference"`
	// Reason says why, for a termination.
	Reason    string    `json:"reason,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// Notification types.
const (
	// NotifyCardTerminated is a card the issuer terminated on its own (a
	// risk block): the card is ended here too, its balance refunded.
	NotifyCardTerminated = "card.terminated"
)

// ErrBadNotification is a notification that cannot be applied as read.
var ErrBadNotification = errors.New("issuer: malformed notification")

// ParseNotification reads a notification's JSON; an id, a known type and
// our card reference are required.
func ParseNotification(b []byte) (Notification, error) {
	var n Notification
	if err := json.Unmarshal(b, &n); err != nil {
		return Notification{}, fmt.Errorf("%w: %v", ErrBadNotification, err)
	}
	switch {
	case n.ID == "":
		return Notification{}, fmt.Errorf("%w: no id", ErrBadNotification)
	case n.Reference == "":
		return Notification{}, fmt.Errorf("%w: no card reference", ErrBadNotification)
	case n.Type != NotifyCardTerminated:
		return Notification{}, fmt.Errorf("%w: unknown type %q", ErrBadNotification, n.Type)
	}
	return n, nil
}
