package customerstore

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/customers"
	"payments/pkg/events"
	"payments/pkg/store"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
	"payments/pkg/timestamp"
)

var _ customers.ReviewStore = (*Customers)(nil)

// PendingReview returns a page of the customers of every company waiting
// for review, oldest first, from the KYC_REVIEW partition of GSI1
// (store.ConsolePage; Decide conditions on the stored status).
func (s *Customers) PendingReview(ctx context.Context, after string, limit int) ([]customers.Customer, string, error) {
	return store.ConsolePage(ctx, s.db, "customers pending review", schema.KYCReviewGSI1PK, after, limit, customerItem.customer,
		func(c customers.Customer) string { return c.ID })
}

// CountPendingReview returns how many customers of every company wait for
// review (store.ConsoleCount).
func (s *Customers) CountPendingReview(ctx context.Context) (int, error) {
	return store.ConsoleCount(ctx, s.db, "customers pending review", schema.KYCReviewGSI1PK)
}

// ByID reads the customer id lookup, then the customer, both strongly
// consistent.
func (s *Customers) ByID(ctx context.Context, id string) (customers.Customer, error) {
	var ref customerRefItem
	if err := s.db.Get(ctx, "customer ref "+id, schema.CustomerRefPK(id), schema.CustomerRefSK, &ref, customers.ErrNotFound); err != nil {
		return customers.Customer{}, err
	}
	return s.Get(ctx, ref.CompanyID, id)
}

// Decide writes c's decided KYC status, reason, review and updated_at, and
// takes it out of the review queue, with ev, in one transaction
// conditioned on the stored customer being PENDING_REVIEW.
func (s *Customers) Decide(ctx context.Context, c customers.Customer, ev events.Event) error {
	u := store.NewAttrUpdate()
	u.Set("kyc_status", string(c.KYCStatus))
	if c.KYCReason != "" {
		u.Set("kyc_reason", c.KYCReason)
	} else {
		u.Remove("kyc_reason")
	}
	if r := c.Review; r != nil {
		if r.By != "" {
			u.Set("kyc_reviewed_by", r.By)
		}
		u.Set("kyc_reviewed_at", timestamp.Format(r.At))
		if r.Note != "" {
			u.Set("kyc_review_note", r.Note)
		}
	}
	u.Set("updated_at", timestamp.Format(c.UpdatedAt))
	u.Remove(schema.AttrGSI1PK)
	u.Remove(schema.AttrGSI1SK)
	expr, names, values, err := u.Build()
	if err != nil {
		return fmt.Errorf("store: decide customer %s: %w", c.ID, err)
	}
	names["#status"] = "kyc_status"
	values[":pending"] = dynamo.Str(string(customers.PendingReview))
	t := &store.Txn{}
	t.Add("customer", types.TransactWriteItem{Update: &types.Update{
		TableName:                 aws.String(s.db.Table),
		Key:                       dynamo.Key(schema.CompanyPK(c.CompanyID), schema.CustomerSK(c.ID)),
		UpdateExpression:          aws.String(expr),
		ConditionExpression:       aws.String("#status = :pending"),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	}})
	t.AddEvent(schema.EventItem, ev)
	return s.db.CommitOnce(ctx, "decide customer "+c.ID, t, func(_ context.Context, k dynamo.Cancellation) error {
		if k.Failed("customer") {
			return customers.ErrKYCDecided
		}
		return nil
	})
}
