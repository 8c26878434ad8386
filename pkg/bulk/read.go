package bulk

import (
	"context"
	"fmt"
	"strconv"

	"payments/pkg/page"
	"payments/pkg/payments"
)

// Item is one row of a batch as it stands: its status, and its payout once
// written.
type Item struct {
	Row
	Status  ItemStatus
	Payment *payments.Payment
}

// Get returns batch id of the company, or ErrNotFound.
func (s *Service) Get(ctx context.Context, companyID, id string) (Batch, error) {
	return s.store.GetBatch(ctx, companyID, id)
}

// List returns page p of the company's batches, newest first.
func (s *Service) List(ctx context.Context, companyID string, p page.Request) (page.Result[Batch], error) {
	res, err := s.store.ListBatches(ctx, companyID, p)
	if err != nil {
		return page.Result[Batch]{}, fmt.Errorf("bulk: list batches: %w", err)
	}
	return res, nil
}

// Items returns page p of batch id's items in row order, those in status
// when it is not empty. The position a cursor carries is a row number;
// the total is the batch's count of the status.
func (s *Service) Items(ctx context.Context, companyID, id string, status ItemStatus, p page.Request) (page.Result[Item], error) {
	b, err := s.store.GetBatch(ctx, companyID, id)
	if err != nil {
		return page.Result[Item]{}, err
	}
	after := 0
	if p.After != "" {
		if after, err = strconv.Atoi(p.After); err != nil || after < 1 || after > b.ItemCount {
			return page.Result[Item]{}, page.ErrBadCursor
		}
	}
	res := page.Result[Item]{Total: b.count(status)}
	if p.After != "" {
		res.Total = p.Total
	}
	skip := p.Skip()
	err = s.walk(ctx, b, after, func(it Item) bool {
		if status != "" && it.Status != status {
			return true
		}
		if skip > 0 {
			skip--
			return true
		}
		if len(res.Items) == p.Limit {
			res.Next = strconv.Itoa(res.Items[len(res.Items)-1].Input.Row)
			return false
		}
		res.Items = append(res.Items, it)
		return true
	})
	return res, err
}

// count returns the number of b's items in status ("" for all).
func (b Batch) count(status ItemStatus) int {
	switch status {
	case ItemPending:
		return b.Pending()
	case ItemProcessing:
		return b.Processing
	case ItemSuccess:
		return b.Succeeded
	case ItemFailed:
		return b.Failed
	case ItemRejected:
		return b.RejectedCount
	}
	return b.ItemCount
}

// Report calls fn with each item of batch id in row order.
func (s *Service) Report(ctx context.Context, companyID, id string, fn func(Item) error) error {
	b, err := s.store.GetBatch(ctx, companyID, id)
	if err != nil {
		return err
	}
	var ferr error
	err = s.walk(ctx, b, 0, func(it Item) bool {
		ferr = fn(it)
		return ferr == nil
	})
	if err != nil {
		return err
	}
	return ferr
}

// walk calls fn with each item of b after row after, in row order, until
// fn returns false: a chunk at a time, with its payouts read in one call.
func (s *Service) walk(ctx context.Context, b Batch, after int, fn func(Item) bool) error {
	for n := after / ChunkSize; n < b.Chunks; n++ {
		c, err := s.store.GetChunk(ctx, b.CompanyID, b.ID, n)
		if err != nil {
			return fmt.Errorf("bulk: read chunk %d of %s: %w", n, b.ID, err)
		}
		var txIDs []string
		for _, r := range c.Rows {
			if r.Accepted != nil && r.Input.Row > after {
				txIDs = append(txIDs, r.Accepted.TransactionID)
			}
		}
		written, err := s.store.GetPayments(ctx, b.CompanyID, txIDs)
		if err != nil {
			return fmt.Errorf("bulk: read payouts of chunk %d of %s: %w", n, b.ID, err)
		}
		for _, r := range c.Rows {
			if r.Input.Row <= after {
				continue
			}
			it := Item{Row: r, Status: ItemRejected}
			if r.Accepted != nil {
				it.Status = ItemPending
				if p, ok := written[r.Accepted.TransactionID]; ok {
					it.Payment, it.Status = &p, ItemStatus(p.Status)
				}
			}
			if !fn(it) {
				return nil
			}
		}
	}
	return nil
}
