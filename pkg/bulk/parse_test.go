package bulk_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"payments/pkg/bulk"
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
			req, err := bulk.ParseCSV([]byte(tt.body), "June", "partial")
			var fe *field.Error
			switch {
			case errors.As(err, &fe):
				if fe.Field != tt.want {
					t.Fatalf("error on %q, want %q: %v", fe.Field, tt.want, err)
				}
			case err != nil:
				t.Fatal(err)
			default:
				var b strings.Builder
				for _, in := range req.Items {
					fmt.Fprintf(&b, "%d:%s,%s,%s,%s;", in.Row, in.Operator, in.PhoneNumber, in.Amount, in.ExternalID)
				}
				if b.String() != tt.want || req.Description != "June" || req.Mode != bulk.ModePartial {
					t.Fatalf("items %q (%+v), want %q", b.String(), req, tt.want)
				}
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
			req, err := bulk.ParseJSON([]byte(tt.body))
			var fe *field.Error
			switch {
			case errors.As(err, &fe):
				if fe.Field != tt.want {
					t.Fatalf("error on %q, want %q: %v", fe.Field, tt.want, err)
				}
			case err != nil:
				t.Fatal(err)
			default:
				var b strings.Builder
				for _, in := range req.Items {
					fmt.Fprintf(&b, "%d:%s:%s;", in.Row, in.Operator, in.Amount)
				}
				if b.String() != tt.want {
					t.Fatalf("items %q, want %q", b.String(), tt.want)
				}
			}
		})
	}
}

func TestBatchStatus(t *testing.T) {
	done := time.Date(2026, 6, 30, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		b      bulk.Batch
		status bulk.Status
		ready  bool
	}{
		{"chunks being written", bulk.Batch{Chunks: 3, ChunksDone: 2, AcceptedCount: 250}, bulk.StatusAccepted, false},
		{"items open", bulk.Batch{Chunks: 3, ChunksDone: 3, AcceptedCount: 250, Succeeded: 200, Failed: 49}, bulk.StatusProcessing, false},
		{"every item final", bulk.Batch{Chunks: 3, ChunksDone: 3, AcceptedCount: 250, Succeeded: 200, Failed: 50}, bulk.StatusProcessing, true},
		{"nothing accepted", bulk.Batch{Chunks: 1, ChunksDone: 1}, bulk.StatusProcessing, true},
		{"completed", bulk.Batch{Chunks: 1, ChunksDone: 1, CompletedAt: &done}, bulk.StatusCompleted, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if s := tt.b.Status(); s != tt.status {
				t.Errorf("Status = %s, want %s", s, tt.status)
			}
			if d := tt.b.Done(); d != tt.ready {
				t.Errorf("Done = %v, want %v", d, tt.ready)
			}
		})
	}
}

func TestBatchView(t *testing.T) {
	b := bulk.Batch{
		ID: "b1", Mode: bulk.ModePartial, Currency: "USD", ItemCount: 5, AcceptedCount: 4, RejectedCount: 1,
		Processing: 1, Succeeded: 1, Failed: 1, TotalAmount: 4000, TotalFees: 60, Paid: 1000, FeesPaid: 15, Refunded: 1015,
	}
	v := b.View()
	if v.Counts.Pending != 1 || v.Totals.Reserved != "20.3" || v.TotalAmount != "40" || v.Totals.Refunded != "10.15" ||
		v.Description != nil || *v.Currency != "USD" || v.CompletedAt != nil {
		t.Fatalf("view %+v", v)
	}
}

func TestParseChunkJob(t *testing.T) {
	const id = "0196a0c3-0000-7abc-8def-0123456789ab"
	tests := []struct {
		name, body string
		chunk, bad bool
	}{
		{"a chunk job", `{"company_id":"` + id + `","batch_id":"` + id + `","chunk":99}`, true, false},
		{"a payment's job", `{"company_id":"` + id + `","transaction_id":"` + id + `","due":"2026-01-01T00:00:00.000Z"}`, false, false},
		{"not JSON", `x`, false, false},
		{"a chunk past the last", `{"company_id":"` + id + `","batch_id":"` + id + `","chunk":100}`, true, true},
		{"a bad batch id", `{"company_id":"` + id + `","batch_id":"x","chunk":0}`, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, chunk, err := bulk.ParseChunkJob([]byte(tt.body))
			if chunk != tt.chunk || (err != nil) != tt.bad {
				t.Fatalf("ParseChunkJob = %v, %v", chunk, err)
			}
		})
	}
}
