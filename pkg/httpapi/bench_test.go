package httpapi

import (
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

// BenchmarkDecode measures strict decoding of a payout-sized body.
func BenchmarkDecode(b *testing.B) {
	const body = `{"name":"Acme","amount":1500,"count":3,"nested":{"flag":true}}`
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest("POST", "/", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		var p payload
		if err := Decode(r, &p); err != nil {
			b.Fatal(err)
		}
	}
}

// payoutBody is the body of a payout with every optional field.
type payoutBody struct {
	Operator    string          `json:"operator"`
	Country     string          `json:"country"`
	PhoneNumber string          `json:"phone_number"`
	Amount      json.RawMessage `json:"amount"`
	Currency    string          `json:"currency"`
	ExternalID  string          `json:"external_id"`
	NotifyURL   string          `json:"notify_url"`
	ReferenceID string          `json:"reference_id"`
	Lang        string          `json:"lang"`
	Purpose     string          `json:"purpose"`
}

// BenchmarkDecodeBytes measures the decoder alone on a payout's body.
func BenchmarkDecodeBytes(b *testing.B) {
	body := []byte(`{"operator":"mtn","country":"CM","phone_number":"237670000001","amount":5000,"currency":"XAF",` +
		`"external_id":"order-0001","notify_url":"https://example.com/hook","reference_id":"ref-1","lang":"fr","purpose":"salary"}`)
	b.ReportAllocs()
	for b.Loop() {
		var p payoutBody
		if err := DecodeBytes(body, &p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckKeys measures the key pass alone on a payout's body: what
// DecodeBytes adds to encoding/json to refuse keys in another case and
// keys given twice.
func BenchmarkCheckKeys(b *testing.B) {
	body := []byte(`{"operator":"mtn","country":"CM","phone_number":"237670000001","amount":5000,"currency":"XAF",` +
		`"external_id":"order-0001","notify_url":"https://example.com/hook","reference_id":"ref-1","lang":"fr","purpose":"salary"}`)
	t := reflect.TypeFor[*payoutBody]()
	b.ReportAllocs()
	for b.Loop() {
		if err := checkKeys(body, t); err != nil {
			b.Fatal(err)
		}
	}
}
