package bulkhttp_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"payments/pkg/bulk"
	"payments/pkg/bulk/bulkhttp"
	"payments/pkg/field"
)

func TestParseCSV(t *testing.T) {
	tests := []struct {
		name, body string
		want       string // the items, "row:operator,phone,amount,ext;", or the field of the error
	}{
		{"the columns in any order", "amount,currency,phone_number,country,operator,external_id\n1500,XAF,237670000001,CM,mtn,a-1\n",
			"1:mtn,237670000001,1500,a-1;"},
		{"cells trimmed, blank lines skipped, a BOM", "\ufeffoperator, country ,phone_number,amount,currency\n mtn ,CM,237670000001, 12.50 ,USD\n\nmtn,CM,237670000002,1,XAF\n",
			"1:mtn,237670000001,12.50,;2:mtn,237670000002,1,;"},
		{"a header alone", "operator,country,phone_number,amount,currency\n", ""},
		{"an unknown column", "operator,country,phone,amount,currency\n", "phone"},
		{"a column twice", "operator,country,phone_number,amount,currency,amount\n", "amount"},
		{"a column without a name", "operator,,country,phone_number,amount,currency\n", "body"},
		{"a required column missing", "operator,country,phone_number,currency\n", "amount"},
		{"a ragged row", "operator,country,phone_number,amount,currency\nmtn,CM\n", "body"},
		{"no header", "", "body"},
		{"too many rows", "operator,country,phone_number,amount,currency\n" + strings.Repeat("mtn,CM,237670000001,1,XAF\n", bulk.MaxItems+1), "items"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := bulkhttp.ParseCSV([]byte(tt.body), "June", "partial")
			if !parsed(t, err, tt.want) {
				return
			}
			var b strings.Builder
			for _, in := range req.Items {
				fmt.Fprintf(&b, "%d:%s,%s,%s,%s;", in.Row, in.Operator, in.PhoneNumber, in.Amount, in.ExternalID)
			}
			if b.String() != tt.want || req.Description != "June" || req.Mode != bulk.ModePartial {
				t.Fatalf("items %q (%+v), want %q", b.String(), req, tt.want)
			}
		})
	}
}

func TestParseJSON(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"items numbered from 1", `{"items":[{"operator":"mtn","amount":10},{"operator":"orange","amount":"20"}],"mode":"all_or_nothing"}`, `1:mtn:10;2:orange:"20";`},
		{"an unknown key", `{"items":[],"kind":"x"}`, "kind"},
		{"items not a list", `{"items":{}}`, "items"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := bulkhttp.ParseJSON([]byte(tt.body))
			if !parsed(t, err, tt.want) {
				return
			}
			var b strings.Builder
			for _, in := range req.Items {
				fmt.Fprintf(&b, "%d:%s:%s;", in.Row, in.Operator, in.Amount)
			}
			if b.String() != tt.want {
				t.Fatalf("items %q, want %q", b.String(), tt.want)
			}
		})
	}
}

// parsed reports whether a parse succeeded; a field error must name the
// field want, and any other error fails the test.
func parsed(t *testing.T, err error, want string) bool {
	t.Helper()
	var fe *field.Error
	switch {
	case errors.As(err, &fe):
		if fe.Field != want {
			t.Fatalf("error on %q, want %q: %v", fe.Field, want, err)
		}
		return false
	case err != nil:
		t.Fatal(err)
	}
	return true
}
