// Package adminapi is the admin function: the operator console under
// /admin.
package adminapi

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/awslabs/aws-lambda-go-api-proxy/core"

	"payments/pkg/audit"
	"payments/pkg/audit/audithttp"
	"payments/pkg/auth/authhttp"
	"payments/pkg/bulk/bulkhttp"
	"payments/pkg/cards/cardshttp"
	"payments/pkg/companies"
	"payments/pkg/companies/companieshttp"
	"payments/pkg/customers"
	"payments/pkg/customers/customershttp"
	"payments/pkg/debts/debtshttp"
	"payments/pkg/documents"
	"payments/pkg/fees"
	"payments/pkg/fees/feeshttp"
	"payments/pkg/function"
	"payments/pkg/function/base"
	"payments/pkg/function/cardissuer"
	"payments/pkg/function/keyvaults"
	"payments/pkg/function/services"
	"payments/pkg/function/userpool"
	"payments/pkg/fx/fxhttp"
	"payments/pkg/httpapi"
	"payments/pkg/idempotency/idempotencyhttp"
	"payments/pkg/limits/limitshttp"
	"payments/pkg/metrics"
	"payments/pkg/operatorhooks/operatorhookshttp"
	"payments/pkg/payments/paymentshttp"
	"payments/pkg/providers"
	"payments/pkg/queue"
	"payments/pkg/reconcile"
	"payments/pkg/reconcile/reconcilehttp"
	"payments/pkg/store"
	"payments/pkg/store/auditstore"
	"payments/pkg/store/customerstore"
	"payments/pkg/vault/kmskeys"
	"payments/pkg/wallets/walletshttp"
	"payments/pkg/webhooks"
	"payments/pkg/webhooks/webhookshttp"
)

// Errors is the function's error catalogue: the answers to the errors of
// what it links (function.Catalogue).
var Errors = function.Catalogue(audithttp.Errors, companieshttp.Errors, authhttp.Errors, walletshttp.Errors, paymentshttp.Errors, bulkhttp.Errors, feeshttp.Errors, reconcilehttp.Errors, customershttp.Errors, cardshttp.Errors, fxhttp.Errors, debtshttp.Errors, webhookshttp.Errors, idempotencyhttp.Errors, limitshttp.Errors, operatorhookshttp.Errors)

// KeyHeader carries the operator console's API key.
const KeyHeader = "X-Admin-Key"

// New builds the admin function: the operator console under /admin,
// admitted, in a deployed stage, by IAM authorization on the routes alone
// (the caller's principal names the operator), and on the local stack by
// the X-Admin-Key header. Every change it makes is recorded in the
// operators' audit trail (pkg/audit, AUDIT_TABLE_NAME), before it is made
// and once answered, and GET /admin/audit reads the trail. Sandbox credits are admitted in sandbox mode, and in production
// mode only with ADMIN_CREDIT_IN_PRODUCTION=true. Resolving a payment,
// confirming or rejecting a funding, and deciding a customer's identity
// publish their event on the webhooks queue; the console never asks the
// operator or the bank to move money. It links to customers' documents in
// the documents bucket with pre-signed URLs, registers a customer it
// verifies with the mode's card issuer, and runs the reconciliation with
// the providers now (pkg/reconcile: it reads their records, and applies
// what the card issuer reported and we missed). It creates a company's
// first owner in the dashboard's user pool (cognitopool, over USER_POOL_ID:
// Cognito in AWS, cognito-local locally; docs/dashboard.md). Its caches are its own
// (base.NewCaches): they live as long as the Lambda instance, and what
// it changes of a company or a fee schedule it forgets from them.
func New(ctx context.Context, cfg function.Config) (function.HTTPHandler, error) {
	return NewWith(ctx, cfg, base.NewCaches(time.Now), time.Now)
}

// NewWith is New over caches, which a process that builds every function
// (pkg/app) shares with the others, so that there what the console changes takes
// effect at once in their guards and prices, with the clock of the
// customers' review and the reconciliation given (when a decision is
// recorded, until when a document link is valid): tests stop it.
func NewWith(ctx context.Context, cfg function.Config, caches base.Caches, now func() time.Time) (function.HTTPHandler, error) {
	if cfg.AdminAPIKey == "" {
		return nil, fmt.Errorf("%w: the admin API key (ADMIN_API_KEY or ADMIN_API_KEY_ARN) is not set", function.ErrConfig)
	}
	db := base.DB(cfg)
	webhookQueue := queue.NewPublisher(queue.NewClient(cfg.AWS, cfg.SQSEndpoint), cfg.WebhooksQueueURL)
	g := guard(cfg.AdminAPIKey)
	if cfg.Deployed() {
		g = principalGuard
	}
	rt := httpapi.NewRouter(Errors, g)
	trail, err := audit.NewTrail(auditstore.New(store.New(db.Client, cfg.AuditTableName)), now)
	if err != nil {
		return nil, err
	}
	rt.Use(audithttp.Recorded(trail))
	audithttp.AdminRoutes(rt, trail)
	comps := companies.NewService(companies.Forgetting(store.NewCompanies(db), caches.Companies), nil)
	pool, err := userpool.New(cfg)
	if err != nil {
		return nil, err
	}
	onboarding, err := companies.NewOnboarding(comps, pool)
	if err != nil {
		return nil, err
	}
	companieshttp.AdminRoutes(rt, comps, onboarding)
	p, err := services.Providers(cfg, db, providers.Deps{})
	if err != nil {
		return nil, err
	}
	ws, err := services.Wallets(cfg, db, p, webhookQueue)
	if err != nil {
		return nil, err
	}
	walletshttp.AdminRoutes(rt, ws)
	// The console's signing secret is sealed under the webhook key.
	webhookVault, err := keyvaults.Webhook(cfg, kmskeys.FromConfig)
	if err != nil {
		return nil, err
	}
	webhookshttp.AdminRoutes(rt, webhooks.NewSigningSecrets(store.NewWebhooks(db), webhookVault))
	feeSvc := fees.NewService(fees.Forgetting(store.NewFees(db), caches.Fees))
	feeshttp.AdminRoutes(rt, feeSvc, companyChecker{comps})
	fxhttp.AdminRoutes(rt, services.FX(db), companyChecker{comps})
	resolver, err := services.PaymentsAdmin(db, webhookQueue)
	if err != nil {
		return nil, err
	}
	paymentshttp.AdminRoutes(rt, resolver)
	links, err := documents.NewLinks(cfg.AWS, cfg.S3Endpoint, cfg.DocumentsBucket)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", function.ErrConfig, err)
	}
	review, err := customers.NewReview(customerstore.NewCustomers(db), links, p.Issuer, services.Events(db, webhookQueue), now)
	if err != nil {
		return nil, err
	}
	customershttp.ReviewRoutes(rt, review)
	rec, err := reconciler(cfg, db, webhookQueue, caches, now)
	if err != nil {
		return nil, err
	}
	reconcilehttp.AdminRoutes(rt, rec)
	return function.HTTP(rt), nil
}

// reconciler returns the reconciliation the console runs now (POST
// /admin/reconciliations), as the sweeper runs it every hour: over the
// providers of cfg's mode with the card issuer's adapter (Stripe Issuing in
// production mode, which the rest of the console does not call), what the
// issuer reported and we missed applied as the card-worker applies it,
// its events published on webhooks, fee schedules read through caches, on
// the clock now.
func reconciler(cfg function.Config, db *store.DB, webhooks function.Queue, caches base.Caches, now func() time.Time) (*reconcile.Service, error) {
	p, err := cardissuer.Providers(cfg, db, providers.Deps{})
	if err != nil {
		return nil, err
	}
	applier, err := services.CardApplier(db, p, webhooks, caches.Fees)
	if err != nil {
		return nil, err
	}
	return services.Reconciler(cfg, db, p, applier, now)
}

// companyChecker answers feeshttp.Companies from the companies service: an
// unknown company is companies.ErrNotFound (404 COMPANY_NOT_FOUND).
type companyChecker struct{ companies *companies.Service }

// Check returns nil when company id exists.
func (c companyChecker) Check(ctx context.Context, id string) error {
	_, err := c.companies.Get(ctx, id)
	return err
}

// guard admits requests with one X-Admin-Key, equal to key (two are
// refused, whatever they hold). Both sides are hashed first so the
// comparison takes the same time whatever the lengths.
// The request context then names the operator (see operatorOf).
func guard(key string) httpapi.Guard {
	want := sha256.Sum256([]byte(key))
	return func(r *http.Request) (context.Context, error) {
		header, err := httpapi.Credential(r, KeyHeader)
		if err != nil {
			return nil, refused(r, "admin key sent more than once", err)
		}
		got := sha256.Sum256([]byte(header))
		if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			why := "wrong admin key"
			if header == "" {
				why = "no admin key"
			}
			return nil, refused(r, why, fmt.Errorf("%w: %s", httpapi.ErrUnauthorized, why))
		}
		return httpapi.WithOperator(r.Context(), operatorOf(r)), nil
	}
}

// principalGuard is the guard of a deployed stage (function.Config.Deployed),
// where the shared admin key is not accepted: it admits a request that API
// Gateway's AWS_IAM authorizer admitted, whose principal then names the
// operator, and refuses one that carries X-Admin-Key (which only the local
// stack takes) or names no principal (a route without the authorizer).
func principalGuard(r *http.Request) (context.Context, error) {
	if len(r.Header.Values(KeyHeader)) > 0 {
		return nil, refused(r, "admin key sent to a deployed stage", fmt.Errorf("%w: %s is accepted by the local stack only: sign the request with SigV4 (docs/auth.md)", httpapi.ErrUnauthorized, KeyHeader))
	}
	arn := iamCaller(r)
	if arn == "" {
		return nil, refused(r, "no IAM principal", fmt.Errorf("%w: the request names no IAM principal", httpapi.ErrUnauthorized))
	}
	return httpapi.WithOperator(r.Context(), arn), nil
}

// refused logs and counts (metrics.AdminAuthFailures) a request the guard
// refuses, and returns err: why, whence it came and the IAM principal API
// Gateway authorized ("" with none, as locally), never the key it sent.
func refused(r *http.Request, why string, err error) error {
	slog.WarnContext(r.Context(), "admin authentication refused", "reason", why,
		"source_ip", httpapi.SourceIP(r), "caller", iamCaller(r), "route", r.Method+" "+r.URL.Path)
	metrics.Count(r.Context(), metrics.AdminAuthFailures)
	return err
}

// operatorOf names who calls the console: the IAM principal that API
// Gateway authorized (the route's AWS_IAM authorizer), or, where no IAM
// authorizer runs (the local stack), "admin-api-key", the credential
// that admitted the request (never its value).
func operatorOf(r *http.Request) string {
	if arn := iamCaller(r); arn != "" {
		return arn
	}
	return "admin-api-key"
}

// iamCaller returns the IAM principal API Gateway authorized r with, or
// "" where no IAM authorizer ran.
func iamCaller(r *http.Request) string {
	if rc, ok := core.GetAPIGatewayV2ContextFromContext(r.Context()); ok && rc.Authorizer != nil && rc.Authorizer.IAM != nil {
		return rc.Authorizer.IAM.UserARN
	}
	return ""
}
