package bulkhttp

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"payments/pkg/bulk"
	"payments/pkg/field"
	"payments/pkg/httpapi"
)

// MaxBodyBytes caps the body of a batch: 10,000 items fit with room to
// spare, and with the report's own columns a batch's report.csv stays
// within the 6 MB Lambda answers at most.
const MaxBodyBytes = 4 << 20

// itemBody is an item of a JSON batch. The amount is kept raw, so that a
// JSON string is refused as the single payout refuses it.
type itemBody struct {
	ExternalID  string          `json:"external_id"`
	Operator    string          `json:"operator"`
	Country     string          `json:"country"`
	PhoneNumber string          `json:"phone_number"`
	Amount      json.RawMessage `json:"amount"`
	Currency    string          `json:"currency"`
	Reason      string          `json:"reason"`
	NotifyURL   string          `json:"notify_url"`
}

// batchBody is a JSON batch.
type batchBody struct {
	Items       []itemBody `json:"items"`
	Description string     `json:"description"`
	Mode        string     `json:"mode"`
}

// ParseJSON reads a JSON batch: {"items": […], "description", "mode"}.
func ParseJSON(body []byte) (bulk.Request, error) {
	var b batchBody
	if err := httpapi.DecodeBytes(body, &b); err != nil {
		return bulk.Request{}, err
	}
	if len(b.Items) > bulk.MaxItems {
		return bulk.Request{}, field.Invalid("items", fmt.Sprintf("must hold at most %d items", bulk.MaxItems))
	}
	req := bulk.Request{Description: b.Description, Mode: bulk.Mode(b.Mode), Items: make([]bulk.Input, len(b.Items))}
	for i, it := range b.Items {
		req.Items[i] = bulk.Input{
			Row: i + 1, ExternalID: it.ExternalID, Operator: it.Operator, Country: it.Country, PhoneNumber: it.PhoneNumber,
			Amount: string(it.Amount), Currency: it.Currency, Reason: it.Reason, NotifyURL: it.NotifyURL,
		}
	}
	return req, nil
}

// Columns are the columns of a CSV batch, in the order of its report;
// csvRequired must each be present.
var (
	Columns     = []string{"external_id", "operator", "country", "phone_number", "amount", "currency", "reason", "notify_url"}
	csvRequired = []string{"operator", "country", "phone_number", "amount", "currency"}
)

// ParseCSV reads a CSV batch: a header row naming Columns in any order
// (those of csvRequired at least), then one item per row, its cells
// trimmed; the amount is the decimal text in major units. Rows are
// numbered from 1 after the header, blank lines skipped.
func ParseCSV(body []byte, description, mode string) (bulk.Request, error) {
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(body, []byte("\ufeff"))))
	r.ReuseRecord = true
	header, err := r.Read()
	if err != nil {
		return bulk.Request{}, field.Invalid("body", "must be CSV with a header row naming the columns: "+strings.Join(Columns, ", "))
	}
	at := make([]int, len(Columns)) // column index of each of Columns, -1 when absent
	for i := range at {
		at[i] = -1
	}
	for i, name := range header {
		name = strings.TrimSpace(name)
		k := slices.Index(Columns, name)
		switch {
		case name == "":
			return bulk.Request{}, field.Invalid("body", fmt.Sprintf("column %d of the header row has no name", i+1))
		case k < 0 && len(name) > 64:
			return bulk.Request{}, field.Invalid("body", fmt.Sprintf("column %d of the header row is not a column of a bulk payout: the columns are %s", i+1, strings.Join(Columns, ", ")))
		case k < 0:
			return bulk.Request{}, field.Invalid(name, "is not a column of a bulk payout: the columns are "+strings.Join(Columns, ", "))
		case at[k] >= 0:
			return bulk.Request{}, field.Invalid(name, "is a column given twice")
		}
		at[k] = i
	}
	for _, name := range csvRequired {
		if at[slices.Index(Columns, name)] < 0 {
			return bulk.Request{}, field.Invalid(name, "is a required column")
		}
	}
	req := bulk.Request{Description: description, Mode: bulk.Mode(mode)}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return bulk.Request{}, field.Invalid("body", "is not valid CSV: "+err.Error())
		}
		if len(req.Items) == bulk.MaxItems {
			return bulk.Request{}, field.Invalid("items", fmt.Sprintf("must hold at most %d items", bulk.MaxItems))
		}
		cell := func(name string) string {
			if i := at[slices.Index(Columns, name)]; i >= 0 {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		req.Items = append(req.Items, bulk.Input{
			Row: len(req.Items) + 1, ExternalID: cell("external_id"), Operator: cell("operator"), Country: cell("country"),
			PhoneNumber: cell("phone_number"), Amount: cell("amount"), Currency: cell("currency"), Reason: cell("reason"),
			NotifyURL: cell("notify_url"),
		})
	}
	return req, nil
}
