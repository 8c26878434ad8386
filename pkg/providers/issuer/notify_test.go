package issuer

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseNotification(t *testing.T) {
	auth := `"transaction":{"id":"ntx_1","kind":"AUTHORIZATION","amount":100,"currency":"USD","merchant":{"name":"Shop","city":"Lyon","country":"FR"}}`
	for _, c := range []struct {
		name, body string
		ok         bool
	}{
		{"authorization", `{"id":"e1","type":"authorization","reference":"c1",` + auth + `}`, true},
		{"verification", `{"id":"e1","type":"authorization","reference":"c1","transaction":{"id":"n","kind":"VERIFICATION","amount":0,"currency":"USD","merchant":{"name":"S"}}}`, true},
		{"settlement", `{"id":"e1","type":"settlement","reference":"c1","transaction":{"id":"n2","authorization_id":"n1","amount":100,"currency":"USD"}}`, true},
		{"reversal", `{"id":"e1","type":"reversal","reference":"c1","transaction":{"id":"n2","authorization_id":"n1","amount":0,"currency":"USD"}}`, true},
		{"termination", `{"id":"e1","type":"card.terminated","reference":"c1","reason":"risk"}`, true},
		{"not JSON", `nope`, false},
		{"no id", `{"type":"authorization","reference":"c1",` + auth + `}`, false},
		{"no reference", `{"id":"e1","type":"authorization",` + auth + `}`, false},
		{"unknown type", `{"id":"e1","type":"capture","reference":"c1",` + auth + `}`, false},
		{"no transaction", `{"id":"e1","type":"authorization","reference":"c1"}`, false},
		{"not USD", `{"id":"e1","type":"settlement","reference":"c1","transaction":{"id":"n2","authorization_id":"n1","amount":100,"currency":"EUR"}}`, false},
		{"negative", `{"id":"e1","type":"refund","reference":"c1","transaction":{"id":"n2","authorization_id":"n1","amount":-1,"currency":"USD"}}`, false},
		{"settlement of 0", `{"id":"e1","type":"settlement","reference":"c1","transaction":{"id":"n2","authorization_id":"n1","amount":0,"currency":"USD"}}`, false},
		{"verification with an amount", `{"id":"e1","type":"authorization","reference":"c1","transaction":{"id":"n","kind":"VERIFICATION","amount":5,"currency":"USD","merchant":{"name":"S"}}}`, false},
		{"unknown kind", `{"id":"e1","type":"authorization","reference":"c1","transaction":{"id":"n","kind":"CAPTURE","amount":5,"currency":"USD","merchant":{"name":"S"}}}`, false},
		{"no merchant", `{"id":"e1","type":"authorization","reference":"c1","transaction":{"id":"n","kind":"AUTHORIZATION","amount":5,"currency":"USD"}}`, false},
		{"settlement without its authorization", `{"id":"e1","type":"settlement","reference":"c1","transaction":{"id":"n2","amount":100,"currency":"USD"}}`, false},
	} {
		_, err := ParseNotification([]byte(c.body))
		if (err == nil) != c.ok || err != nil && !errors.Is(err, ErrBadNotification) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

func TestSandboxNetworkDelivers(t *testing.T) {
	var got []Notification
	n := NewSandboxNetwork(func(_ context.Context, body []byte) error {
		no, err := ParseNotification(body)
		if err != nil {
			return err
		}
		got = append(got, no)
		return nil
	})
	n.Now = func() time.Time { return time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC) }
	ctx := context.Background()
	if _, err := n.Authorize(ctx, "card_1", "ref", KindPreauthorization, 1250, Merchant{Name: "Hotel", City: "Kribi", Country: "CM"}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Follow(ctx, NotifySettlement, "card_1", "ref", got[0].Transaction.ID, 1000); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Terminated(ctx, "card_1", "ref", "risk"); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].ID == got[1].ID || !strings.HasPrefix(got[0].ID, "evt_") || !strings.HasPrefix(got[0].Transaction.ID, "ntx_") ||
		got[1].Transaction.AuthorizationID != got[0].Transaction.ID || got[1].Transaction.Amount != 1000 || got[2].Type != NotifyCardTerminated {
		t.Errorf("notifications %+v", got)
	}
	if _, err := n.Follow(ctx, NotifyRefund, "card_1", "ref", "", 5); !errors.Is(err, ErrBadNotification) || len(got) != 3 {
		t.Errorf("a refund naming no authorization: %v, %d delivered", err, len(got))
	}
}
