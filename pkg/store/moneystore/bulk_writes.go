package moneystore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/bulk"
	"payments/pkg/events"
	"payments/pkg/payments"
	"payments/pkg/store"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
	"payments/pkg/timestamp"
	"payments/pkg/wallets"
)

// TakenExternalIDs reads which of ids the company has claimed, with
// BatchGetItem calls.
func (s *Bulk) TakenExternalIDs(ctx context.Context, companyID string, ids []string) (map[string]bool, error) {
	keys := make([]map[string]types.AttributeValue, len(ids))
	for i, id := range ids {
		keys[i] = dynamo.Key(schema.CompanyPK(companyID), schema.ExternalIDSK(id))
	}
	found, err := s.db.GetAll(ctx, "read external_id claims", keys)
	if err != nil {
		return nil, err
	}
	taken := make(map[string]bool, len(found))
	for _, item := range found {
		var it externalIDItem
		if err := attributevalue.UnmarshalMap(item, &it); err != nil {
			return nil, fmt.Errorf("store: decode external_id claim: %w", err)
		}
		taken[it.ExternalID] = true
	}
	return taken, nil
}

// errClaimsTaken is a transaction of claims of which some were taken.
var errClaimsTaken = errors.New("store: external_ids taken")

// ClaimExternalIDs writes each claim, on the condition that no other
// payment holds its external_id (a claim already the payout's is kept: a
// chunk written again), as many a transaction as it holds
// (DB.MaxTransactItems). A transaction refused for claims taken is written
// again without them. It returns the transaction ids of the claims taken.
func (s *Bulk) ClaimExternalIDs(ctx context.Context, companyID string, claims []bulk.Claim) (map[string]bool, error) {
	taken := map[string]bool{}
	for start := 0; start < len(claims); start += s.db.MaxTransactItems {
		group := claims[start:min(start+s.db.MaxTransactItems, len(claims))]
		for len(group) > 0 {
			t := &store.Txn{}
			for i, c := range group {
				item, err := attributevalue.MarshalMap(externalIDItem{
					PK: schema.CompanyPK(companyID), SK: schema.ExternalIDSK(c.ExternalID), Type: schema.KindExternalID,
					ExternalID: c.ExternalID, TransactionID: c.TransactionID,
				})
				if err != nil {
					return nil, fmt.Errorf("store: marshal external_id claim: %w", err)
				}
				t.Add(externalIDClaim(i), types.TransactWriteItem{Put: &types.Put{
					TableName:                 aws.String(s.db.Table),
					Item:                      item,
					ConditionExpression:       aws.String("attribute_not_exists(PK) OR transaction_id = :tx"),
					ExpressionAttributeValues: map[string]types.AttributeValue{":tx": dynamo.Str(c.TransactionID)},
				}})
			}
			var left []bulk.Claim
			err := s.db.CommitOnce(ctx, "claim external_ids", t, func(_ context.Context, k dynamo.Cancellation) error {
				for i, c := range group {
					if k.Failed(externalIDClaim(i)) {
						taken[c.TransactionID] = true
					} else {
						left = append(left, c)
					}
				}
				if len(left) < len(group) {
					return errClaimsTaken
				}
				return nil
			})
			switch {
			case errors.Is(err, errClaimsTaken):
				group = left
			case err != nil:
				return nil, err
			default:
				group = nil
			}
		}
	}
	return taken, nil
}

// externalIDClaim names claim i of a transaction of claims.
func externalIDClaim(i int) string { return "claim" + strconv.Itoa(i) }

// GetPayments reads the company's payments of ids that exist, with
// BatchGetItem calls, strongly consistent.
func (s *Bulk) GetPayments(ctx context.Context, companyID string, ids []string) (map[string]payments.Payment, error) {
	keys := make([]map[string]types.AttributeValue, len(ids))
	for i, id := range ids {
		keys[i] = dynamo.Key(schema.CompanyPK(companyID), schema.PaymentSK(id))
	}
	found, err := s.db.GetAll(ctx, "read payments", keys)
	if err != nil {
		return nil, err
	}
	out := make(map[string]payments.Payment, len(found))
	for _, item := range found {
		var it paymentItem
		if err := attributevalue.UnmarshalMap(item, &it); err != nil {
			return nil, fmt.Errorf("store: decode payment: %w", err)
		}
		p, err := it.payment()
		if err != nil {
			return nil, err
		}
		out[p.ID] = p
	}
	return out, nil
}

// PutPayouts writes new payouts with BatchWriteItem calls: first each
// one's id lookup, acceptance event (numbered 1) and that event's counter,
// then the payouts. A payout therefore exists only once all it needs does,
// and a payout that exists is never written again (the caller writes those
// it did not find, before any was queued for submission).
func (s *Bulk) PutPayouts(ctx context.Context, ps []payments.Payment, evs []events.Event) error {
	var first, last []map[string]types.AttributeValue
	for i, p := range ps {
		ref, err := s.payments.paymentRefPut(p)
		if err != nil {
			return err
		}
		event, counter, err := s.db.FirstEvent(evs[i])
		if err != nil {
			return err
		}
		payment, err := attributevalue.MarshalMap(newPaymentItem(p))
		if err != nil {
			return fmt.Errorf("store: marshal payment: %w", err)
		}
		first = append(first, ref.Put.Item, event, counter)
		last = append(last, payment)
	}
	if err := s.db.PutAll(ctx, "write payouts' lookups and events", first); err != nil {
		return err
	}
	return s.db.PutAll(ctx, "write payouts", last)
}

// LeaseChunk writes the lease of chunk n, on the condition that it is not
// done and any lease it has ran out before now.
func (s *Bulk) LeaseChunk(ctx context.Context, companyID, batchID string, n int, lease string, now, until time.Time) error {
	_, err := s.db.Update(ctx, fmt.Sprintf("lease chunk %d of batch %s", n, batchID), &dynamodb.UpdateItemInput{
		TableName:           aws.String(s.db.Table),
		Key:                 dynamo.Key(schema.CompanyPK(companyID), schema.BulkChunkSK(batchID, n)),
		UpdateExpression:    aws.String("SET lease_id = :lease, lease_until = :until"),
		ConditionExpression: aws.String("done = :not AND (attribute_not_exists(lease_until) OR lease_until < :now)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":lease": dynamo.Str(lease), ":until": dynamo.Str(timestamp.Format(until)),
			":now": dynamo.Str(timestamp.Format(now)), ":not": dynamo.Bool(false),
		},
	})
	if dynamo.ConditionFailed(err) {
		return bulk.ErrChanged
	}
	return err
}

// ChunksLeft queries the batch's chunks not done, projected to their
// numbers.
func (s *Bulk) ChunksLeft(ctx context.Context, companyID, batchID string) ([]int, error) {
	p := dynamodb.NewQueryPaginator(s.db.Client, &dynamodb.QueryInput{
		TableName:              aws.String(s.db.Table),
		KeyConditionExpression: aws.String("PK = :pk AND begins_with(SK, :prefix)"),
		FilterExpression:       aws.String("done = :not"),
		ProjectionExpression:   aws.String("n"),
		ConsistentRead:         aws.Bool(true),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": dynamo.Str(schema.CompanyPK(companyID)), ":prefix": dynamo.Str(schema.BulkChunksOf(batchID)),
			":not": dynamo.Bool(false),
		},
	})
	var left []int
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("store: query chunks left of batch %s: %w", batchID, err)
		}
		for _, item := range out.Items {
			var it struct {
				N int `dynamodbav:"n"`
			}
			if err := attributevalue.UnmarshalMap(item, &it); err != nil {
				return nil, fmt.Errorf("store: decode chunk: %w", err)
			}
			left = append(left, it.N)
		}
	}
	return left, nil
}

// ReleaseChunk removes the lease of chunk n if it is still lease.
func (s *Bulk) ReleaseChunk(ctx context.Context, companyID, batchID string, n int, lease string) error {
	_, err := s.db.Update(ctx, fmt.Sprintf("release chunk %d of batch %s", n, batchID), &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.db.Table),
		Key:                       dynamo.Key(schema.CompanyPK(companyID), schema.BulkChunkSK(batchID, n)),
		UpdateExpression:          aws.String("REMOVE lease_id, lease_until"),
		ConditionExpression:       aws.String("lease_id = :lease"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":lease": dynamo.Str(lease)},
	})
	if dynamo.ConditionFailed(err) {
		return nil
	}
	return err
}

// FinishChunk writes, in one transaction: chunk c done, with its rows as
// they now stand, on the condition that it was not and that c.Lease holds
// it; the batch's chunks
// done, and its counts and totals less the released rows; and the release
// posting.
func (s *Bulk) FinishChunk(ctx context.Context, b bulk.Batch, c bulk.Chunk, released []bulk.Row, release *wallets.Posting, at time.Time) error {
	rows, err := encodeRows(c.Rows)
	if err != nil {
		return err
	}
	var amount, fees int64
	for _, r := range released {
		amount += r.Accepted.Amount
		fees += r.Accepted.Fee
	}
	now := timestamp.Format(at)
	return s.db.Commit(ctx, fmt.Sprintf("finish chunk %d of batch %s", c.N, b.ID), func(ctx context.Context) (*store.Txn, error) {
		t := &store.Txn{}
		t.Add("chunk", types.TransactWriteItem{Update: &types.Update{
			TableName:                aws.String(s.db.Table),
			Key:                      dynamo.Key(schema.CompanyPK(c.CompanyID), schema.BulkChunkSK(c.BatchID, c.N)),
			UpdateExpression:         aws.String("SET done = :done, #rows = :rows"),
			ConditionExpression:      aws.String("done = :not AND lease_id = :lease"),
			ExpressionAttributeNames: map[string]string{"#rows": "rows"},
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":done": dynamo.Bool(true), ":not": dynamo.Bool(false), ":rows": dynamo.Str(rows), ":lease": dynamo.Str(c.Lease),
			},
		}})
		t.Add(schema.BatchItem, types.TransactWriteItem{Update: &types.Update{
			TableName: aws.String(s.db.Table),
			Key:       dynamo.Key(schema.CompanyPK(b.CompanyID), schema.BulkSK(b.ID)),
			UpdateExpression: aws.String("SET updated_at = :now ADD chunks_done :one, accepted_count :lessn, rejected_count :n, " +
				"total_amount :lessamount, total_fees :lessfees"),
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":now": dynamo.Str(now), ":one": dynamo.Num(1), ":n": dynamo.Num(int64(len(released))),
				":lessn": dynamo.Num(-int64(len(released))), ":lessamount": dynamo.Num(-amount), ":lessfees": dynamo.Num(-fees),
			},
		}})
		if release != nil {
			if _, err := s.wallets.post(ctx, t, *release); err != nil {
				return nil, err
			}
		}
		return t, nil
	}, func(_ context.Context, k dynamo.Cancellation) error {
		if k.Failed("chunk") {
			return bulk.ErrChanged
		}
		return nil
	})
}

// CompleteBatch writes, in one transaction: the batch completed, out of
// the open-batch index, on the condition that it was not and that its
// counts are still b's; the closing posting; and ev, the batch's one
// event.
func (s *Bulk) CompleteBatch(ctx context.Context, b bulk.Batch, closing wallets.Posting, ev events.Event) error {
	return s.db.Commit(ctx, "complete batch "+b.ID, func(ctx context.Context) (*store.Txn, error) {
		t := &store.Txn{}
		t.Add(schema.BatchItem, types.TransactWriteItem{Update: &types.Update{
			TableName:        aws.String(s.db.Table),
			Key:              dynamo.Key(schema.CompanyPK(b.CompanyID), schema.BulkSK(b.ID)),
			UpdateExpression: aws.String("SET completed_at = :now, updated_at = :now REMOVE " + schema.AttrGSI2PK + ", " + schema.AttrGSI2SK),
			ConditionExpression: aws.String("attribute_not_exists(completed_at) AND accepted_count = :a AND count_success = :s " +
				"AND count_failed = :f AND chunks_done = :c"),
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":now": dynamo.Str(timestamp.Format(closing.Now)), ":a": dynamo.Num(int64(b.AcceptedCount)),
				":s": dynamo.Num(int64(b.Succeeded)), ":f": dynamo.Num(int64(b.Failed)), ":c": dynamo.Num(int64(b.ChunksDone)),
			},
		}})
		t.Finishes(b.ID)
		t.AddEvent(schema.EventItem, ev)
		if _, err := s.wallets.post(ctx, t, closing); err != nil {
			return nil, err
		}
		return t, nil
	}, func(_ context.Context, k dynamo.Cancellation) error {
		if k.Failed(schema.BatchItem) {
			return bulk.ErrChanged
		}
		return nil
	})
}

// OpenBatches returns up to limit batches not completed, created before
// cutoff, oldest first (eventually consistent), reading the index's keys
// a page at a time.
func (s *Bulk) OpenBatches(ctx context.Context, cutoff time.Time, limit int) ([]bulk.Ref, error) {
	p := dynamodb.NewQueryPaginator(s.db.Client, &dynamodb.QueryInput{
		TableName:              aws.String(s.db.Table),
		IndexName:              aws.String(schema.GSI2),
		KeyConditionExpression: aws.String("GSI2PK = :pk AND GSI2SK < :cut"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": dynamo.Str(schema.OpenBulkGSI2PK), ":cut": dynamo.Str(timestamp.Format(cutoff)),
		},
		ProjectionExpression:     aws.String("#sk"),
		ExpressionAttributeNames: map[string]string{"#sk": schema.AttrGSI2SK},
	})
	var refs []bulk.Ref
	for p.HasMorePages() && len(refs) < limit {
		out, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("store: query open batches: %w", err)
		}
		for _, item := range out.Items {
			sk, _ := item[schema.AttrGSI2SK].(*types.AttributeValueMemberS)
			if sk == nil || len(refs) == limit {
				continue
			}
			companyID, id, err := schema.SplitTimedRef(sk.Value)
			if err != nil {
				return nil, err
			}
			refs = append(refs, bulk.Ref{CompanyID: companyID, ID: id})
		}
	}
	return refs, nil
}

// batchCount returns the update of the batch of p, one of its items, that
// goes with p's transition from status from: the item counted in its new
// status (and no longer as PROCESSING), and, when it is final, its money
// added to what the batch paid or refunded.
func (s *Payments) batchCount(p payments.Payment, from payments.Status) types.TransactWriteItem {
	add := []string{}
	values := map[string]types.AttributeValue{":now": dynamo.Str(timestamp.Format(p.UpdatedAt)), ":one": dynamo.Num(1)}
	switch p.Status {
	case payments.StatusProcessing:
		add = append(add, "count_processing :one")
	case payments.StatusSuccess:
		add = append(add, "count_success :one", "paid :amount", "fees_paid :fee")
		values[":amount"], values[":fee"] = dynamo.Num(p.Amount), dynamo.Num(p.Fee)
	case payments.StatusFailed:
		add = append(add, "count_failed :one", "refunded :total")
		values[":total"] = dynamo.Num(p.Total())
	}
	if from == payments.StatusProcessing {
		add = append(add, "count_processing :less")
		values[":less"] = dynamo.Num(-1)
	}
	return types.TransactWriteItem{Update: &types.Update{
		TableName:                 aws.String(s.db.Table),
		Key:                       dynamo.Key(schema.CompanyPK(p.CompanyID), schema.BulkSK(p.BatchID)),
		UpdateExpression:          aws.String("SET updated_at = :now ADD " + strings.Join(add, ", ")),
		ConditionExpression:       aws.String("attribute_exists(PK)"),
		ExpressionAttributeValues: values,
	}}
}
