package cardshttp

import (
	"encoding/json"
	"testing"
	"time"

	"payments/pkg/cards"
	"payments/pkg/customers"
)

// TestNewTxResponse pins the JSON of a card transaction, byte for byte: the
// routes answered it so before the domain returned views.
func TestNewTxResponse(t *testing.T) {
	created := time.Date(2026, 11, 23, 16, 11, 18, 120_000_000, time.UTC)
	completed := created.Add(time.Second)
	card := cards.Card{ID: "c1", Brand: "VISA", Last4: "4242"}
	holder := customers.Customer{ID: "u1", FirstName: "Ada", LastName: "Lovelace"}
	auth := cards.Transaction{
		ID: "t1", CardID: "c1", CustomerID: "u1", Type: cards.TxAuthorization, Status: cards.TxPending,
		Amount: 1250, Hold: 1000, Settled: 250, CreatedAt: created, IssuerTxID: "iss1", Kind: cards.KindAuthorization,
		Merchant: &cards.Merchant{Name: "Shop", City: "Austin", Country: "US"},
	}
	funding := cards.Transaction{
		ID: "t2", CardID: "c1", CustomerID: "u1", Type: cards.TxFunding, Status: cards.TxSuccess,
		Amount: 500, Fee: 5, Description: "Card funding", CreatedAt: created, CompletedAt: &completed,
	}
	const authJSON = `{"id":"t1","category":"CARD","type":"AUTHORIZATION","status":"PENDING","amount":12.5,"currency":"USD",` +
		`"description":"Shop, Austin","fee_amount":0,"created_at":"2026-11-23T16:11:18.120Z","completed_at":null,` +
		`"merchant":{"name":"Shop","city":"Austin","country":"US"},"decline_reason":null,"hold_amount":10,` +
		`"original_transaction_id":null,"card":{"id":"c1","masked_pan":"**** **** **** 4242","brand":"VISA"},` +
		`"customer":{"id":"u1","first_name":"Ada","last_name":"Lovelace"}`
	tests := []struct {
		name       string
		view       cards.TxView
		includeRaw bool
		want       string
	}{
		{"authorization", cards.TxView{Tx: auth, Card: card, Holder: holder}, false, authJSON + `}`},
		{"authorization with raw", cards.TxView{Tx: auth, Card: card, Holder: holder}, true,
			authJSON + `,"raw":{"issuer_transaction_id":"iss1","kind":"AUTHORIZATION","settled_amount":2.5,"refunded_amount":0}}`},
		{"funding of a card not issued", cards.TxView{Tx: funding, Card: cards.Card{ID: "c1", Brand: "VISA"}, Holder: holder}, true,
			`{"id":"t2","category":"CARD","type":"FUNDING","status":"SUCCESS","amount":5,"currency":"USD",` +
				`"description":"Card funding","fee_amount":0.05,"created_at":"2026-11-23T16:11:18.120Z",` +
				`"completed_at":"2026-11-23T16:11:19.120Z","merchant":null,"decline_reason":null,"hold_amount":null,` +
				`"original_transaction_id":null,"card":{"id":"c1","masked_pan":null,"brand":"VISA"},` +
				`"customer":{"id":"u1","first_name":"Ada","last_name":"Lovelace"},` +
				`"raw":{"issuer_transaction_id":null,"kind":null,"settled_amount":null,"refunded_amount":null}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(NewTxResponse(tt.view, tt.includeRaw))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("JSON:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}
