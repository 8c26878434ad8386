package dashboard

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"payments/pkg/identity"
	"payments/pkg/sessions"
)

// The cookies, both on the path /dashboard, HttpOnly, SameSite=Strict and
// Secure but on loopback.
const (
	// sessionCookie names the session (sessions.Manager.Start).
	sessionCookie = "dashboard_session"
	// challengeCookie holds a sign-in's pending challenge, sealed, for
	// challengeLifetime.
	challengeCookie = "dashboard_challenge"
)

// challengeLifetime is how long a sign-in's challenge may wait for its
// answer.
const challengeLifetime = 10 * time.Minute

// The sentences shown for the pool's errors: never the pool's own text.
const (
	wrongCredentials = "Wrong email or password."
	tooManyAttempts  = "Too many attempts. Wait a few minutes, then try again."
	weakPassword     = "That password does not meet the rules: choose a longer one, mixing upper- and lower-case letters, digits and symbols."
	wrongCode        = "That code is wrong or has expired."
	challengeExpired = "Your sign-in took too long. Please sign in again."
	unavailable      = "Signing in is not possible right now. Please try again in a few minutes."
)

// challenge is a sign-in's pending step.
type challenge struct {
	Email     string             `json:"email"`
	Challenge identity.Challenge `json:"challenge"`
	Session   string             `json:"session"`
}

// formData is the forms' data.
type formData struct{ Email string }

func contextWithSession(r *http.Request, s sessions.Session) context.Context {
	return context.WithValue(r.Context(), sessionKey{}, s)
}

func (h *Handler) signInPage(w http.ResponseWriter, r *http.Request) {
	if _, ok := h.current(r); ok {
		http.Redirect(w, r, "/dashboard/", http.StatusSeeOther)
		return
	}
	v := view{Title: "Sign in"}
	switch {
	case r.URL.Query().Has("signed-out"):
		v.Notice = "You are signed out."
	case r.URL.Query().Has("password-set"):
		v.Notice = "Your password is set. Sign in with it."
	}
	h.render(w, r, http.StatusOK, "sign-in", v)
}

func (h *Handler) signIn(w http.ResponseWriter, r *http.Request) {
	email, password := strings.TrimSpace(r.PostFormValue("email")), r.PostFormValue("password")
	step, err := h.deps.Pool.SignIn(r.Context(), email, password)
	if err != nil {
		h.render(w, r, statusOf(err), "sign-in", view{Title: "Sign in", Error: h.words(r, err, wrongCredentials), Data: formData{email}})
		return
	}
	h.next(w, r, email, step, "sign-in")
}

// next goes on from a sign-in step: to the page of its challenge, or, when
// signed in, Home with a new session.
func (h *Handler) next(w http.ResponseWriter, r *http.Request, email string, step identity.Step, page string) {
	switch step.Challenge {
	case identity.NoChallenge:
		user, err := h.deps.Pool.Verify(r.Context(), step.IDToken)
		if err != nil {
			h.render(w, r, statusOf(err), page, view{Title: titles[page], Error: h.words(r, err, unavailable), Data: formData{email}})
			return
		}
		_, value, err := h.deps.Sessions.Start(r.Context(), user)
		if err != nil {
			slog.ErrorContext(r.Context(), "dashboard: start session", "error", err)
			h.render(w, r, http.StatusServiceUnavailable, page, view{Title: titles[page], Error: unavailable, Data: formData{email}})
			return
		}
		clearCookie(w, r, challengeCookie)
		setCookie(w, r, sessionCookie, value, sessions.Lifetime)
		http.Redirect(w, r, "/dashboard/", http.StatusSeeOther)
	case identity.NewPasswordRequired, identity.SoftwareTokenMFA:
		value, err := h.deps.Sessions.Seal(sessions.PurposeChallenge, challenge{email, step.Challenge, step.Session}, h.deps.Now().Add(challengeLifetime))
		if err != nil {
			h.render(w, r, http.StatusInternalServerError, page, view{Title: titles[page], Error: unavailable, Data: formData{email}})
			return
		}
		setCookie(w, r, challengeCookie, value, challengeLifetime)
		to := "/dashboard/new-password"
		if step.Challenge == identity.SoftwareTokenMFA {
			to = "/dashboard/mfa"
		}
		http.Redirect(w, r, to, http.StatusSeeOther)
	default: // MFASetup and any challenge the dashboard cannot answer
		clearCookie(w, r, challengeCookie)
		h.message(w, r, http.StatusForbidden, "Two-factor set-up needed",
			"Your account must set up an authenticator app before it can sign in, which the dashboard cannot do yet. Ask an owner of your company.")
	}
}

// titles are the pages' titles.
var titles = map[string]string{
	"sign-in": "Sign in", "new-password": "Choose a new password", "mfa": "Two-factor code",
	"forgot-password": "Forgot password", "reset-password": "Set a new password",
}

// pending returns the request's pending challenge of kind, or sends the
// person back to sign in.
func (h *Handler) pending(w http.ResponseWriter, r *http.Request, kind identity.Challenge) (challenge, bool) {
	var c challenge
	ck, err := r.Cookie(challengeCookie)
	if err == nil {
		err = h.deps.Sessions.Open(sessions.PurposeChallenge, ck.Value, &c)
	}
	if err != nil || c.Challenge != kind {
		clearCookie(w, r, challengeCookie)
		h.render(w, r, http.StatusUnauthorized, "sign-in", view{Title: "Sign in", Error: challengeExpired})
		return c, false
	}
	return c, true
}

func (h *Handler) newPasswordPage(w http.ResponseWriter, r *http.Request) {
	if c, ok := h.pending(w, r, identity.NewPasswordRequired); ok {
		h.render(w, r, http.StatusOK, "new-password", view{Title: titles["new-password"], Data: formData{c.Email}})
	}
}

func (h *Handler) newPassword(w http.ResponseWriter, r *http.Request) {
	c, ok := h.pending(w, r, identity.NewPasswordRequired)
	if !ok {
		return
	}
	step, err := h.deps.Pool.SetNewPassword(r.Context(), c.Email, c.Session, r.PostFormValue("new_password"))
	if err != nil {
		if errors.Is(err, identity.ErrNotAuthorized) {
			clearCookie(w, r, challengeCookie)
			h.render(w, r, http.StatusUnauthorized, "sign-in", view{Title: "Sign in", Error: challengeExpired})
			return
		}
		h.render(w, r, statusOf(err), "new-password", view{Title: titles["new-password"], Error: h.words(r, err, unavailable), Data: formData{c.Email}})
		return
	}
	h.next(w, r, c.Email, step, "new-password")
}

func (h *Handler) mfaPage(w http.ResponseWriter, r *http.Request) {
	if c, ok := h.pending(w, r, identity.SoftwareTokenMFA); ok {
		h.render(w, r, http.StatusOK, "mfa", view{Title: titles["mfa"], Data: formData{c.Email}})
	}
}

func (h *Handler) mfa(w http.ResponseWriter, r *http.Request) {
	c, ok := h.pending(w, r, identity.SoftwareTokenMFA)
	if !ok {
		return
	}
	step, err := h.deps.Pool.AnswerMFA(r.Context(), c.Email, c.Session, strings.TrimSpace(r.PostFormValue("code")))
	if err != nil {
		if errors.Is(err, identity.ErrNotAuthorized) {
			clearCookie(w, r, challengeCookie)
			h.render(w, r, http.StatusUnauthorized, "sign-in", view{Title: "Sign in", Error: challengeExpired})
			return
		}
		h.render(w, r, statusOf(err), "mfa", view{Title: titles["mfa"], Error: h.words(r, err, unavailable), Data: formData{c.Email}})
		return
	}
	h.next(w, r, c.Email, step, "mfa")
}

func (h *Handler) forgotPasswordPage(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusOK, "forgot-password", view{Title: titles["forgot-password"]})
}

func (h *Handler) forgotPassword(w http.ResponseWriter, r *http.Request) {
	email := strings.TrimSpace(r.PostFormValue("email"))
	if err := h.deps.Pool.ForgotPassword(r.Context(), email); err != nil {
		h.render(w, r, statusOf(err), "forgot-password", view{Title: titles["forgot-password"], Error: h.words(r, err, unavailable)})
		return
	}
	h.render(w, r, http.StatusOK, "reset-password", view{Title: titles["reset-password"],
		Notice: "If an account has this email, we sent it a code. Enter it with your new password.", Data: formData{email}})
}

func (h *Handler) resetPasswordPage(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusOK, "reset-password", view{Title: titles["reset-password"]})
}

func (h *Handler) resetPassword(w http.ResponseWriter, r *http.Request) {
	email := strings.TrimSpace(r.PostFormValue("email"))
	err := h.deps.Pool.ConfirmForgotPassword(r.Context(), email, strings.TrimSpace(r.PostFormValue("code")), r.PostFormValue("new_password"))
	if err != nil {
		// An unknown email reads as a wrong code: the page tells nobody
		// who has an account.
		h.render(w, r, statusOf(err), "reset-password", view{Title: titles["reset-password"], Error: h.words(r, err, wrongCode), Data: formData{email}})
		return
	}
	http.Redirect(w, r, "/dashboard/sign-in?password-set", http.StatusSeeOther)
}

// signOut ends the session server-side, so its cookie no longer works
// anywhere, and clears it.
func (h *Handler) signOut(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(sessionCookie); err == nil {
		if err := h.deps.Sessions.End(r.Context(), c.Value); err != nil {
			slog.ErrorContext(r.Context(), "dashboard: end session", "error", err)
			h.message(w, r, http.StatusServiceUnavailable, "Sign-out failed", "You could not be signed out. Please try again.")
			return
		}
	}
	clearCookie(w, r, sessionCookie)
	clearCookie(w, r, challengeCookie)
	http.Redirect(w, r, "/dashboard/sign-in?signed-out", http.StatusSeeOther)
}

// words returns the sentence a person is shown for a pool's error: the
// pool's sentinels in our words (the credentials' and codes' as
// credentials), anything else logged and shown as unavailable.
func (h *Handler) words(r *http.Request, err error, credentials string) string {
	switch {
	case errors.Is(err, identity.ErrNotAuthorized), errors.Is(err, identity.ErrUserNotFound):
		return credentials
	case errors.Is(err, identity.ErrInvalidCode):
		return wrongCode
	case errors.Is(err, identity.ErrInvalidPassword):
		return weakPassword
	case errors.Is(err, identity.ErrTooManyAttempts):
		return tooManyAttempts
	case errors.Is(err, identity.ErrInvalidToken):
		return challengeExpired
	}
	slog.ErrorContext(r.Context(), "dashboard: user pool", "error", err)
	return unavailable
}

// statusOf is the status of a page that shows a pool's error.
func statusOf(err error) int {
	switch {
	case errors.Is(err, identity.ErrNotAuthorized), errors.Is(err, identity.ErrUserNotFound), errors.Is(err, identity.ErrInvalidToken):
		return http.StatusUnauthorized
	case errors.Is(err, identity.ErrInvalidCode), errors.Is(err, identity.ErrInvalidPassword):
		return http.StatusBadRequest
	case errors.Is(err, identity.ErrTooManyAttempts):
		return http.StatusTooManyRequests
	}
	return http.StatusServiceUnavailable
}

// setCookie sets cookie name to value for maxAge.
func setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge time.Duration) {
	http.SetCookie(w, &http.Cookie{
		Name: name, Value: value, Path: "/dashboard", MaxAge: int(maxAge / time.Second),
		HttpOnly: true, Secure: !loopback(r), SameSite: http.SameSiteStrictMode,
	})
}

// clearCookie deletes cookie name.
func clearCookie(w http.ResponseWriter, r *http.Request, name string) {
	http.SetCookie(w, &http.Cookie{
		Name: name, Value: "", Path: "/dashboard", MaxAge: -1,
		HttpOnly: true, Secure: !loopback(r), SameSite: http.SameSiteStrictMode,
	})
}

// loopback reports whether r was sent to a loopback host (make run, the
// tests), where cookies cannot be Secure over plain HTTP.
func loopback(r *http.Request) bool {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
