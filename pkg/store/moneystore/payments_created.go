package moneystore

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/payments"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
	"payments/pkg/timestamp"
)

// CreatedPayments returns up to limit payments of every company created in
// [from, to), from the shards of the created-payment index taken in
// order, oldest first within each (eventually consistent), after payment
// after ("" from the first shard), and the id to read the next page after
// ("" after the last shard's last).
func (s *Payments) CreatedPayments(ctx context.Context, from, to time.Time, after string, limit int) ([]payments.Payment, string, error) {
	shards := schema.ShardKeysInOrder(schema.CreatedPaymentIndex)
	lo, hi := timestamp.Format(from), timestamp.Format(to)
	first, start := 0, ""
	if after != "" {
		p, err := s.PaymentByID(ctx, after)
		if err != nil {
			return nil, "", fmt.Errorf("store: the payment to list after: %w", err)
		}
		shard := schema.CreatedPaymentGSI3PK(p.ID)
		for i, sh := range shards {
			if sh == shard {
				first = i
			}
		}
		start = schema.CreatedPaymentGSI3SK(timestamp.Format(p.CreatedAt), p.CompanyID, p.ID)
	}
	var out []payments.Payment
	for i := first; i < len(shards) && len(out) < limit; i++ {
		cond, values := "#pk = :pk AND #sk BETWEEN :lo AND :hi", map[string]types.AttributeValue{
			":pk": dynamo.Str(shards[i]), ":lo": dynamo.Str(lo), ":hi": dynamo.Str(hi),
		}
		if i == first && start != "" {
			values[":lo"] = dynamo.Str(start + "\x00") // after it
		}
		p := dynamodb.NewQueryPaginator(s.db.Client, &dynamodb.QueryInput{
			TableName:                 aws.String(s.db.Table),
			IndexName:                 aws.String(schema.GSI3),
			KeyConditionExpression:    aws.String(cond),
			ExpressionAttributeNames:  map[string]string{"#pk": schema.AttrGSI3PK, "#sk": schema.AttrGSI3SK},
			ExpressionAttributeValues: values,
		})
		for p.HasMorePages() && len(out) < limit {
			page, err := p.NextPage(ctx)
			if err != nil {
				return nil, "", fmt.Errorf("store: query the payments created: %w", err)
			}
			// The keys start with the creation time: BETWEEN from and to
			// holds [from, to), a payment created at to ("<to>#…") sorting
			// after to itself.
			ps, err := dynamo.DecodeAll(page.Items, paymentItem.payment)
			if err != nil {
				return nil, "", err
			}
			for _, pay := range ps {
				if out = append(out, pay); len(out) == limit {
					return out, pay.ID, nil
				}
			}
		}
	}
	return out, "", nil
}
