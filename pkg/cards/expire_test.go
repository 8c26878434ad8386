package cards_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	awsevents "github.com/aws/aws-lambda-go/events"

	"payments/pkg/app/apptest"
	"payments/pkg/cards"
	"payments/pkg/events"
	"payments/pkg/function/sweeper"
	"payments/pkg/providers/issuer"
	"payments/pkg/store/moneystore"
	"payments/pkg/waittest"
)

// reversals returns the data of the company's
// transaction.reversal.completed events about authorization authID with
// reason.
func (e *networkEnv) reversals(token, authID, reason string) []map[string]any {
	e.T.Helper()
	var out []map[string]any
	for _, it := range e.Call(e.Webhooks, token, "GET", "/webhooks/events?limit=100&event=transaction.reversal.completed", "").Items() {
		p, _ := it.(map[string]any)["payload"].(map[string]any)
		if p["original_transaction_id"] == authID && p["reason"] == reason {
			out = append(out, p)
		}
	}
	return out
}

// eventsAbout returns the kinds of the company's events whose payload
// names transaction txID, oldest first, with their sequence.
func (e *networkEnv) eventsAbout(token, txID string) []string {
	e.T.Helper()
	var out []string
	for _, it := range e.Call(e.Webhooks, token, "GET", "/webhooks/events?limit=100", "").Items() {
		ev := it.(map[string]any)
		if p, _ := ev["payload"].(map[string]any); p["transaction_id"] == txID {
			out = append(out, fmt.Sprintf("%v#%v", ev["event"], ev["sequence"]))
		}
	}
	slices.Reverse(out)
	return out
}

// TestHoldExpires: the sweeper, on an injected clock, leaves a hold alone
// until CARD_HOLD_EXPIRY_SECONDS have passed since its authorization, then
// releases it once (a REVERSAL, transaction.reversal.completed with reason
// "expired", the issuer's card following ours); a later sweep does
// nothing more, and a settlement the network sends after the expiry is
// refused (ALREADY_REVERSED), the card unchanged.
func TestHoldExpires(t *testing.T) {
	t.Parallel()
	e := newNetworkEnv(t)
	companyID, token, _, cardID := e.fundedCard(20, 0)
	ctx := context.Background()
	cs := moneystore.NewCards(e.DB)
	auth, err := e.sandbox.Authorize(ctx, companyID, cardID, cards.AuthorizeInput{Amount: []byte("4"),
		MerchantName: "Hotel", MerchantCity: "Austin", MerchantCountry: "US", Type: "PREAUTHORIZATION"})
	if err != nil || auth.Hold != 400 {
		t.Fatalf("authorize: %+v, %v", auth, err)
	}
	waittest.Until(t, 30*time.Second, "the card-worker tells the issuer of the hold", func() bool {
		c, err := cs.Card(ctx, companyID, cardID)
		if err != nil {
			t.Fatal(err)
		}
		ic, err := e.sandbox.Cards.Issuer.Card(ctx, c.IssuerCardID)
		return err == nil && ic.Available == 1600
	})
	cfg := apptest.Recording(e.Cfg, "sweeper")
	cfg.CardHoldExpiry = time.Hour
	start := time.Now()
	sweeps := []struct {
		name    string
		at      time.Duration // after the authorization
		expired int           // the card_holds step's count
		held    int64
	}{
		{"before the expiry", 59 * time.Minute, 0, 400},
		{"after the expiry", 61 * time.Minute, 1, 0},
		{"again", 62 * time.Minute, 0, 0},
	}
	for _, s := range sweeps {
		sweep := apptest.MustSweeper(t, cfg, func() time.Time { return start.Add(s.at) })
		resp, err := sweep(ctx, awsevents.EventBridgeEvent{})
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := resp.(sweeper.Report)["card_holds"]; got != (sweeper.Outcome{Done: s.expired}) {
			t.Errorf("%s: card_holds %+v, want %d done", s.name, got, s.expired)
		}
		c, err := cs.Card(ctx, companyID, cardID)
		if err != nil {
			t.Fatal(err)
		}
		if c.Balance != 2000 || c.Held != s.held {
			t.Errorf("%s: balance %d, held %d; want 2000, %d", s.name, c.Balance, c.Held, s.held)
		}
		ic, err := e.sandbox.Cards.Issuer.Card(ctx, c.IssuerCardID)
		if err != nil {
			t.Fatal(err)
		}
		if ic.Balance != c.Balance || ic.Available != c.Available() {
			t.Errorf("%s: the issuer's card has %d, %d available; ours %d, %d", s.name, ic.Balance, ic.Available, c.Balance, c.Available())
		}
	}
	a, err := cs.Transaction(ctx, companyID, auth.ID)
	if err != nil || a.Hold != 0 || a.Settled != 0 || a.Status != cards.TxSuccess {
		t.Fatalf("the expired authorization: %+v, %v", a, err)
	}
	evs := e.reversals(token, auth.ID, events.ReversalReasonExpired)
	if len(evs) != 1 || evs[0]["type"] != "REVERSAL" || fmt.Sprint(evs[0]["amount"]) != "4" {
		t.Fatalf("expired reversal events %v, want one REVERSAL of 4", evs)
	}

	// The network settles the expired hold after all: an expired
	// authorization stays capturable, and the card pays it.
	capture, _, last := e.capture()
	c, _ := cs.Card(ctx, companyID, cardID)
	settle, err := capture.Follow(ctx, "", issuer.NotifySettlement, c.IssuerCardID, cardID, issuer.NetworkTransaction{AuthorizationID: a.IssuerTxID, Amount: 400, Close: true}, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.deliver(ctx, last()); err != nil {
		t.Fatal(err)
	}
	if o, found, err := cs.Outcome(ctx, companyID, claimOf(settle)); err != nil || !found || o.Refused != "" || o.BalanceDelta != -400 {
		t.Errorf("a settlement after the expiry: %+v, %v, %v; want the card debited 400", o, found, err)
	}
	if c, _ := cs.Card(ctx, companyID, cardID); c.Balance != 1600 || c.Held != 0 {
		t.Errorf("after the late settlement: balance %d, held %d; want 1600, 0", c.Balance, c.Held)
	}
	e.VerifyCards(companyID)
	e.CheckTimestamps(token)
}

// hookStore is a cards store that runs hook once, right after the first
// read of an authorization (Transaction, by an expiry) or of a network
// transaction (NetworkTransaction, by a settlement or reversal): what the
// hook writes lands between that read and the write it conditions.
type hookStore struct {
	cards.Store
	once sync.Once
	hook func()
}

func (h *hookStore) Transaction(ctx context.Context, companyID, id string) (cards.Transaction, error) {
	t, err := h.Store.Transaction(ctx, companyID, id)
	h.once.Do(h.hook)
	return t, err
}

func (h *hookStore) NetworkTransaction(ctx context.Context, companyID, id string) (cards.Transaction, error) {
	t, err := h.Store.NetworkTransaction(ctx, companyID, id)
	h.once.Do(h.hook)
	return t, err
}

// TestHoldExpiryRacesTheNetwork: against DynamoDB Local, the expiry of a
// hold and the network's settlement (or reversal) of it release it
// exactly once, by one of them: either the network's released it and no
// expiry happened, or one expiry happened (one reason "expired" event) and
// the network's found nothing more to release; a settlement takes its
// amount either way (the issuer's word: an expired authorization is still
// captured), a reversal nothing. Each way round is forced
// (the other's write between one's read and its conditional write), then
// two sweeps and the card-worker race freely, several times; the card's
// balance, holds and the invariants agree after each.
func TestHoldExpiryRacesTheNetwork(t *testing.T) {
	t.Parallel()
	e := newNetworkEnv(t)
	companyID, token, _, cardID := e.fundedCard(50, 0)
	ctx := context.Background()
	cs := moneystore.NewCards(e.DB)
	svc, err := testCards(e.Cfg, e.DB)
	if err != nil {
		t.Fatal(err)
	}
	// hooked returns a service whose store runs hook as hookStore says.
	hooked := func(hook func()) *cards.Service {
		h := *svc
		h.Store = &hookStore{Store: svc.Store, hook: hook}
		return &h
	}
	card, err := cs.Card(ctx, companyID, cardID)
	if err != nil {
		t.Fatal(err)
	}
	capture, _, last := e.capture()
	// race runs the expiries and the network's notification body of
	// authorization auth, and says which expiries happened.
	type race func(t *testing.T, auth cards.Transaction, body []byte) (expired []bool)
	apply := func(t *testing.T, s *cards.Service, body []byte) {
		n, err := issuer.ParseNotification(body)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Apply(ctx, n); err != nil {
			t.Fatalf("apply: %v", err)
		}
	}
	expire := func(t *testing.T, s *cards.Service, auth cards.Transaction) bool {
		x, err := s.ExpireHold(ctx, auth)
		if err != nil {
			t.Fatalf("expire: %v", err)
		}
		return x
	}
	races := []struct {
		name string
		run  race
		// winner is who must win: "expiry", the network, or "" (either).
		winner string
	}{
		{"the network writes between the expiry's read and write", func(t *testing.T, auth cards.Transaction, body []byte) []bool {
			return []bool{expire(t, hooked(func() { apply(t, svc, body) }), auth)}
		}, "network"},
		{"the expiry writes between the network's read and write", func(t *testing.T, auth cards.Transaction, body []byte) []bool {
			var x bool
			apply(t, hooked(func() { x = expire(t, svc, auth) }), body)
			return []bool{x}
		}, "expiry"},
		{"two sweeps and the card-worker at once", func(t *testing.T, auth cards.Transaction, body []byte) []bool {
			ready := make(chan struct{})
			expired := make([]bool, 2)
			errs := make([]error, 3)
			var wg sync.WaitGroup
			for i := range expired {
				wg.Go(func() {
					<-ready
					expired[i], errs[i] = svc.ExpireHold(ctx, auth)
				})
			}
			wg.Go(func() {
				<-ready
				errs[2] = e.deliver(ctx, body)
			})
			close(ready)
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			return expired
		}, ""},
	}
	balance := int64(5000)
	for _, r := range races {
		for _, follow := range []string{issuer.NotifySettlement, issuer.NotifyReversal} {
			rounds := 1
			if r.winner == "" {
				rounds = 4
			}
			for round := range rounds {
				t.Run(fmt.Sprintf("%s/%s/%d", r.name, follow, round), func(t *testing.T) {
					if _, err := capture.Authorize(ctx, "", card.IssuerCardID, cardID, issuer.KindAuthorization, 100,
						issuer.Merchant{Name: "Shop", City: "Austin", Country: "US"}); err != nil {
						t.Fatal(err)
					}
					if err := e.deliver(ctx, last()); err != nil {
						t.Fatal(err)
					}
					auth, err := cs.NetworkTransaction(ctx, companyID, issuerTxID(t, last()))
					if err != nil || auth.Hold != 100 {
						t.Fatalf("authorization %+v, %v", auth, err)
					}
					event, err := capture.Follow(ctx, "", follow, card.IssuerCardID, cardID, issuer.NetworkTransaction{AuthorizationID: auth.IssuerTxID, Amount: 100, Close: follow == issuer.NotifySettlement}, "")
					if err != nil {
						t.Fatal(err)
					}
					n := 0
					for _, x := range r.run(t, auth, last()) {
						if x {
							n++
						}
					}
					o, found, err := cs.Outcome(ctx, companyID, claimOf(event))
					if err != nil || !found {
						t.Fatalf("the %s's outcome: %v, %v", follow, found, err)
					}
					// The network's word is never refused: its settlement
					// takes the 1.00 whoever released the hold first (an
					// expired authorization stays capturable), its
					// reversal finds nothing more to release after the
					// expiry; the hold is released once.
					winner := "network"
					switch {
					case n > 1 || o.Refused != "":
						t.Fatalf("%d expiries, the %s refused %q: want at most one expiry, the network applied", n, follow, o.Refused)
					case n == 1:
						winner = "expiry"
					}
					if follow == issuer.NotifySettlement {
						balance -= 100
					}
					if r.winner != "" && winner != r.winner {
						t.Errorf("the %s won, want the %s", winner, r.winner)
					}
					if got := len(e.reversals(token, auth.ID, events.ReversalReasonExpired)); got != n {
						t.Errorf("%d expired reversal events, want %d", got, n)
					}
					c, err := cs.Card(ctx, companyID, cardID)
					if err != nil {
						t.Fatal(err)
					}
					if c.Balance != balance || c.Held != 0 {
						t.Fatalf("balance %d, held %d; want %d, 0", c.Balance, c.Held, balance)
					}
				})
			}
		}
	}
	e.VerifyCards(companyID)
}

// downIssuer is an issuer that cannot be told anything.
type downIssuer struct{ issuer.Issuer }

func (downIssuer) PostCard(context.Context, issuer.Posting) (issuer.Card, error) {
	return issuer.Card{}, cards.ErrIssuerUnavailable
}

// TestHoldExpiryTellsTheIssuerLater: an expiry the issuer could not be
// told of releases our hold, once; the authorization stays in the open
// hold index, and the next sweep, the issuer answering, tells it, so that
// its card follows ours, and takes it out.
func TestHoldExpiryTellsTheIssuerLater(t *testing.T) {
	t.Parallel()
	e := newNetworkEnv(t)
	companyID, token, _, cardID := e.fundedCard(20, 0)
	ctx := context.Background()
	cs := moneystore.NewCards(e.DB)
	auth, err := e.sandbox.Authorize(ctx, companyID, cardID, cards.AuthorizeInput{Amount: []byte("3"),
		MerchantName: "Garage", MerchantCity: "Austin", MerchantCountry: "US"})
	if err != nil || auth.Hold != 300 {
		t.Fatalf("authorize: %+v, %v", auth, err)
	}
	svc, err := testCards(e.Cfg, e.DB)
	if err != nil {
		t.Fatal(err)
	}
	down := *svc
	down.Issuer = downIssuer{svc.Issuer}
	later := time.Now().Add(time.Hour)
	atIssuer := func() (ours cards.Card, theirs issuer.Card) {
		t.Helper()
		c, err := cs.Card(ctx, companyID, cardID)
		if err != nil {
			t.Fatal(err)
		}
		ic, err := e.sandbox.Cards.Issuer.Card(ctx, c.IssuerCardID)
		if err != nil {
			t.Fatal(err)
		}
		return c, ic
	}
	waittest.Until(t, 30*time.Second, "the card-worker tells the issuer of the hold", func() bool {
		_, theirs := atIssuer()
		return theirs.Balance-theirs.Available == 300
	})
	steps := []struct {
		name       string
		svc        *cards.Service
		expired    bool
		failed     bool
		indexed    int // holds left in the index
		issuerHeld int64
	}{
		{"the issuer down", &down, true, true, 1, 300},
		{"the issuer back", svc, false, false, 0, 0},
		{"again", svc, false, false, 0, 0},
	}
	for _, s := range steps {
		holds, err := cs.HoldsBefore(ctx, later, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range holds {
			expired, err := s.svc.ExpireHold(ctx, h)
			if expired != s.expired || (err != nil) != s.failed {
				t.Errorf("%s: expired %v, error %v; want %v, failed %v", s.name, expired, err, s.expired, s.failed)
			}
		}
		if left, _ := cs.HoldsBefore(ctx, later, 100); len(left) != s.indexed {
			t.Errorf("%s: %d holds in the index, want %d", s.name, len(left), s.indexed)
		}
		ours, theirs := atIssuer()
		if ours.Held != 0 || theirs.Balance-theirs.Available != s.issuerHeld {
			t.Errorf("%s: we hold %d, the issuer %d; want 0, %d", s.name, ours.Held, theirs.Balance-theirs.Available, s.issuerHeld)
		}
	}
	if n := len(e.reversals(token, auth.ID, events.ReversalReasonExpired)); n != 1 {
		t.Errorf("%d expired reversal events, want 1", n)
	}
	e.VerifyCards(companyID)
}

// claimOf returns what claims notification n's movement: a settlement's,
// a refund's and a reversal's transaction id, any other's event id.
func claimOf(n issuer.Notification) string {
	switch n.Type {
	case issuer.NotifySettlement, issuer.NotifyRefund, issuer.NotifyReversal:
		return n.Transaction.ID
	}
	return n.ID
}
