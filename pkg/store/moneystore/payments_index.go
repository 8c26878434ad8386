package moneystore

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/payments"
	"payments/pkg/store"
	"payments/pkg/store/schema"
	"payments/pkg/timestamp"
)

// DuePayments returns up to limit payments of every company whose
// NextPollAt is before cutoff, from every shard of the open-payment index
// (eventually consistent: the caller reads each again). A payment written
// before payments recorded their next poll is in the unsharded partition,
// keyed by its creation time, and is returned once created before cutoff.
func (s *Payments) DuePayments(ctx context.Context, cutoff time.Time, limit int) ([]payments.Ref, error) {
	var refs []payments.Ref
	for _, shard := range schema.ShardKeys(schema.OpenPaymentIndex) {
		in := &dynamodb.QueryInput{
			TableName:              aws.String(s.db.Table),
			IndexName:              aws.String(schema.GSI2),
			KeyConditionExpression: aws.String("GSI2PK = :pk AND GSI2SK < :cut"),
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":pk":  &types.AttributeValueMemberS{Value: shard},
				":cut": &types.AttributeValueMemberS{Value: timestamp.Format(cutoff)},
			},
			ProjectionExpression:     aws.String("#sk"),
			ExpressionAttributeNames: map[string]string{"#sk": schema.AttrGSI2SK},
		}
		p := dynamodb.NewQueryPaginator(s.db.Client, in)
		for p.HasMorePages() && len(refs) < limit {
			out, err := p.NextPage(ctx)
			if err != nil {
				return nil, fmt.Errorf("store: query due payments: %w", err)
			}
			for _, item := range out.Items {
				sk, _ := item[schema.AttrGSI2SK].(*types.AttributeValueMemberS)
				if sk == nil {
					continue
				}
				companyID, id, err := schema.SplitTimedRef(sk.Value)
				if err != nil {
					return nil, err
				}
				refs = append(refs, payments.Ref{CompanyID: companyID, ID: id})
				if len(refs) == limit {
					return refs, nil
				}
			}
		}
	}
	return refs, nil
}

// FlaggedPayments returns a page of the payments flagged for
// reconciliation, of every company, oldest first, from the RECONCILE
// partition of GSI1 (store.ConsolePage).
func (s *Payments) FlaggedPayments(ctx context.Context, after string, limit int) ([]payments.Payment, string, error) {
	return store.ConsolePage(ctx, s.db, "flagged payments", schema.ReconcileGSI1PK, after, limit, paymentItem.payment,
		func(p payments.Payment) string { return p.ID })
}

// CountFlaggedPayments returns the number of payments flagged for
// reconciliation, of every company (store.ConsoleCount).
func (s *Payments) CountFlaggedPayments(ctx context.Context) (int, error) {
	return store.ConsoleCount(ctx, s.db, "flagged payments", schema.ReconcileGSI1PK)
}

// PaymentByID reads the payment id lookup, then the payment, both
// strongly consistent.
func (s *Payments) PaymentByID(ctx context.Context, id string) (payments.Payment, error) {
	var ref paymentRefItem
	if err := s.db.Get(ctx, "payment ref "+id, schema.PaymentRefPK(id), schema.PaymentRefSK, &ref, payments.ErrNotFound); err != nil {
		return payments.Payment{}, err
	}
	return s.GetPayment(ctx, ref.CompanyID, id)
}
