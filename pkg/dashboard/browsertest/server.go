// Package browsertest supports the dashboard's browser tests: the dashboard
// function's handler served on 127.0.0.1 over the user pool (a throwaway
// pool in cognito-local; in -short runs, which have no cognito-local, the
// test double dashboardtest.Pool) and the tests' table, with a company, its wallet
// and an owner seeded (Start); Chromium driven headless through chromedp
// (NewBrowser), its elements found by their accessible names (ByName),
// each page checked with axe-core (Axe) and its screenshot saved
// (Screenshot). docs/dashboard.md describes the tests.
package browsertest

import (
	"context"
	"net/http/httptest"
	"testing"

	"payments/pkg/app/apptest"
	"payments/pkg/dashboard/dashboardtest"
	"payments/pkg/identity"
	"payments/pkg/identity/cognitopool/cognitotest"
)

// The seeded owner's email and temporary password, and the password the
// tests choose in its place.
const (
	OwnerEmail        = "owner@example.com"
	TemporaryPassword = "Temporary-pass-1"
	NewPassword       = "A-longer-password-2"
)

// The seeded wallet's balances, in major units of XAF (no minor unit), as
// the console credits them.
const (
	SeededPayin  = "1500000"
	SeededPayout = "250000"
)

// Server is the dashboard on an httptest server, over a fresh table.
type Server struct {
	// URL is the server's base URL (http://127.0.0.1:port).
	URL string
	// Pool is the pool the dashboard signs people in with.
	Pool identity.Pool
	// CompanyID and WalletID are the seeded company and its XAF wallet.
	CompanyID, WalletID string
	// Token is an API token of the seeded company.
	Token string
	// Env holds the functions that seeded the company and their table.
	Env *apptest.PaymentsTestEnv
}

// Start serves the dashboard function's handler (apptest.Dashboard) over a
// fresh table and a throwaway pool in cognito-local (the test double in
// -short runs), its AWS calls recorded as the dashboard's, and seeds it
// through the console and the wallets function: an approved company whose XAF wallet holds SeededPayin on its
// payin balance and SeededPayout on its payout balance, and, in the pool,
// its owner OwnerEmail with the temporary password TemporaryPassword.
func Start(t *testing.T) *Server {
	t.Helper()
	return StartOn(t, apptest.NewPaymentsTestEnv(t))
}

// StartOn is Start over env, for a test that needs more of the functions
// (apptest.NewCardsTestEnv's PaymentsTestEnv, say) to seed the company
// through Token.
func StartOn(t *testing.T, env *apptest.PaymentsTestEnv) *Server {
	t.Helper()
	company, token, wallet := env.Company(SeededPayout)
	// A fixed reference (FundPayin's is random) keeps the screenshots the same.
	if r := env.Admin("POST", "/admin/wallets/"+wallet+"/credit", `{"balance":"payin","amount":`+SeededPayin+`,"reference":"opening payin"}`); r.Status != 200 {
		t.Fatalf("credit: %s", r.Raw)
	}
	var pool identity.Pool = dashboardtest.NewPool(nil)
	if !testing.Short() {
		pool, _ = cognitotest.NewPool(t)
	}
	if err := pool.CreateUser(context.Background(), company, OwnerEmail, identity.Owner, TemporaryPassword); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(apptest.Dashboard(t, env.Cfg, pool)) // on 127.0.0.1: its cookies are not Secure
	t.Cleanup(srv.Close)
	return &Server{URL: srv.URL, Pool: pool, CompanyID: company, WalletID: wallet, Token: token, Env: env}
}

// ConfirmOwner signs the seeded owner in once through the pool and sets
// NewPassword in place of the temporary one, as their first sign-in does:
// for tests of a confirmed user. (cognito-local takes any password from a
// user who still has a temporary one, and asks for a new one.)
func (s *Server) ConfirmOwner(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	step, err := s.Pool.SignIn(ctx, OwnerEmail, TemporaryPassword)
	if err != nil || step.Challenge != identity.NewPasswordRequired {
		t.Fatalf("the owner's first sign-in: %+v, %v", step, err)
	}
	if step, err = s.Pool.SetNewPassword(ctx, OwnerEmail, step.Session, NewPassword); err != nil || step.IDToken == "" {
		t.Fatalf("the owner's new password: %+v, %v", step.Challenge, err)
	}
}
