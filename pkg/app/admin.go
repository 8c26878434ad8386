package app

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"

	"payments/pkg/companies"
	"payments/pkg/fees"
	"payments/pkg/httpapi"
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
// capabilities (wallets, …) are added here.
func adminRoutes(rt *httpapi.Router, db *store.DB, cfg Config) error {
	comps := companies.NewService(store.NewCompanies(db))
	comps.Changed = companyCache.Forget
	companies.AdminRoutes(rt, comps)
	wallets.AdminRoutes(rt, walletsService(db))
	webhooks.AdminRoutes(rt, webhookSecrets(db))
	fees.AdminRoutes(rt, fees.NewService(store.NewFees(db)), companyChecker{comps})
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
		return r.Context(), nil
	}
}
