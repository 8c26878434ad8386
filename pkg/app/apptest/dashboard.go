package apptest

import (
	"context"
	"net/http"
	"testing"
	"time"

	"payments/pkg/function"
	"payments/pkg/function/base"
	"payments/pkg/function/dashboard"
	"payments/pkg/function/userpool"
	"payments/pkg/identity"
)

// Dashboard returns the dashboard function's handler over cfg's table
// and pool, its AWS calls recorded as the dashboard's (Recording): the
// function as it is built, over caches of its own, but for
// the user pool, which the tests give (a test double).
func Dashboard(t *testing.T, cfg function.Config, pool identity.Pool) http.Handler {
	t.Helper()
	h, err := dashboard.Handler(context.Background(), Recording(cfg, "dashboard"), base.NewCaches(time.Now), pool, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// DashboardPool returns the dashboard function's user pool as it builds it
// (userpool.New) over cfg's pool, its AWS calls recorded as the
// dashboard's: the pool the browser tests give Dashboard under make test,
// where cognito-local signs people in.
func DashboardPool(t *testing.T, cfg function.Config) identity.Pool {
	t.Helper()
	pool, err := userpool.New(Recording(cfg, "dashboard"))
	if err != nil {
		t.Fatal(err)
	}
	return pool
}
