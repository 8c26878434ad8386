package issuer

import (
	"errors"
	"testing"
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
