package moneystore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/bulk"
	"payments/pkg/page"
	"payments/pkg/store"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
	"payments/pkg/timestamp"
	"payments/pkg/wallets"
)

var _ bulk.Store = (*Bulk)(nil)

// Bulk stores bulk payout batches. In the company partition:
//
//   - BULK#<batch id>: the batch, its counts and totals and its
//     reservation entries; ids are UUID v7, so a Query on the prefix lists
//     batches by time. Until it completes it carries GSI2 keys in the
//     partition OPEN_BULK (GSI2SK "<created_at>#<company id>#<id>"), the
//     sweeper's list.
//   - BULKROWS#<batch id>#<nnnn>: chunk n of its rows, JSON in one
//     attribute, and whether its payouts are written.
//
// The batch's items become ordinary payments (Payments), each with
// batch_id and batch_entry_id; their transitions keep the batch's counts
// (batchCount).
type Bulk struct {
	db       *store.DB
	wallets  *Wallets
	payments *Payments
}

// NewBulk returns the batch store on db.
func NewBulk(db *store.DB) *Bulk {
	return &Bulk{db: db, wallets: NewWallets(db), payments: NewPayments(db)}
}

// batchItem is a batch as stored.
type batchItem struct {
	PK            string            `dynamodbav:"PK"`
	SK            string            `dynamodbav:"SK"`
	Type          string            `dynamodbav:"type"`
	ID            string            `dynamodbav:"id"`
	CompanyID     string            `dynamodbav:"company_id"`
	Mode          string            `dynamodbav:"mode"`
	Description   string            `dynamodbav:"description,omitempty"`
	Currency      string            `dynamodbav:"currency,omitempty"`
	ItemCount     int               `dynamodbav:"item_count"`
	AcceptedCount int               `dynamodbav:"accepted_count"`
	RejectedCount int               `dynamodbav:"rejected_count"`
	Processing    int               `dynamodbav:"count_processing"`
	Succeeded     int               `dynamodbav:"count_success"`
	Failed        int               `dynamodbav:"count_failed"`
	TotalAmount   int64             `dynamodbav:"total_amount"`
	TotalFees     int64             `dynamodbav:"total_fees"`
	Paid          int64             `dynamodbav:"paid"`
	FeesPaid      int64             `dynamodbav:"fees_paid"`
	Refunded      int64             `dynamodbav:"refunded"`
	Chunks        int               `dynamodbav:"chunks"`
	ChunksDone    int               `dynamodbav:"chunks_done"`
	Reservations  []reservationItem `dynamodbav:"reservations"`
	Correlation   string            `dynamodbav:"correlation_id,omitempty"`
	CreatedAt     string            `dynamodbav:"created_at"`
	UpdatedAt     string            `dynamodbav:"updated_at"`
	CompletedAt   string            `dynamodbav:"completed_at,omitempty"`
	GSI2PK        string            `dynamodbav:"GSI2PK,omitempty"`
	GSI2SK        string            `dynamodbav:"GSI2SK,omitempty"`
}

// reservationItem is a batch's reservation entry on one wallet.
type reservationItem struct {
	WalletID string `dynamodbav:"wallet_id"`
	EntryID  string `dynamodbav:"entry_id"`
	Total    int64  `dynamodbav:"total"`
}

func newBatchItem(b bulk.Batch) batchItem {
	it := batchItem{
		PK: schema.CompanyPK(b.CompanyID), SK: schema.BulkSK(b.ID), Type: schema.KindBulkBatch, ID: b.ID, CompanyID: b.CompanyID,
		Mode: string(b.Mode), Description: b.Description, Currency: b.Currency,
		ItemCount: b.ItemCount, AcceptedCount: b.AcceptedCount, RejectedCount: b.RejectedCount,
		Processing: b.Processing, Succeeded: b.Succeeded, Failed: b.Failed,
		TotalAmount: b.TotalAmount, TotalFees: b.TotalFees, Paid: b.Paid, FeesPaid: b.FeesPaid, Refunded: b.Refunded,
		Chunks: b.Chunks, ChunksDone: b.ChunksDone, Correlation: b.CorrelationID,
		CreatedAt: timestamp.Format(b.CreatedAt), UpdatedAt: timestamp.Format(b.UpdatedAt),
	}
	for _, r := range b.Reservations {
		it.Reservations = append(it.Reservations, reservationItem{WalletID: r.WalletID, EntryID: r.EntryID, Total: r.Total})
	}
	if b.CompletedAt != nil {
		it.CompletedAt = timestamp.Format(*b.CompletedAt)
	} else {
		it.GSI2PK, it.GSI2SK = schema.OpenBulkGSI2PK, schema.TimedRef(it.CreatedAt, b.CompanyID, b.ID)
	}
	return it
}

func (it batchItem) batch() (bulk.Batch, error) {
	b := bulk.Batch{
		ID: it.ID, CompanyID: it.CompanyID, Mode: bulk.Mode(it.Mode), Description: it.Description, Currency: it.Currency,
		ItemCount: it.ItemCount, AcceptedCount: it.AcceptedCount, RejectedCount: it.RejectedCount,
		Processing: it.Processing, Succeeded: it.Succeeded, Failed: it.Failed,
		TotalAmount: it.TotalAmount, TotalFees: it.TotalFees, Paid: it.Paid, FeesPaid: it.FeesPaid, Refunded: it.Refunded,
		Chunks: it.Chunks, ChunksDone: it.ChunksDone, CorrelationID: it.Correlation,
	}
	for _, r := range it.Reservations {
		b.Reservations = append(b.Reservations, bulk.Reservation{WalletID: r.WalletID, EntryID: r.EntryID, Total: r.Total})
	}
	var err error
	if b.CreatedAt, err = timestamp.Parse(it.CreatedAt); err != nil {
		return bulk.Batch{}, fmt.Errorf("store: batch %s: created_at: %w", it.ID, err)
	}
	if b.UpdatedAt, err = timestamp.Parse(it.UpdatedAt); err != nil {
		return bulk.Batch{}, fmt.Errorf("store: batch %s: updated_at: %w", it.ID, err)
	}
	if it.CompletedAt != "" {
		done, err := timestamp.Parse(it.CompletedAt)
		if err != nil {
			return bulk.Batch{}, fmt.Errorf("store: batch %s: completed_at: %w", it.ID, err)
		}
		b.CompletedAt = &done
	}
	return b, nil
}

// chunkItem is a chunk of a batch's rows as stored: the rows as JSON, in
// one attribute (a chunk of ChunkSize rows stays far below DynamoDB's
// 400 KB an item).
type chunkItem struct {
	PK        string `dynamodbav:"PK"`
	SK        string `dynamodbav:"SK"`
	Type      string `dynamodbav:"type"`
	CompanyID string `dynamodbav:"company_id"`
	BatchID   string `dynamodbav:"batch_id"`
	N         int    `dynamodbav:"n"`
	Rows      string `dynamodbav:"rows"`
	Done      bool   `dynamodbav:"done"`
}

// rowJSON is a row in a chunk's rows.
type rowJSON struct {
	Row         int    `json:"n"`
	ExternalID  string `json:"ext,omitempty"`
	Operator    string `json:"op,omitempty"`
	Country     string `json:"cc,omitempty"`
	PhoneNumber string `json:"ph,omitempty"`
	Amount      string `json:"amt,omitempty"`
	Currency    string `json:"cur,omitempty"`
	Reason      string `json:"rsn,omitempty"`
	NotifyURL   string `json:"url,omitempty"`
	// The acceptance; the payout's external_id and reason only when they
	// are not the input's (a default applied).
	TransactionID string `json:"tx,omitempty"`
	PayExternalID string `json:"pext,omitempty"`
	PayReason     string `json:"prsn,omitempty"`
	WalletID      string `json:"w,omitempty"`
	Minor         int64  `json:"a,omitempty"`
	Fee           int64  `json:"fee,omitempty"`
	// The rejection.
	Field   string `json:"rf,omitempty"`
	Code    string `json:"rc,omitempty"`
	Message string `json:"rm,omitempty"`
}

// encodeRows returns rows as a chunk stores them.
func encodeRows(rows []bulk.Row) (string, error) {
	out := make([]rowJSON, len(rows))
	for i, r := range rows {
		in := r.Input
		j := rowJSON{Row: in.Row, ExternalID: in.ExternalID, Operator: in.Operator, Country: in.Country,
			PhoneNumber: in.PhoneNumber, Amount: in.Amount, Currency: in.Currency, Reason: in.Reason, NotifyURL: in.NotifyURL}
		if a := r.Accepted; a != nil {
			j.TransactionID, j.WalletID, j.Minor, j.Fee = a.TransactionID, a.WalletID, a.Amount, a.Fee
			if a.ExternalID != in.ExternalID {
				j.PayExternalID = a.ExternalID
			}
			if a.Reason != in.Reason {
				j.PayReason = a.Reason
			}
		}
		if rej := r.Rejection; rej != nil {
			j.Field, j.Code, j.Message = rej.Field, rej.Code, rej.Message
		}
		out[i] = j
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // a notify_url's & stays one byte
	if err := enc.Encode(out); err != nil {
		return "", fmt.Errorf("store: encode rows: %w", err)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// decodeRows reads the rows of a chunk.
func decodeRows(s string) ([]bulk.Row, error) {
	var in []rowJSON
	if err := json.Unmarshal([]byte(s), &in); err != nil {
		return nil, fmt.Errorf("store: decode rows: %w", err)
	}
	rows := make([]bulk.Row, len(in))
	for i, j := range in {
		rows[i].Input = bulk.Input{Row: j.Row, ExternalID: j.ExternalID, Operator: j.Operator, Country: j.Country,
			PhoneNumber: j.PhoneNumber, Amount: j.Amount, Currency: j.Currency, Reason: j.Reason, NotifyURL: j.NotifyURL}
		if j.TransactionID != "" {
			a := &bulk.Accepted{TransactionID: j.TransactionID, ExternalID: j.ExternalID, Reason: j.Reason,
				WalletID: j.WalletID, Amount: j.Minor, Fee: j.Fee}
			if j.PayExternalID != "" {
				a.ExternalID = j.PayExternalID
			}
			if j.PayReason != "" {
				a.Reason = j.PayReason
			}
			rows[i].Accepted = a
		}
		if j.Code != "" {
			rows[i].Rejection = &bulk.Rejection{Field: j.Field, Code: j.Code, Message: j.Message}
		}
	}
	return rows, nil
}

func newChunkItem(c bulk.Chunk) (map[string]types.AttributeValue, error) {
	rows, err := encodeRows(c.Rows)
	if err != nil {
		return nil, err
	}
	item, err := attributevalue.MarshalMap(chunkItem{
		PK: schema.CompanyPK(c.CompanyID), SK: schema.BulkChunkSK(c.BatchID, c.N), Type: schema.KindBulkChunk,
		CompanyID: c.CompanyID, BatchID: c.BatchID, N: c.N, Rows: rows, Done: c.Done,
	})
	if err != nil {
		return nil, fmt.Errorf("store: marshal chunk: %w", err)
	}
	return item, nil
}

// CreateBatch writes the chunks (BatchWriteItem), then in one transaction
// the batch, as new, and the reservation posting, each wallet on the
// condition that it is active and its payout_available covers its total.
// A refused wallet is a *bulk.InsufficientWallet; the chunks written stay,
// unreferenced, to be written over by the next try of the batch.
func (s *Bulk) CreateBatch(ctx context.Context, b bulk.Batch, chunks []bulk.Chunk, reservation wallets.Posting) error {
	items := make([]map[string]types.AttributeValue, len(chunks))
	for i, c := range chunks {
		var err error
		if items[i], err = newChunkItem(c); err != nil {
			return err
		}
	}
	if err := s.db.PutAll(ctx, "write chunks of batch "+b.ID, items); err != nil {
		return err
	}
	batch, err := attributevalue.MarshalMap(newBatchItem(b))
	if err != nil {
		return fmt.Errorf("store: marshal batch: %w", err)
	}
	return s.db.Commit(ctx, "create batch "+b.ID, func(ctx context.Context) (*store.Txn, error) {
		t := &store.Txn{}
		s.db.RecordEffect(ctx, t, b.ID, nil)
		t.Add(schema.BatchItem, s.wallets.putNew(batch))
		if _, err := s.wallets.post(ctx, t, reservation); err != nil {
			return nil, err
		}
		return t, nil
	}, func(ctx context.Context, c dynamo.Cancellation) error {
		for i, l := range reservation.Legs {
			if c.Failed(schema.WalletLegItem(i)) {
				err := s.wallets.whyRefusedActive(ctx, b.CompanyID, l.WalletID, wallets.ErrInsufficientBalance)
				return &bulk.InsufficientWallet{WalletID: l.WalletID, Err: err}
			}
		}
		return nil
	})
}

// GetBatch reads a batch of the company, strongly consistent.
func (s *Bulk) GetBatch(ctx context.Context, companyID, id string) (bulk.Batch, error) {
	var it batchItem
	if err := s.db.Get(ctx, "batch "+id, schema.CompanyPK(companyID), schema.BulkSK(id), &it, bulk.ErrNotFound); err != nil {
		return bulk.Batch{}, err
	}
	return it.batch()
}

// ListBatches reads page p of the company's batches, newest first,
// strongly consistent.
func (s *Bulk) ListBatches(ctx context.Context, companyID string, p page.Request) (page.Result[bulk.Batch], error) {
	lo, hi := dynamo.TimeRange(schema.BulkSKPrefix, time.Time{}, time.Time{})
	l := dynamo.Listing{PKAttr: schema.AttrPK, SKAttr: schema.AttrSK, PK: schema.CompanyPK(companyID), Prefix: schema.BulkSKPrefix, Lo: lo, Hi: hi, Consistent: true}
	rows, total, next, err := s.db.ReadPage(ctx, l, p)
	if err != nil {
		return page.Result[bulk.Batch]{}, err
	}
	return dynamo.PageOf(rows, total, next, batchItem.batch)
}

// GetChunk reads chunk n of a batch, strongly consistent.
func (s *Bulk) GetChunk(ctx context.Context, companyID, batchID string, n int) (bulk.Chunk, error) {
	var it chunkItem
	if err := s.db.Get(ctx, "chunk of batch "+batchID, schema.CompanyPK(companyID), schema.BulkChunkSK(batchID, n), &it, bulk.ErrNotFound); err != nil {
		return bulk.Chunk{}, err
	}
	rows, err := decodeRows(it.Rows)
	if err != nil {
		return bulk.Chunk{}, err
	}
	return bulk.Chunk{CompanyID: it.CompanyID, BatchID: it.BatchID, N: it.N, Rows: rows, Done: it.Done}, nil
}
