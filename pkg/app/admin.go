package app

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"

	"github.com/awslabs/aws-lambda-go-api-proxy/core"

	"payments/pkg/companies"
	"payments/pkg/fees"
	"payments/pkg/fx"
	"payments/pkg/httpapi"
	"payments/pkg/outbox"
	"payments/pkg/payments"
	"payments/pkg/queue"
	"payments/pkg/store"
	"payments/pkg/wallets"
	"payments/pkg/webhooks"
)

// AdminKeyHeader carries the operator console's API key.
const AdminKeyHeader = "X-Admin-Key"

// NewAdmin builds the admin function: the operator console under /admin,
// admitted by the X-Admin-Key header (and, in AWS, IAM authorization on the
// routes).
func NewAdmin(ctx context.Context, cfg Config) (HTTPHandler, error) {
	if cfg.AdminAPIKey == "" {
		return nil, fmt.Errorf("%w: the admin API key (ADMIN_API_KEY or ADMIN_API_KEY_ARN) is not set", ErrConfig)
	}
	db := store.New(store.NewClient(cfg.AWS, cfg.DynamoDBEndpoint), cfg.TableName)
	rt := httpapi.NewRouter(Errors, adminGuard(cfg.AdminAPIKey))
	if err := adminRoutes(rt, db, cfg); err != nil {
		return nil, err
	}
	return lambdaHTTP(rt), nil
}

// adminRoutes mounts every console route on rt. Console routes of other
// capabilities (wallets, …) are added here. Sandbox credits are admitted in
// sandbox mode, and in production mode only with
// ADMIN_CREDIT_IN_PRODUCTION=true. Resolving a payment, and confirming or
// rejecting a funding, publishes its event on the webhooks queue; the
// console never asks the operator or the bank.
func adminRoutes(rt *httpapi.Router, db *store.DB, cfg Config) error {
	comps := companies.NewService(store.NewCompanies(db))
	comps.Changed = companyCache.Forget
	companies.AdminRoutes(rt, comps)
	ws := movingWallets(cfg, db, nil)
	ws.CreditEnabled = cfg.Mode == ModeSandbox || cfg.AdminCreditInProduction
	wallets.AdminRoutes(rt, ws)
	webhooks.AdminRoutes(rt, webhookSecrets(db))
	feeSvc := fees.NewService(store.NewFees(db))
	feeSvc.Changed = feeCache.Forget
	fees.AdminRoutes(rt, feeSvc, companyChecker{comps})
	fx.AdminRoutes(rt, fxService(db), companyChecker{comps})
	payments.AdminRoutes(rt, payments.NewService(payments.Deps{
		Store:  store.NewPayments(db),
		Events: outbox.NewPublisher(store.NewOutbox(db), queueSender(queue.NewClient(cfg.AWS, cfg.SQSEndpoint), cfg.WebhooksQueueURL, "WEBHOOKS_QUEUE_URL")),
	}))
	return nil
}

// companyChecker answers fees.Companies from the companies service: an
// unknown company is companies.ErrNotFound (404 COMPANY_NOT_FOUND).
type companyChecker struct{ companies *companies.Service }

// Check returns nil when company id exists.
func (c companyChecker) Check(ctx context.Context, id string) error {
	_, err := c.companies.Get(ctx, id)
	return err
}

// adminGuard admits requests with one X-Admin-Key, equal to key (two are
// refused, whatever they hold). Both sides are hashed first so the
// comparison takes the same time whatever the lengths.
// The request context then names the operator (see operatorOf).
func adminGuard(key string) httpapi.Guard {
	want := sha256.Sum256([]byte(key))
	return func(r *http.Request) (context.Context, error) {
		header, err := httpapi.Credential(r, AdminKeyHeader)
		if err != nil {
			return nil, err
		}
		got := sha256.Sum256([]byte(header))
		if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			return nil, fmt.Errorf("%w: bad admin key", httpapi.ErrUnauthorized)
		}
		return httpapi.WithOperator(r.Context(), operatorOf(r)), nil
	}
}

// operatorOf names who calls the console: the IAM principal that API
// Gateway authorized (the route's AWS_IAM authorizer), or, where no IAM
// authorizer runs (the local stack), the admin key itself.
func operatorOf(r *http.Request) string {
	if rc, ok := core.GetAPIGatewayV2ContextFromContext(r.Context()); ok && rc.Authorizer != nil && rc.Authorizer.IAM != nil {
		if arn := rc.Authorizer.IAM.UserARN; arn != "" {
			return arn
		}
	}
	return "admin-api-key"
}
