package bulk_test

import (
	"testing"
	"time"

	"payments/pkg/bulk"
)

func TestBatchStatus(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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
