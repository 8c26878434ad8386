package payments

import (
	"context"

	"payments/pkg/metrics"
)

// count records one of the metric payout or collection, by p's type, with
// p's currency and operator.
func count(ctx context.Context, p Payment, payout, collection string) {
	name := payout
	if p.Type == TypeCollection {
		name = collection
	}
	metrics.Count(ctx, name, metrics.Currency(p.Currency), metrics.Operator(p.Operator))
}

// countFinal records p's final status: settled or failed.
func countFinal(ctx context.Context, p Payment) {
	if p.Status == StatusSuccess {
		count(ctx, p, metrics.PayoutsSettled, metrics.CollectionsSettled)
	} else {
		count(ctx, p, metrics.PayoutsFailed, metrics.CollectionsFailed)
	}
}
