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
	"time"

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
	// CompanyID and WalletID are the seeded company and its XAF wallet;
	// Token is a token of the company's API key, for the API's functions
	// of Env.
	CompanyID, WalletID, Token string
	// Env holds the functions that seeded the company and their table.
	Env *apptest.PaymentsTestEnv

	setPassword      func(email, password string) error
	addAuthenticator func(t *testing.T, email, password string) string
}

// Start serves the dashboard function's handler (apptest.Dashboard) over a
// fresh table and a throwaway pool in cognito-local, both reached as the
// function reaches them, its AWS calls recorded as the dashboard's (in
// -short runs, which have no cognito-local, the pool is the test double),
// and seeds it through the console and the wallets function: an approved
// company whose XAF wallet holds SeededPayin on its payin balance and
// SeededPayout on its payout balance, and, in the pool, its owner
// OwnerEmail with the temporary password TemporaryPassword (made by the
// console's POST /admin/companies/{id}/owner; in the double, directly).
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
	s := &Server{CompanyID: company, WalletID: wallet, Token: token, Env: env}
	if testing.Short() {
		double := dashboardtest.NewPool(nil)
		if err := double.CreateUser(context.Background(), company, OwnerEmail, identity.Owner, TemporaryPassword); err != nil {
			t.Fatal(err)
		}
		s.Pool, s.setPassword = double, double.SetTemporaryPassword
		s.addAuthenticator = func(_ *testing.T, email, _ string) string { return double.AddAuthenticator(email) }
	} else {
		// The function's own pool over the env's, in cognito-local, its
		// calls recorded as the dashboard's; the owner made by the console.
		if r := env.Admin("POST", "/admin/companies/"+company+"/owner",
			`{"email":"`+OwnerEmail+`","temporary_password":"`+TemporaryPassword+`"}`); r.Status != 201 {
			t.Fatalf("the owner: %s", r.Raw)
		}
		s.Pool = apptest.DashboardPool(t, env.Cfg)
		s.setPassword = func(email, password string) error {
			cognitotest.SetTemporaryPassword(t, env.Cfg.UserPoolID, email, password)
			return nil
		}
		s.addAuthenticator = func(t *testing.T, email, password string) string {
			return cognitotest.AddAuthenticator(t, env.Cfg.UserPoolClientID, email, password,
				func(secret string) string { return dashboardtest.TOTP(secret, time.Now()) })
		}
	}
	srv := httptest.NewServer(apptest.Dashboard(t, env.Cfg, s.Pool)) // on 127.0.0.1: its cookies are not Secure
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// SetTemporaryPassword gives the user email, whom the pool invited with a
// temporary password of its own (emailed in AWS), the temporary password
// password, so that a test signs them in as they would from the email.
// It is the tests' alone: the dashboard shows no temporary password.
func (s *Server) SetTemporaryPassword(t *testing.T, email, password string) {
	t.Helper()
	if err := s.setPassword(email, password); err != nil {
		t.Fatalf("set the temporary password of %s: %v", email, err)
	}
}

// AddAuthenticator gives the confirmed user email (password theirs) an
// authenticator app, as they would from their account (in cognito-local,
// through Cognito's calls with their access token), and returns its
// secret: from then on the pool asks their sign-in for its code.
func (s *Server) AddAuthenticator(t *testing.T, email, password string) string {
	t.Helper()
	return s.addAuthenticator(t, email, password)
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
