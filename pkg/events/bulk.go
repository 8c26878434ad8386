package events

import "encoding/json"

// PaymentBulkCompleted is ours: every accepted item of a bulk payout batch
// is final (SUCCESS or FAILED), or none was accepted. It is sent once per
// batch.
const PaymentBulkCompleted Kind = "payment.bulk.completed"

// BulkBatch is a bulk payout batch as clients see it: the data of
// payment.bulk.completed and of the batch routes (POST and GET
// /payment/payouts/bulk). Amounts are major units of Currency.
type BulkBatch struct {
	BatchID       string      `json:"batch_id"`
	Status        string      `json:"status"` // ACCEPTED, PROCESSING or COMPLETED
	Mode          string      `json:"mode"`   // partial or all_or_nothing
	Description   *string     `json:"description"`
	Currency      *string     `json:"currency"` // null when no item was accepted
	ItemCount     int         `json:"item_count"`
	AcceptedCount int         `json:"accepted_count"`
	RejectedCount int         `json:"rejected_count"`
	Counts        BulkCounts  `json:"counts"`
	TotalAmount   json.Number `json:"total_amount"`
	TotalFees     json.Number `json:"total_fees"`
	Totals        BulkTotals  `json:"totals"`
	CreatedAt     string      `json:"created_at"`
	UpdatedAt     string      `json:"updated_at"`
	CompletedAt   *string     `json:"completed_at"`
}

// BulkCounts counts the items of a batch by status.
type BulkCounts struct {
	Pending    int `json:"pending"`
	Processing int `json:"processing"`
	Success    int `json:"success"`
	Failed     int `json:"failed"`
	Rejected   int `json:"rejected"`
}

// BulkTotals are the money of a batch's accepted items: still reserved,
// paid (the amounts of SUCCESS items), their fees, and refunded (amount and
// fee of FAILED items, released to the wallet).
type BulkTotals struct {
	Reserved json.Number `json:"reserved"`
	Paid     json.Number `json:"paid"`
	Fees     json.Number `json:"fees"`
	Refunded json.Number `json:"refunded"`
}

// PaymentBulkCompletedData is the data of payment.bulk.completed: the
// batch as it stands once complete.
type PaymentBulkCompletedData struct{ BulkBatch }

// EventKind returns PaymentBulkCompleted.
func (PaymentBulkCompletedData) EventKind() Kind { return PaymentBulkCompleted }

// EventObject returns the batch's id.
func (d PaymentBulkCompletedData) EventObject() string { return d.BatchID }
