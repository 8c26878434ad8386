package moneystore_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"payments/pkg/cards"
	"payments/pkg/events"
	"payments/pkg/store"
	"payments/pkg/store/moneystore"
	"payments/pkg/store/storetest"
)

// TestEventSequencePerCard runs concurrent fundings and withdrawals of one
// card, each emitting an event about the card: the card's events, its
// issuance's two first, carry 1…N with no gap and no repeat, each in its
// body as stored; the counter ends at N; a later change numbers on, and
// several events of one transaction take consecutive numbers per object.
func TestEventSequencePerCard(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	s, ob := moneystore.NewCards(db), store.NewOutbox(db)
	w := usdWallet(t, db, 100_000)
	c := issue(t, s, w, uuid.NewString(), 50_000) // card.created (1) and card.fund (2)

	const each = 8
	var accepts []cards.Accept
	for i := range 2 * each {
		if i%2 == 0 {
			accepts = append(accepts, movement(w, c, cards.TxFunding, 100, 0, true))
			continue
		}
		a := movement(w, c, cards.TxWithdrawal, 100, 0, false)
		a.Events = []events.Event{cardEvent(c, events.CardWithdraw, a.Now)}
		accepts = append(accepts, a)
	}
	errs := make([]error, len(accepts))
	var wg sync.WaitGroup
	for i, a := range accepts {
		wg.Go(func() { errs[i] = s.Accept(ctx, a) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Accept %d: %v", i, err)
		}
	}

	// One more change, with two events about the card and one about its
	// transaction.
	last := movement(w, c, cards.TxFunding, 100, 0, true)
	about := cardEvent(c, events.TransactionFundingCompleted, last.Now)
	about.Object = last.Tx.ID
	last.Events = append(last.Events, about, cardEvent(c, events.CardFund, last.Now))
	if err := s.Accept(ctx, last); err != nil {
		t.Fatal(err)
	}

	var got []int64
	for _, a := range accepts {
		got = append(got, sequenceOf(t, ob, a.Events[0], c.ID))
	}
	slices.Sort(got)
	for i, n := range got {
		if want := int64(i + 3); n != want {
			t.Fatalf("the card's concurrent events carry %v, want 3…%d once each", got, 2*each+2)
		}
	}
	tests := []struct {
		name   string
		ev     events.Event
		object string
		want   int64
	}{
		{"first event of the last change", last.Events[0], c.ID, 2*each + 3},
		{"its event about the transaction", last.Events[1], last.Tx.ID, 1},
		{"its second event about the card", last.Events[2], c.ID, 2*each + 4},
	}
	for _, tt := range tests {
		if n := sequenceOf(t, ob, tt.ev, tt.object); n != tt.want {
			t.Errorf("%s: sequence %d, want %d", tt.name, n, tt.want)
		}
	}
	for object, want := range map[string]int64{c.ID: 2*each + 4, last.Tx.ID: 1} {
		if n, err := moneystore.SequenceForTest(ctx, db, c.CompanyID, object); err != nil || n != want {
			t.Errorf("counter of %s = %d, %v; want %d", object, n, err, want)
		}
	}
}

// sequenceOf reads ev as stored and returns its sequence, after checking
// that it is about object and that its body carries the same number and
// the data ev was built with.
func sequenceOf(t *testing.T, ob *store.Outbox, ev events.Event, object string) int64 {
	t.Helper()
	stored, err := ob.Event(context.Background(), ev.CompanyID, ev.ID)
	if err != nil {
		t.Fatal(err)
	}
	var body, built struct {
		Event    events.Kind     `json:"event"`
		Sequence int64           `json:"sequence"`
		Data     json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(stored.Body, &body); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(ev.Body, &built); err != nil {
		t.Fatal(err)
	}
	if stored.Object != object || body.Sequence != stored.Sequence || body.Event != ev.Kind ||
		string(body.Data) != string(built.Data) || !stored.CreatedAt.Equal(ev.CreatedAt.Truncate(time.Millisecond)) {
		t.Fatalf("stored event %+v, body %s; built %s about %s", stored, stored.Body, ev.Body, object)
	}
	return stored.Sequence
}
