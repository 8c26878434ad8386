package cards_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"payments/pkg/app/apptest"
	"payments/pkg/cards"
	"payments/pkg/function"
	"payments/pkg/function/base"
	"payments/pkg/function/issuerauthorizations"
	"payments/pkg/idempotency"
	"payments/pkg/issuerhooks"
	"payments/pkg/providers/issuer"
	"payments/pkg/providers/issuer/issuerdb"
	"payments/pkg/providers/issuer/issuersandbox"
	"payments/pkg/store"
	"payments/pkg/store/moneystore"
)

// authorizationRequest returns the JSON of an authorization request of
// the network on card, for amount cents.
func authorizationRequest(t *testing.T, id string, card cards.Card, kind string, amount int64) string {
	t.Helper()
	b, err := json.Marshal(issuer.AuthorizationRequest{ID: id, CardID: card.IssuerCardID, Reference: card.ID, Kind: kind,
		Amount: amount, Currency: "USD", Merchant: issuer.Merchant{Name: "Book Shop", City: "Austin", Country: "US"},
		CreatedAt: time.Now().UTC()})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// ask posts body to POST /issuer/authorizations of h, signed with the
// issuer's secret at now.
func (e *networkEnv) ask(h function.HTTPHandler, body string, now time.Time) apptest.Result {
	e.T.Helper()
	return e.Call(h, "", "POST", "/issuer/authorizations", body,
		issuerhooks.Header, issuerhooks.Sign(apptest.IssuerTestSecret, []byte(body), now))
}

// TestDecisionInTheRequest: through the issuer-authorizations function,
// a signed request is answered 200 with the decision written; replayed
// three times, it gets the same answer and holds once; a decline is
// answered with its reason and its fee taken once; a card we do not have
// is declined, recording nothing; an unsigned, stale or malformed request
// is refused, deciding nothing. The warm decision path makes one read (two
// for a verification) and one TransactWriteItems, nothing else: its events
// wait in the outbox for the network's advice.
func TestDecisionInTheRequest(t *testing.T) {
	t.Parallel()
	e := newNetworkEnv(t)
	companyID, token, _, cardID := e.fundedCard(20, 10)
	ctx := context.Background()
	cs := moneystore.NewCards(e.DB)
	card, err := cs.Card(ctx, companyID, cardID)
	if err != nil {
		t.Fatal(err)
	}
	// A fresh instance: an empty fee schedule cache, on a clock that stands
	// still, so that the warm steps find what the cold ones read however
	// slowly the machine runs them.
	now := time.Now()
	counter := &apptest.RequestCounter{}
	h, err := issuerauthorizations.NewWith(ctx, counter.Counting(apptest.Recording(e.Cfg, "issuer-authorizations")),
		base.NewCaches(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	held := func() int64 {
		c, err := cs.Card(ctx, companyID, cardID)
		if err != nil {
			t.Fatal(err)
		}
		return c.Held
	}
	decision := func(r apptest.Result) string {
		return fmt.Sprint(r.Status, " ", r.Str("data", "decision"), " ", r.Str("data", "decline_reason"), " ", r.Str("data", "available_balance"))
	}

	// Cold, the first approval reads the card's company, then the card;
	// the first decline, the card and the fee schedule. Warm, each reads
	// the card alone; a verification, whose event is about the card, the
	// counter of the card's events too (the other decisions' events are
	// about the card transaction they create, whose counter is not read).
	auth, verify := issuer.KindAuthorization, issuer.KindVerification
	steps := []struct {
		name, id, kind string
		amount         int64
		want           string
		reads          int
	}{
		{"cold approval", "ntx_approve-1", auth, 1500, "200 APPROVED <nil> 500", 2},
		{"cold decline", "ntx_decline-1", auth, 1000, "200 DECLINED insufficient_funds 450", 2},
		{"warm approval", "ntx_approve-2", auth, 100, "200 APPROVED <nil> 350", 1},
		{"warm decline, the fee from the card", "ntx_decline-2", auth, 1000, "200 DECLINED insufficient_funds 300", 1},
		{"warm verification", "ntx_verify-1", verify, 0, "200 APPROVED <nil> 300", 2},
	}
	answers := map[string]apptest.Result{}
	for _, s := range steps {
		counter.Take()
		r := e.ask(h, authorizationRequest(t, s.id, card, s.kind, s.amount), now)
		if got := decision(r); got != s.want {
			t.Fatalf("%s: %s, want %s (%s)", s.name, got, s.want, r.Raw)
		}
		answers[s.id] = r
		ops, attempts := counter.Take()
		want := map[string]int{"GetItem TABLE_NAME": s.reads, "TransactWriteItems TABLE_NAME": 1}
		if !maps.Equal(ops, want) || attempts != apptest.Total(want) {
			t.Errorf("%s: requests %v in %d attempts, want %v", s.name, ops, attempts, want)
		}
	}
	// Replayed, each request gets its decision again, and writes nothing.
	for _, s := range steps {
		for range 3 {
			again := e.ask(h, authorizationRequest(t, s.id, card, s.kind, s.amount), now)
			first := answers[s.id]
			if again.Str("data", "decision") != first.Str("data", "decision") || again.Str("data", "transaction_id") != first.Str("data", "transaction_id") ||
				again.Str("data", "available_balance") != "300" {
				t.Fatalf("%s replayed: %s, first %s", s.name, again.Raw, first.Raw)
			}
		}
	}
	if got := held(); got != 1600 {
		t.Fatalf("held %d after requests replayed, want 1600", got)
	}
	// A decline whose fee the card cannot pay all of lists the company's
	// wallets and reads the USD wallet (its ledger entry's balances), to
	// take the rest from it.
	if r := e.ask(h, authorizationRequest(t, "ntx_approve-3", card, auth, 290), now); decision(r) != "200 APPROVED <nil> 10" {
		t.Fatalf("approval of all but 0.10: %s", r.Raw)
	}
	counter.Take()
	if r := e.ask(h, authorizationRequest(t, "ntx_decline-3", card, auth, 100), now); decision(r) != "200 DECLINED insufficient_funds 0" {
		t.Fatalf("decline, the fee from the card and the wallet: %s", r.Raw)
	}
	want := map[string]int{"GetItem TABLE_NAME": 2, "Query TABLE_NAME": 1, "TransactWriteItems TABLE_NAME": 1}
	if ops, _ := counter.Take(); !maps.Equal(ops, want) {
		t.Errorf("decline, the fee from the card and the wallet: requests %v, want %v", ops, want)
	}
	approve := authorizationRequest(t, "ntx_approve-1", card, issuer.KindAuthorization, 1500)
	if got := e.eventCount(token, "fee.payment_failure.charged"); got != 3 {
		t.Errorf("%d failed-payment fees, want 3", got)
	}

	// The id of a decision asked again of another card of the company.
	r := e.Call(e.Cards, token, "POST", "/cards", `{"customer_id":"`+card.CustomerID+`","amount":5}`)
	if r.Status != 201 {
		t.Fatalf("a second card: %s", r.Raw)
	}
	second, err := cs.Card(ctx, companyID, r.Str("data", "id"))
	if err != nil {
		t.Fatal(err)
	}
	if r := e.ask(h, authorizationRequest(t, "ntx_approve-1", second, auth, 100), now); r.Status != 409 || r.Str("code") != "DUPLICATE_TRANSACTION" {
		t.Errorf("a decided id asked of another card: %d %s", r.Status, r.Raw)
	}
	for _, ref := range []string{"0196d1e2-0000-7000-8000-00000000dead", "not-one-of-our-ids"} {
		unknown := card
		unknown.ID = ref
		if r := e.ask(h, authorizationRequest(t, "ntx_unknown", unknown, issuer.KindAuthorization, 100), now); decision(r) != "200 DECLINED card_not_found 0" || r.Str("data", "transaction_id") != "<nil>" {
			t.Errorf("a card we do not have (%s): %s", ref, r.Raw)
		}
	}
	for _, c := range []struct {
		name   string
		r      apptest.Result
		status int
	}{
		{"unsigned", e.Call(h, "", "POST", "/issuer/authorizations", approve), 401},
		{"stale", e.ask(h, authorizationRequest(t, "ntx_stale", card, issuer.KindAuthorization, 100), now.Add(-issuerhooks.Tolerance-time.Minute)), 401},
		{"forged", e.Call(h, "", "POST", "/issuer/authorizations", authorizationRequest(t, "ntx_forged", card, issuer.KindAuthorization, 100),
			issuerhooks.Header, issuerhooks.Sign([]byte("another secret, long enough to be one........"), []byte(approve), now)), 401},
		{"malformed", e.ask(h, `{"id":"ntx_bad","reference":"`+cardID+`","kind":"CAPTURE","amount":1,"currency":"USD","merchant":{"name":"S"}}`, now), 400},
	} {
		if c.r.Status != c.status {
			t.Errorf("%s: %d %s, want %d", c.name, c.r.Status, c.r.Raw, c.status)
		}
	}
	if got := held(); got != 1890 {
		t.Errorf("held %d, want 1890", got)
	}
	e.VerifyCards(companyID)
}

// declinedLate checks authorization id of the company, approved by us
// after the network declined it on its own, as every reader sees it: the
// network's DECLINE, issuer_timeout, no fee, nothing held, in the card's
// transaction list too, with the events about it want (the approval's
// taken back unless it was published) and no reversal.
func (e *networkEnv) declinedLate(token, companyID, id string, want []string) {
	e.T.Helper()
	tx, err := moneystore.NewCards(e.DB).NetworkTransaction(context.Background(), companyID, id)
	if err != nil || tx.Type != cards.TxDecline || tx.Status != cards.TxFailed || tx.DeclineReason != cards.DeclineIssuerTimeout ||
		tx.Fee != 0 || tx.Hold != 0 || tx.CardDelta != 0 {
		e.T.Errorf("the late approval: %+v, %v; want the network's decline", tx, err)
	}
	r := e.Call(e.Cards, token, "GET", "/cards/"+tx.CardID+"/transactions?limit=100", "")
	for _, it := range r.Items() {
		if it := it.(map[string]any); it["id"] == tx.ID && (it["type"] != "DECLINE" || it["status"] != "FAILED") {
			e.T.Errorf("the card's transactions list it as %v %v, want DECLINE FAILED", it["type"], it["status"])
		}
	}
	if got := e.eventsAbout(token, tx.ID); !slices.Equal(got, want) {
		e.T.Errorf("events about the late approval %v, want %v", got, want)
	}
	if got := e.reversals(token, tx.ID, issuer.StandInReason); len(got) != 0 {
		e.T.Errorf("%d reversals of the late approval, want none", len(got))
	}
}

// unconvertible is a cards store that cannot write the network's decline
// of a late approval.
type unconvertible struct{ cards.Store }

func (u unconvertible) Record(ctx context.Context, r cards.Record) error {
	if r.OriginalAfter != nil && r.OriginalAfter.Type == cards.TxDecline {
		return errors.New("injected: the table is unavailable")
	}
	return u.Store.Record(ctx, r)
}

// lateNetwork returns a sandbox network of e whose decisions the test
// holds: each is asked, then made when gate is closed (before), or made at
// once and answered when gate is closed; the network waits 10 ms for it,
// so it stands in. The decisions' answers arrive on late once made.
func (e *networkEnv) lateNetwork(before bool, gate <-chan struct{}) (*issuersandbox.Network, <-chan issuer.AuthorizationAnswer, func() [][]byte) {
	n, bodies, _ := e.capture()
	late := make(chan issuer.AuthorizationAnswer, 1)
	ask := n.Ask
	n.Ask = func(ctx context.Context, body []byte) (issuer.AuthorizationAnswer, error) {
		if before {
			<-gate
		}
		a, err := ask(ctx, body)
		late <- a
		if !before {
			<-gate
		}
		return a, err
	}
	n.Deadline = 10 * time.Millisecond
	return n, late, bodies
}

// TestStandIn: when our decision is late, the network declines on its
// own (issuer_timeout) and advises it, and everything that reports the
// decision reports the network's: decided before its advice is applied,
// our approval becomes the network's DECLINE (issuer_timeout, no fee),
// its hold released once, its unpublished transaction.authorization.created
// taken back for one transaction.authorization.declined; advised first,
// the decline is recorded, without fee, and our late decision finds it
// decided and holds nothing. The sandbox route answers with the
// authorization as the network decided it, whichever came first.
func TestStandIn(t *testing.T) {
	t.Parallel()
	e := newNetworkEnv(t)
	companyID, token, _, cardID := e.fundedCard(20, 0)
	ctx := context.Background()
	cs := moneystore.NewCards(e.DB)
	card, err := cs.Card(ctx, companyID, cardID)
	if err != nil {
		t.Fatal(err)
	}
	shop := issuer.Merchant{Name: "Shop", City: "Austin", Country: "US"}

	for _, c := range []struct {
		name, kind string
		amount     int64
		// out: the approval's events went out before the advice came
		// (past the outbox's grace), so they stay: marked published, or
		// only taken by the webhook worker (its message sent, the mark
		// not written yet).
		out    func(companyID, id string) error
		events []string
	}{
		{"our approval came late", issuer.KindAuthorization, 300, nil, []string{"transaction.authorization.declined#1"}},
		{"our verification came late", issuer.KindVerification, 0, nil, []string{"transaction.authorization.declined#1"}},
		{"our approval came late, its events published already", issuer.KindAuthorization, 300,
			func(companyID, id string) error {
				return store.NewOutbox(e.DB).MarkPublished(ctx, companyID, id, time.Now())
			},
			[]string{"transaction.authorization.created#1", "transaction.authorization.declined#2"}},
		{"our approval came late, its events sent already", issuer.KindAuthorization, 300,
			func(companyID, id string) error {
				return store.NewWebhooks(e.DB).MarkDispatched(ctx, companyID, id, time.Now())
			},
			[]string{"transaction.authorization.created#1", "transaction.authorization.declined#2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := e.eventCount(token, "card.verification.completed")
			gate := make(chan struct{})
			n, late, bodies := e.lateNetwork(false, gate)
			a, err := n.Authorize(ctx, "", card.IssuerCardID, cardID, c.kind, c.amount, shop)
			if err != nil || !a.StandIn || *a.Answer.DeclineReason != issuer.StandInReason {
				t.Fatalf("authorization %+v, %v; want the network's decline", a, err)
			}
			close(gate)
			if got := <-late; got.Decision != issuer.Approved {
				t.Fatalf("our late decision %+v, want it approved", got)
			}
			if c, _ := cs.Card(ctx, companyID, cardID); c.Held != a.Request.Amount {
				t.Fatalf("held %d before the advice, want %d", c.Held, a.Request.Amount)
			}
			if c.out != nil {
				o, _, err := cs.Outcome(ctx, companyID, a.Request.ID)
				for _, id := range o.EventIDs {
					if err == nil {
						err = c.out(companyID, id)
					}
				}
				if err != nil || len(o.EventIDs) != 1 {
					t.Fatalf("send the approval's events %v: %v", o.EventIDs, err)
				}
			}
			for range 2 {
				if err := e.deliver(ctx, bodies()[0]); err != nil {
					t.Fatal(err)
				}
			}
			if c, _ := cs.Card(ctx, companyID, cardID); c.Held != 0 || c.Balance != 2000 {
				t.Errorf("after the advice: held %d, balance %d; want 0, 2000", c.Held, c.Balance)
			}
			e.declinedLate(token, companyID, a.Request.ID, c.events)
			if got := e.eventCount(token, "card.verification.completed"); got != before {
				t.Errorf("%d card.verification.completed events, want %d", got, before)
			}
		})
	}

	// The sandbox route answers the network's decision, never our late
	// approval: the DECLINE once the advice is applied, 202 (queued) while
	// it cannot be.
	for _, c := range []struct {
		name    string
		applies bool
	}{{"our approval came late, the sandbox route", true}, {"our approval came late, the advice not applied in the route", false}} {
		t.Run(c.name, func(t *testing.T) {
			if testing.Short() && !c.applies {
				t.Skip("needs DynamoDB Local: on the in-memory one the network's advice is often applied before the route tries: make test")
			}
			gate := make(chan struct{})
			n, late, _ := e.lateNetwork(false, gate)
			// The network's advice reaches us once our late approval is
			// written: it finds the hold placed.
			deliver := e.sandbox.Network.(*issuersandbox.Network).Deliver
			var sent []byte
			n.Deliver = func(ctx context.Context, body []byte) error {
				sent = body
				if got := <-late; got.Decision != issuer.Approved {
					t.Errorf("our late decision %+v, want it approved", got)
				}
				if c, _ := cs.Card(ctx, companyID, cardID); c.Held != 300 {
					t.Errorf("held %d before the advice, want 300", c.Held)
				}
				return deliver(ctx, body)
			}
			deps := e.sandbox.Cards.Deps
			if !c.applies {
				deps.Store = unconvertible{deps.Store}
			}
			svc, err := cards.NewService(deps)
			if err != nil {
				t.Fatal(err)
			}
			sb := &cards.Sandbox{Cards: svc, Network: n}
			tx, err := sb.Authorize(ctx, companyID, cardID, cards.AuthorizeInput{Amount: []byte("3"),
				MerchantName: "Shop", MerchantCity: "Austin", MerchantCountry: "US"})
			close(gate)
			var advice issuer.Notification
			if err := json.Unmarshal(sent, &advice); err != nil {
				t.Fatal(err)
			}
			if !c.applies {
				if !errors.Is(err, cards.ErrNotApplied) {
					t.Fatalf("the route's answer %+v, %v; want the advice queued", tx, err)
				}
				if err := e.deliver(ctx, sent); err != nil { // as the card-worker does
					t.Fatal(err)
				}
			} else if err != nil || tx.Type != cards.TxDecline || tx.DeclineReason != cards.DeclineIssuerTimeout || tx.Hold != 0 || tx.Fee != 0 {
				t.Errorf("the route's transaction %+v, %v; want the network's decline", tx, err)
			}
			if c, _ := cs.Card(ctx, companyID, cardID); c.Held != 0 || c.Balance != 2000 {
				t.Errorf("after the advice: held %d, balance %d; want 0, 2000", c.Held, c.Balance)
			}
			e.declinedLate(token, companyID, advice.Transaction.ID, []string{"transaction.authorization.declined#1"})
		})
	}

	t.Run("the advice came first", func(t *testing.T) {
		gate := make(chan struct{})
		n, late, bodies := e.lateNetwork(true, gate)
		a, err := n.Authorize(ctx, "", card.IssuerCardID, cardID, issuer.KindAuthorization, 300, shop)
		if err != nil || !a.StandIn {
			t.Fatalf("authorization %+v, %v; want the network's decline", a, err)
		}
		if err := e.deliver(ctx, bodies()[0]); err != nil {
			t.Fatal(err)
		}
		close(gate)
		got := <-late
		if got.Decision != issuer.Declined || *got.DeclineReason != issuer.StandInReason {
			t.Fatalf("our late decision %+v, want the network's decline", got)
		}
		tx, err := cs.NetworkTransaction(ctx, companyID, a.Request.ID)
		if err != nil || tx.Type != cards.TxDecline || tx.DeclineReason != cards.DeclineIssuerTimeout || tx.Fee != 0 || *got.TransactionID != tx.ID {
			t.Errorf("the network's decline: %+v, %v", tx, err)
		}
		if c, _ := cs.Card(ctx, companyID, cardID); c.Held != 0 || c.Balance != 2000 {
			t.Errorf("held %d, balance %d; want 0, 2000", c.Held, c.Balance)
		}
	})

	t.Run("the sandbox route", func(t *testing.T) {
		gate := make(chan struct{})
		n, late, _ := e.lateNetwork(true, gate)
		n.Deliver = e.sandbox.Network.(*issuersandbox.Network).Deliver
		sb := &cards.Sandbox{Cards: e.sandbox.Cards, Network: n}
		tx, err := sb.Authorize(ctx, companyID, cardID, cards.AuthorizeInput{Amount: []byte("3"),
			MerchantName: "Shop", MerchantCity: "Austin", MerchantCountry: "US"})
		if err != nil || tx.Type != cards.TxDecline || tx.DeclineReason != cards.DeclineIssuerTimeout {
			t.Errorf("the route's transaction %+v, %v; want the network's decline", tx, err)
		}
		close(gate)
		if got := <-late; got.Decision != issuer.Declined {
			t.Errorf("our late decision %+v, want the network's decline", got)
		}
	})
	if got := e.eventCount(token, "fee.payment_failure.charged"); got != 0 {
		t.Errorf("%d failed-payment fees for the network's declines, want 0", got)
	}
	e.VerifyCards(companyID)
}

// TestStandInAfterTheHoldWasReleased: our late approval's hold is
// released before the network's decline is applied (reversed at the
// merchant's word; or, the card terminated, by the sweeper, to the
// wallet): the advice leaves the authorization and its REVERSAL as they
// are, rather than making a reversed authorization into a DECLINE.
func TestStandInAfterTheHoldWasReleased(t *testing.T) {
	t.Parallel()
	e := newNetworkEnv(t)
	ctx := context.Background()
	cs := moneystore.NewCards(e.DB)
	for _, c := range []struct {
		name    string
		release func(companyID, token, cardID string, auth cards.Transaction) error
	}{
		{"reversed", func(companyID, _, _ string, auth cards.Transaction) error {
			_, err := e.sandbox.Follow(ctx, companyID, auth.ID, cards.TxReversal, cards.FollowInput{})
			return err
		}},
		{"released by the sweeper, the card terminated", func(companyID, token, cardID string, _ cards.Transaction) error {
			if r := e.Call(e.Cards, token, "POST", "/cards/"+cardID+"/terminate", `{}`); r.Status != 200 {
				return fmt.Errorf("terminate: %d %s", r.Status, r.Raw)
			}
			_, err := e.sandbox.Cards.FinishTermination(ctx, companyID, cardID)
			return err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			companyID, token, _, cardID := e.fundedCard(20, 0)
			card, err := cs.Card(ctx, companyID, cardID)
			if err != nil {
				t.Fatal(err)
			}
			gate := make(chan struct{})
			n, late, bodies := e.lateNetwork(false, gate)
			a, err := n.Authorize(ctx, "", card.IssuerCardID, cardID, issuer.KindAuthorization, 300, issuer.Merchant{Name: "Shop", City: "Austin", Country: "US"})
			if err != nil || !a.StandIn {
				t.Fatalf("authorization %+v, %v; want the network's decline", a, err)
			}
			close(gate)
			<-late
			auth, err := cs.NetworkTransaction(ctx, companyID, a.Request.ID)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.release(companyID, token, cardID, auth); err != nil {
				t.Fatal(err)
			}
			if err := e.deliver(ctx, bodies()[0]); err != nil {
				t.Fatal(err)
			}
			tx, err := cs.NetworkTransaction(ctx, companyID, a.Request.ID)
			if err != nil || tx.Type != cards.TxAuthorization || tx.Hold != 0 {
				t.Errorf("the authorization after the advice: %+v, %v; want it as released", tx, err)
			}
			r := e.Call(e.Cards, token, "GET", "/cards/"+cardID+"/transactions?type=REVERSAL", "")
			if items := r.Items(); len(items) != 1 || items[0].(map[string]any)["original_transaction_id"] != tx.ID {
				t.Errorf("the card's reversals %s, want the one release of the authorization", r.Raw)
			}
			e.VerifyCards(companyID)
		})
	}
}

// TestStandInOnATerminatedCard: our late approval's card is terminated
// before the network's decline is applied: the termination kept the hold's
// money on the card, and the advice releases it to the wallet (a REVERSAL,
// reason issuer_timeout), once; nothing stays on the terminated card.
func TestStandInOnATerminatedCard(t *testing.T) {
	t.Parallel()
	e := newNetworkEnv(t)
	companyID, token, walletID, cardID := e.fundedCard(20, 0)
	ctx := context.Background()
	cs := moneystore.NewCards(e.DB)
	card, err := cs.Card(ctx, companyID, cardID)
	if err != nil {
		t.Fatal(err)
	}
	gate := make(chan struct{})
	n, late, bodies := e.lateNetwork(false, gate)
	a, err := n.Authorize(ctx, "", card.IssuerCardID, cardID, issuer.KindAuthorization, 300, issuer.Merchant{Name: "Shop", City: "Austin", Country: "US"})
	if err != nil || !a.StandIn {
		t.Fatalf("authorization %+v, %v; want the network's decline", a, err)
	}
	close(gate)
	if got := <-late; got.Decision != issuer.Approved {
		t.Fatalf("our late decision %+v, want it approved", got)
	}
	if r := e.Call(e.Cards, token, "POST", "/cards/"+cardID+"/terminate", `{}`); r.Status != 200 || r.Str("data", "refund_amount") != "17" {
		t.Fatalf("terminate: %d %s", r.Status, r.Raw)
	}
	for range 2 {
		if err := e.deliver(ctx, bodies()[0]); err != nil {
			t.Fatal(err)
		}
	}
	if c, _ := cs.Card(ctx, companyID, cardID); c.Held != 0 || c.Balance != 0 {
		t.Errorf("the terminated card after the advice: held %d, balance %d; want 0, 0", c.Held, c.Balance)
	}
	if got := e.Payout(token, walletID); got != "20" { // 21 − 21 (the card and its fee) + 17 + 3
		t.Errorf("payout_balance %s, want 20", got)
	}
	auth, err := cs.NetworkTransaction(ctx, companyID, a.Request.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.reversals(token, auth.ID, issuer.StandInReason); len(got) != 1 {
		t.Errorf("%d reversals with reason issuer_timeout, want 1", len(got))
	}
	e.VerifyCards(companyID)
}

// TestStandInAskedAgain: an authorization the network declined on its own
// is sent again under its id (the route's retry with its Idempotency-Key,
// its first run lost before its advice was applied), while our late
// approval still holds: the network answers as it decided, its advice
// sent again, and the route answers the DECLINE; it never asks again, which
// would find our approval in time and approve what it declined.
func TestStandInAskedAgain(t *testing.T) {
	t.Parallel()
	e := newNetworkEnv(t)
	companyID, _, _, cardID := e.fundedCard(20, 0)
	ctx := context.Background()
	cs := moneystore.NewCards(e.DB)
	card, err := cs.Card(ctx, companyID, cardID)
	if err != nil {
		t.Fatal(err)
	}
	gate := make(chan struct{})
	n, late, _ := e.lateNetwork(false, gate)
	n.Decisions = issuerdb.New(e.DB.DB)
	lost := n.Deliver
	n.Deliver = func(context.Context, []byte) error { return errors.New("injected: the route died") }
	id := issuer.NewTransactionID(time.Now())
	if a, err := n.Authorize(ctx, id, card.IssuerCardID, cardID, issuer.KindAuthorization, 300, issuer.Merchant{Name: "Shop", City: "Austin", Country: "US"}); !a.StandIn || err == nil {
		t.Fatalf("the first run: %+v, %v; want the network's decline, its advice lost", a, err)
	}
	close(gate)
	if got := <-late; got.Decision != issuer.Approved {
		t.Fatalf("our late decision %+v, want it approved", got)
	}
	// Asked again, we would answer our approval in time.
	n.Deliver, n.Deadline = lost, time.Minute
	sb := &cards.Sandbox{Cards: e.sandbox.Cards, Network: n}
	again := idempotency.WithReplay(ctx, idempotency.Effect{ID: id})
	tx, err := sb.Authorize(again, companyID, cardID, cards.AuthorizeInput{Amount: []byte("3"), MerchantName: "Shop", MerchantCity: "Austin"})
	if err != nil || tx.Type != cards.TxDecline || tx.DeclineReason != cards.DeclineIssuerTimeout || tx.IssuerTxID != id {
		t.Errorf("the retry's answer %+v, %v; want the network's decline", tx, err)
	}
	if c, _ := cs.Card(ctx, companyID, cardID); c.Held != 0 || c.Balance != 2000 {
		t.Errorf("held %d, balance %d; want 0, 2000", c.Held, c.Balance)
	}
	e.VerifyCards(companyID)
}
