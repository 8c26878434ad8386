// Package dashboard is the company dashboard: server-rendered pages for a
// company's people, under /dashboard, signed in through the user pool
// (identity.Pool) and kept signed in by an encrypted session cookie whose
// record is in the table (pkg/sessions). It is HTTP layer: its pages read
// the request, call the same domain services as the API (the wallets'
// balances and ledger, built by pkg/function/services) and render their
// answers with html/template; htmx, vendored under assets/, enhances them
// where JavaScript runs. Every answer carries the security headers
// (securityHeaders), every unsafe request passes Go's cross-origin
// protection, and every page a session reaches declares the Permission it
// needs of the session's role (rules.go). docs/dashboard.md describes it.
package dashboard

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"payments/pkg/activity"
	"payments/pkg/httpapi"
	"payments/pkg/idempotency"
	"payments/pkg/identity"
	"payments/pkg/page"
	"payments/pkg/sessions"
	"payments/pkg/wallets"
)

// Wallets is what the dashboard reads of a company's wallets: their
// balances and their ledger (wallets.Balances).
type Wallets interface {
	List(ctx context.Context, companyID string) ([]wallets.Wallet, error)
	Transactions(ctx context.Context, companyID string, q wallets.TransactionQuery, p page.Request) (page.Result[wallets.Transaction], error)
	Transaction(ctx context.Context, companyID, id string) (wallets.Transaction, error)
}

// Activity is the companies' activity logs (activity.Log).
type Activity interface {
	Record(ctx context.Context, companyID, actor, action, subject string) error
	List(ctx context.Context, companyID string, p page.Request) (page.Result[activity.Entry], error)
}

// Errors word a service's refusal as the API would answer it
// (httpapi.Catalogue).
type Errors interface {
	Body(err error) (httpapi.ErrorBody, bool)
}

// Deps are what the dashboard needs.
type Deps struct {
	// Pool signs people in and vouches for them.
	Pool identity.Pool
	// Sessions keeps them signed in.
	Sessions *sessions.Manager
	// Wallets are the companies' wallets.
	Wallets Wallets
	// Activity records every change the dashboard makes, and who made it.
	Activity Activity
	// Payouts make payouts and read the payments; Batches are the bulk
	// payouts.
	Payouts Payouts
	Batches Batches
	// Forms keep the forms that move money to one movement each (the
	// API's Idempotency-Keys, idempotency.Store).
	Forms idempotency.Store
	// Errors word a service's refusal as the API answers it (the
	// function's error catalogue).
	Errors Errors
	// Keys are the companies' API credentials.
	Keys CompanyKeys
	// Endpoints are the companies' webhook endpoints.
	Endpoints WebhookEndpoints
	// Log is the companies' events and their deliveries.
	Log DeliveryLog
	// Customers are the companies' customers, read.
	Customers Customers
	// Cards are the companies' cards: read, frozen and unfrozen.
	Cards Cards
	// Now tells the time (time.Now when nil).
	Now func() time.Time
}

// ErrMissingDependency reports a Deps field left unset.
var ErrMissingDependency = errors.New("dashboard: missing dependency")

// Handler serves the dashboard.
type Handler struct {
	deps    Deps
	pages   *pages
	assets  assets
	handler http.Handler
}

// New returns the dashboard's handler, or ErrMissingDependency.
func New(d Deps) (*Handler, error) {
	switch {
	case d.Pool == nil:
		return nil, errors.Join(ErrMissingDependency, errors.New("dashboard: no Pool"))
	case d.Sessions == nil:
		return nil, errors.Join(ErrMissingDependency, errors.New("dashboard: no Sessions"))
	case d.Wallets == nil:
		return nil, errors.Join(ErrMissingDependency, errors.New("dashboard: no Wallets"))
	case d.Activity == nil:
		return nil, errors.Join(ErrMissingDependency, errors.New("dashboard: no Activity"))
	case d.Payouts == nil || d.Batches == nil:
		return nil, errors.Join(ErrMissingDependency, errors.New("dashboard: no Payouts or Batches"))
	case d.Forms == nil:
		return nil, errors.Join(ErrMissingDependency, errors.New("dashboard: no Forms"))
	case d.Errors == nil:
		return nil, errors.Join(ErrMissingDependency, errors.New("dashboard: no Errors"))
	case d.Keys == nil:
		return nil, errors.Join(ErrMissingDependency, errors.New("dashboard: no Keys"))
	case d.Endpoints == nil:
		return nil, errors.Join(ErrMissingDependency, errors.New("dashboard: no Endpoints"))
	case d.Log == nil:
		return nil, errors.Join(ErrMissingDependency, errors.New("dashboard: no Log"))
	case d.Customers == nil:
		return nil, errors.Join(ErrMissingDependency, errors.New("dashboard: no Customers"))
	case d.Cards == nil:
		return nil, errors.Join(ErrMissingDependency, errors.New("dashboard: no Cards"))
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	h := &Handler{deps: d, assets: loadAssets()}
	var err error
	if h.pages, err = parsePages(h.assets); err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	// The pages of people not signed in.
	// Home is /dashboard (home.go), the path of the function's route
	// ANY /dashboard; /dashboard/ leads there where it reaches the
	// function.
	mux.HandleFunc("GET /dashboard/{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/dashboard", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /dashboard/assets/{version}/{name}", h.serveAsset)
	mux.HandleFunc("GET /dashboard/sign-in", h.signInPage)
	mux.HandleFunc("POST /dashboard/sign-in", h.signIn)
	mux.HandleFunc("GET /dashboard/new-password", h.newPasswordPage)
	mux.HandleFunc("POST /dashboard/new-password", h.newPassword)
	mux.HandleFunc("GET /dashboard/mfa", h.mfaPage)
	mux.HandleFunc("POST /dashboard/mfa", h.mfa)
	mux.HandleFunc("GET /dashboard/mfa-setup", h.mfaSetupPage)
	mux.HandleFunc("POST /dashboard/mfa-setup", h.mfaSetup)
	mux.HandleFunc("GET /dashboard/forgot-password", h.forgotPasswordPage)
	mux.HandleFunc("POST /dashboard/forgot-password", h.forgotPassword)
	mux.HandleFunc("GET /dashboard/reset-password", h.resetPasswordPage)
	mux.HandleFunc("POST /dashboard/reset-password", h.resetPassword)
	mux.HandleFunc("POST /dashboard/sign-out", h.signOut)
	// The pages of a session, each with the permission it needs.
	for _, rt := range h.routes() {
		mux.Handle(rt.pattern, h.session(rt.need, rt.serve))
	}
	mux.HandleFunc("/dashboard/", func(w http.ResponseWriter, r *http.Request) {
		h.message(w, r, http.StatusNotFound, "Page not found", "There is no page at this address.")
	})
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.message(w, r, http.StatusForbidden, "Request refused", "This request came from another site, so it was refused.")
	}))
	h.handler = securityHeaders(cop.Handler(mux))
	return h, nil
}

// ServeHTTP serves r.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.handler.ServeHTTP(w, r) }

// route is one page of a session: its pattern, the permission it needs and
// its handler.
type route struct {
	pattern string
	need    Permission
	serve   func(http.ResponseWriter, *http.Request, sessions.Session)
}

// routes are the pages of a session, each area's from its own file. A
// page declares its Permission there: the session's role must have it
// (Allowed), or the answer is 403.
func (h *Handler) routes() []route {
	return slices.Concat(
		h.homeRoutes(),
		h.transactionsRoutes(),
		h.payoutsRoutes(),
		h.bulkRoutes(),
		h.teamRoutes(),
		h.activityRoutes(),
		h.developersRoutes(),
		h.customersRoutes(),
		h.cardsRoutes(),
	)
}

// record records in the session's company that its person did action to
// subject. A change the dashboard has made is not undone when its record
// fails: the failure is logged.
func (h *Handler) record(r *http.Request, s sessions.Session, action, subject string) {
	if err := h.deps.Activity.Record(r.Context(), s.CompanyID, s.Email, action, subject); err != nil {
		slog.ErrorContext(r.Context(), "dashboard: record activity", "action", action, "error", err)
	}
}

// CSP is the Content-Security-Policy of every answer: our own scripts,
// styles and images alone, no inline script or style, no framing.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// securityHeaders sets the headers of every answer: the CSP, no MIME
// sniffing, no referrer, no framing, HTTPS only (but on loopback), and
// Cache-Control: no-store on everything but the versioned assets, which
// set their own.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", CSP)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Cross-Origin-Opener-Policy", "same-origin")
		if !loopback(r) {
			hd.Set("Strict-Transport-Security", "max-age=31536000")
		}
		hd.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

type sessionKey struct{}

// session resumes the request's session and serves it with serve when its
// role has need: with no live session, the sign-in page (303); without
// the permission, 403 and a page that says so.
func (h *Handler) session(need Permission, serve func(http.ResponseWriter, *http.Request, sessions.Session)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, ok := h.current(r)
		if !ok {
			clearCookie(w, r, sessionCookie)
			http.Redirect(w, r, "/dashboard/sign-in", http.StatusSeeOther)
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), sessionKey{}, s))
		if !Allowed(s.Role, need) {
			h.message(w, r, http.StatusForbidden, "Not allowed",
				"Your role ("+string(s.Role)+") does not allow this. Ask an owner of your company if you need it.")
			return
		}
		serve(w, r, s)
	})
}

// current returns the request's live session, if any.
func (h *Handler) current(r *http.Request) (sessions.Session, bool) {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return sessions.Session{}, false
	}
	s, err := h.deps.Sessions.Resume(r.Context(), c.Value)
	if err != nil {
		if !errors.Is(err, sessions.ErrNotFound) && !errors.Is(err, sessions.ErrExpired) && !errors.Is(err, sessions.ErrInvalid) {
			slog.ErrorContext(r.Context(), "dashboard: resume session", "error", err)
		}
		return sessions.Session{}, false
	}
	return s, true
}

// sessionOf returns the session the request was served under, if any.
func sessionOf(r *http.Request) *sessions.Session {
	if s, ok := r.Context().Value(sessionKey{}).(sessions.Session); ok {
		return &s
	}
	return nil
}
