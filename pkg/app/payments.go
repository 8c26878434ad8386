package app

import (
	"context"

	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"payments/pkg/httpapi"
	"payments/pkg/store"
	"payments/pkg/wallets"
)

// NewPayments builds the payments function behind the token guard. For now
// it serves GET /payment/balance; payouts and the payment transaction reads
// join it.
func NewPayments(ctx context.Context, cfg Config) (HTTPHandler, error) {
	db := store.New(store.NewClient(cfg.AWS, cfg.DynamoDBEndpoint), cfg.TableName)
	guard, err := tokenGuard(cfg, db)
	if err != nil {
		return nil, err
	}
	rt := httpapi.NewRouter(Errors, guard)
	wallets.PaymentRoutes(rt, walletsService(db))
	return httpadapter.NewV2(rt).ProxyWithContext, nil
}
