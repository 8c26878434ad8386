package issuer

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseNotification(t *testing.T) {
	advice := `"decision":"APPROVED","transaction":{"id":"ntx_1","kind":"AUTHORIZATION","amount":100,"currency":"USD","merchant":{"name":"Shop","city":"Lyon","country":"FR"}}`
	for _, c := range []struct {
		name, body string
		ok         bool
	}{
		{"advice", `{"id":"e1","type":"authorization.advice","reference":"c1",` + advice + `}`, true},
		{"stand-in advice", `{"id":"e1","type":"authorization.advice","reference":"c1","decision":"DECLINED","reason":"issuer_timeout","transaction":{"id":"n","kind":"VERIFICATION","amount":0,"currency":"USD","merchant":{"name":"S"}}}`, true},
		{"settlement", `{"id":"e1","type":"settlement","reference":"c1","transaction":{"id":"n2","authorization_id":"n1","amount":100,"currency":"USD"}}`, true},
		{"reversal", `{"id":"e1","type":"reversal","reference":"c1","transaction":{"id":"n2","authorization_id":"n1","amount":0,"currency":"USD"}}`, true},
		{"termination", `{"id":"e1","type":"card.terminated","reference":"c1","reason":"risk"}`, true},
		{"not JSON", `nope`, false},
		{"no id", `{"type":"authorization.advice","reference":"c1",` + advice + `}`, false},
		{"no reference", `{"id":"e1","type":"authorization.advice",` + advice + `}`, false},
		{"unknown type", `{"id":"e1","type":"capture","reference":"c1",` + advice + `}`, false},
		{"an authorization to decide, which comes as a request", `{"id":"e1","type":"authorization","reference":"c1",` + advice + `}`, false},
		{"advice without a decision", `{"id":"e1","type":"authorization.advice","reference":"c1","transaction":{"id":"n","kind":"AUTHORIZATION","amount":5,"currency":"USD","merchant":{"name":"S"}}}`, false},
		{"no transaction", `{"id":"e1","type":"authorization.advice","reference":"c1","decision":"APPROVED"}`, false},
		{"not USD", `{"id":"e1","type":"settlement","reference":"c1","transaction":{"id":"n2","authorization_id":"n1","amount":100,"currency":"EUR"}}`, false},
		{"negative", `{"id":"e1","type":"refund","reference":"c1","transaction":{"id":"n2","authorization_id":"n1","amount":-1,"currency":"USD"}}`, false},
		{"settlement of 0", `{"id":"e1","type":"settlement","reference":"c1","transaction":{"id":"n2","authorization_id":"n1","amount":0,"currency":"USD"}}`, false},
		{"verification with an amount", `{"id":"e1","type":"authorization.advice","reference":"c1","decision":"APPROVED","transaction":{"id":"n","kind":"VERIFICATION","amount":5,"currency":"USD","merchant":{"name":"S"}}}`, false},
		{"unknown kind", `{"id":"e1","type":"authorization.advice","reference":"c1","decision":"APPROVED","transaction":{"id":"n","kind":"CAPTURE","amount":5,"currency":"USD","merchant":{"name":"S"}}}`, false},
		{"no merchant", `{"id":"e1","type":"authorization.advice","reference":"c1","decision":"APPROVED","transaction":{"id":"n","kind":"AUTHORIZATION","amount":5,"currency":"USD"}}`, false},
		{"settlement forced with no authorization", `{"id":"e1","type":"settlement","reference":"c1","transaction":{"id":"n2","amount":100,"currency":"USD","merchant":{"name":"S"}}}`, true},
		{"refund linked to no authorization", `{"id":"e1","type":"refund","reference":"c1","transaction":{"id":"n2","amount":100,"currency":"USD"}}`, true},
		{"settlement keeping the rest of the hold", `{"id":"e1","type":"settlement","reference":"c1","transaction":{"id":"n2","authorization_id":"n1","amount":100,"currency":"USD"}}`, true},
		{"settlement closing its authorization", `{"id":"e1","type":"settlement","reference":"c1","transaction":{"id":"n2","authorization_id":"n1","amount":100,"currency":"USD","close":true}}`, true},
		{"partial reversal", `{"id":"e1","type":"reversal","reference":"c1","transaction":{"id":"n2","authorization_id":"n1","amount":40,"currency":"USD"}}`, true},
		{"reversal without its authorization", `{"id":"e1","type":"reversal","reference":"c1","transaction":{"id":"n2","amount":0,"currency":"USD"}}`, false},
		{"refund closing an authorization", `{"id":"e1","type":"refund","reference":"c1","transaction":{"id":"n2","authorization_id":"n1","amount":5,"currency":"USD","close":true}}`, false},
		{"approval without us", `{"id":"e1","type":"authorization.advice","reference":"c1","reason":"approved_without_us",` + advice + `}`, true},
		{"dispute", `{"id":"e1","type":"dispute","reference":"c1","dispute":{"id":"idp_1","transaction_id":"ipi_1","status":"SUBMITTED","amount":500,"credited":500}}`, true},
		{"dispute won", `{"id":"e1","type":"dispute","reference":"c1","dispute":{"id":"idp_1","transaction_id":"ipi_1","status":"WON","amount":500,"credited":500}}`, true},
		{"dispute without its dispute", `{"id":"e1","type":"dispute","reference":"c1"}`, false},
		{"dispute of no transaction", `{"id":"e1","type":"dispute","reference":"c1","dispute":{"id":"idp_1","status":"LOST","amount":500,"credited":0}}`, false},
		{"dispute of an unknown status", `{"id":"e1","type":"dispute","reference":"c1","dispute":{"id":"idp_1","transaction_id":"ipi_1","status":"PENDING","amount":500,"credited":0}}`, false},
		{"dispute of nothing", `{"id":"e1","type":"dispute","reference":"c1","dispute":{"id":"idp_1","transaction_id":"ipi_1","status":"LOST","amount":0,"credited":0}}`, false},
	} {
		_, err := ParseNotification([]byte(c.body))
		if (err == nil) != c.ok || err != nil && !errors.Is(err, ErrBadNotification) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

func TestParseAuthorizationRequest(t *testing.T) {
	for _, c := range []struct {
		name, body string
		ok         bool
	}{
		{"authorization", `{"id":"ntx_1","card_id":"ic","reference":"c1","kind":"AUTHORIZATION","amount":100,"currency":"USD","merchant":{"name":"Shop","city":"Lyon","country":"FR"}}`, true},
		{"verification", `{"id":"ntx_1","reference":"c1","kind":"VERIFICATION","amount":0,"currency":"USD","merchant":{"name":"Shop"}}`, true},
		{"not JSON", `[`, false},
		{"no id", `{"reference":"c1","kind":"AUTHORIZATION","amount":100,"currency":"USD","merchant":{"name":"Shop"}}`, false},
		{"no reference", `{"id":"ntx_1","kind":"AUTHORIZATION","amount":100,"currency":"USD","merchant":{"name":"Shop"}}`, false},
		{"no kind", `{"id":"ntx_1","reference":"c1","amount":100,"currency":"USD","merchant":{"name":"Shop"}}`, false},
		{"amount 0", `{"id":"ntx_1","reference":"c1","kind":"AUTHORIZATION","amount":0,"currency":"USD","merchant":{"name":"Shop"}}`, false},
		{"not USD", `{"id":"ntx_1","reference":"c1","kind":"AUTHORIZATION","amount":100,"currency":"XAF","merchant":{"name":"Shop"}}`, false},
		{"no merchant name", `{"id":"ntx_1","reference":"c1","kind":"AUTHORIZATION","amount":100,"currency":"USD","merchant":{"city":"Lyon"}}`, false},
		{"amount as text", `{"id":"ntx_1","reference":"c1","kind":"AUTHORIZATION","amount":"100","currency":"USD","merchant":{"name":"Shop"}}`, false},
	} {
		_, err := ParseAuthorizationRequest([]byte(c.body))
		if (err == nil) != c.ok || err != nil && !errors.Is(err, ErrBadAuthorizationRequest) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// TestSandboxNetworkStandsIn: the network takes our answer when it comes
// within its deadline, and declines on its own (issuer_timeout) when it is
// late, an error or no decision; it advises each outcome, and a late
// decision still runs to its end.
func TestSandboxNetworkStandsIn(t *testing.T) {
	approved := AuthorizationAnswer{Decision: Approved, AvailableBalance: 400}
	release := make(chan struct{})
	finished := make(chan struct{})
	for _, c := range []struct {
		name    string
		ask     func(ctx context.Context, body []byte) (AuthorizationAnswer, error)
		standIn bool
	}{
		{"in time", func(context.Context, []byte) (AuthorizationAnswer, error) { return approved, nil }, false},
		{"an error", func(context.Context, []byte) (AuthorizationAnswer, error) {
			return AuthorizationAnswer{}, errors.New("down")
		}, true},
		{"no decision", func(context.Context, []byte) (AuthorizationAnswer, error) {
			return AuthorizationAnswer{Decision: "MAYBE"}, nil
		}, true},
		{"late", func(ctx context.Context, _ []byte) (AuthorizationAnswer, error) {
			defer close(finished)
			<-release // until the network has stood in
			return approved, ctx.Err()
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var advices []Notification
			n := NewSandboxNetwork(c.ask, func(_ context.Context, body []byte) error {
				no, err := ParseNotification(body)
				advices = append(advices, no)
				return err
			})
			n.Deadline = 10 * time.Millisecond
			a, err := n.Authorize(context.Background(), "", "card_1", "ref", KindAuthorization, 100, Merchant{Name: "Shop", City: "Austin", Country: "US"})
			if err != nil {
				t.Fatal(err)
			}
			want := Approved
			if c.standIn {
				want = Declined
			}
			if a.StandIn != c.standIn || a.Answer.Decision != want || c.standIn && *a.Answer.DeclineReason != StandInReason {
				t.Errorf("authorization %+v", a)
			}
			if len(advices) != 1 || advices[0].Type != NotifyAdvice || advices[0].Decision != want ||
				advices[0].Transaction.ID != a.Request.ID || c.standIn && advices[0].Reason != StandInReason {
				t.Errorf("advices %+v", advices)
			}
		})
	}
	close(release)
	<-finished // the late decision was not cancelled: it ran to its end
}

func TestSandboxNetworkDelivers(t *testing.T) {
	var got []Notification
	var asked []AuthorizationRequest
	n := NewSandboxNetwork(func(_ context.Context, body []byte) (AuthorizationAnswer, error) {
		r, err := ParseAuthorizationRequest(body)
		asked = append(asked, r)
		return AuthorizationAnswer{Decision: Approved}, err
	}, func(_ context.Context, body []byte) error {
		no, err := ParseNotification(body)
		if err != nil {
			return err
		}
		got = append(got, no)
		return nil
	})
	n.Now = func() time.Time { return time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC) }
	ctx := context.Background()
	a, err := n.Authorize(ctx, "", "card_1", "ref", KindPreauthorization, 1250, Merchant{Name: "Hotel", City: "Kribi", Country: "CM"})
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || asked[0].ID != a.Request.ID || !strings.HasPrefix(a.Request.ID, "ntx_") || asked[0].Amount != 1250 || asked[0].Kind != KindPreauthorization {
		t.Errorf("asked %+v", asked)
	}
	if _, err := n.Follow(ctx, "", NotifySettlement, "card_1", "ref", NetworkTransaction{AuthorizationID: a.Request.ID, Amount: 1000, Close: true}, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Terminated(ctx, "", "card_1", "ref", "risk"); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].ID == got[1].ID || !strings.HasPrefix(got[0].ID, "evt_") || got[0].Type != NotifyAdvice ||
		got[0].Transaction.ID != a.Request.ID || got[1].Transaction.AuthorizationID != a.Request.ID ||
		got[1].Transaction.Amount != 1000 || got[2].Type != NotifyCardTerminated {
		t.Errorf("notifications %+v", got)
	}
	if _, err := n.Follow(ctx, "", NotifyReversal, "card_1", "ref", NetworkTransaction{AuthorizationID: "", Amount: 5}, ""); !errors.Is(err, ErrBadNotification) || len(got) != 3 {
		t.Errorf("a reversal naming no authorization: %v, %d delivered", err, len(got))
	}
}
