package pawapay

import "encoding/json"

// accountDetails is a mobile-money account: pawaPay's MSISDN form and
// provider code.
type accountDetails struct {
	PhoneNumber string `json:"phoneNumber"`
	Provider    string `json:"provider"`
}

// party is the recipient of a payout or the payer of a deposit.
type party struct {
	Type           string         `json:"type"` // always "MMO"
	AccountDetails accountDetails `json:"accountDetails"`
}

// initiation is the body of POST /v2/payouts and POST /v2/deposits: one of
// PayoutID (with Recipient) and DepositID (with Payer) is set.
type initiation struct {
	PayoutID  string            `json:"payoutId,omitempty"`
	DepositID string            `json:"depositId,omitempty"`
	Amount    string            `json:"amount"`
	Currency  string            `json:"currency"`
	Recipient *party            `json:"recipient,omitempty"`
	Payer     *party            `json:"payer,omitempty"`
	Metadata  []json.RawMessage `json:"metadata,omitempty"`
}

// failureReason is why a payment failed or an initiation was rejected.
type failureReason struct {
	FailureCode    string `json:"failureCode"`
	FailureMessage string `json:"failureMessage"`
}

// initiationAnswer is pawaPay's answer to an initiation.
type initiationAnswer struct {
	PayoutID      string         `json:"payoutId"`
	DepositID     string         `json:"depositId"`
	Status        string         `json:"status"`
	FailureReason *failureReason `json:"failureReason"`
}

// payment is a payout or a deposit as a status check (in data) or a
// callback carries it.
type payment struct {
	PayoutID      string          `json:"payoutId"`
	DepositID     string          `json:"depositId"`
	Status        string          `json:"status"`
	FailureReason *failureReason  `json:"failureReason"`
	Metadata      json.RawMessage `json:"metadata"`
}

// statusAnswer is pawaPay's answer to GET /v2/payouts/{id} and GET
// /v2/deposits/{id}: FOUND with data, or NOT_FOUND.
type statusAnswer struct {
	Status string   `json:"status"`
	Data   *payment `json:"data"`
}

// companyMetadataField is the metadata field that carries our company id,
// so that a callback (which echoes the metadata) can be routed.
const companyMetadataField = "companyId"

// metadataOf returns the v2 metadata of a request: a list of objects of one
// field each.
func metadataOf(companyID string) []json.RawMessage {
	if companyID == "" {
		return nil
	}
	item, _ := json.Marshal(map[string]string{companyMetadataField: companyID})
	return []json.RawMessage{item}
}

// metadataField reads field from metadata as pawaPay echoes it: a list of
// one-field objects as sent, or one object of fields. "" when absent.
func metadataField(raw json.RawMessage, field string) string {
	if len(raw) == 0 {
		return ""
	}
	var list []map[string]any
	if json.Unmarshal(raw, &list) == nil {
		for _, item := range list {
			if v, ok := item[field].(string); ok {
				return v
			}
		}
		return ""
	}
	var obj map[string]any
	if json.Unmarshal(raw, &obj) == nil {
		if v, ok := obj[field].(string); ok {
			return v
		}
	}
	return ""
}
