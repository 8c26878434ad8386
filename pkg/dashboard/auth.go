package dashboard

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	template "github.com/DataDog/datadog-agent/pkg/template/html"

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
	// Secret is the authenticator being set up (MFASetup), shown again
	// after a wrong first code.
	Secret string `json:"secret,omitempty"`
}

// formData is the forms' data.
type formData struct{ Email string }

func contextWithSession(r *http.Request, s sessions.Session) context.Context {
	return context.WithValue(r.Context(), sessionKey{}, s)
}

func (h *Handler) signInPage(w http.ResponseWriter, r *http.Request) {
	if _, ok := h.current(r); ok {
		http.Redirect(w, r, "/dashboard", http.StatusSeeOther)
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
		http.Redirect(w, r, "/dashboard", http.StatusSeeOther)
	case identity.NewPasswordRequired, identity.SoftwareTokenMFA, identity.MFASetup:
		if !h.keepChallenge(w, r, challenge{Email: email, Challenge: step.Challenge, Session: step.Session}) {
			h.render(w, r, http.StatusInternalServerError, page, view{Title: titles[page], Error: unavailable, Data: formData{email}})
			return
		}
		http.Redirect(w, r, challengePages[step.Challenge], http.StatusSeeOther)
	default: // a challenge the dashboard cannot answer
		clearCookie(w, r, challengeCookie)
		slog.ErrorContext(r.Context(), "dashboard: a sign-in challenge the dashboard does not answer", "challenge", step.Challenge)
		h.message(w, r, http.StatusForbidden, "Sign-in not possible", "Your account cannot sign in to the dashboard. Ask an owner of your company.")
	}
}

// challengePages are the pages of the challenges the dashboard answers.
var challengePages = map[identity.Challenge]string{
	identity.NewPasswordRequired: "/dashboard/new-password",
	identity.SoftwareTokenMFA:    "/dashboard/mfa",
	identity.MFASetup:            "/dashboard/mfa-setup",
}

// keepChallenge keeps c, the sign-in's pending challenge, in its sealed
// cookie, and reports whether it could.
func (h *Handler) keepChallenge(w http.ResponseWriter, r *http.Request, c challenge) bool {
	value, err := h.deps.Sessions.Seal(sessions.PurposeChallenge, c, h.deps.Now().Add(challengeLifetime))
	if err != nil {
		slog.ErrorContext(r.Context(), "dashboard: seal challenge", "error", err)
		return false
	}
	setCookie(w, r, challengeCookie, value, challengeLifetime)
	return true
}

// titles are the pages' titles.
var titles = map[string]string{
	"sign-in": "Sign in", "new-password": "Choose a new password", "mfa": "Two-factor code",
	"forgot-password": "Forgot password", "reset-password": "Set a new password", "mfa-setup": "Set up two-factor sign-in",
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
	h.answer(w, r, identity.NewPasswordRequired, "new-password", func(c challenge) (identity.Step, error) {
		return h.deps.Pool.SetNewPassword(r.Context(), c.Email, c.Session, r.PostFormValue("new_password"))
	})
}

func (h *Handler) mfaPage(w http.ResponseWriter, r *http.Request) {
	if c, ok := h.pending(w, r, identity.SoftwareTokenMFA); ok {
		h.render(w, r, http.StatusOK, "mfa", view{Title: titles["mfa"], Data: formData{c.Email}})
	}
}

func (h *Handler) mfa(w http.ResponseWriter, r *http.Request) {
	h.answer(w, r, identity.SoftwareTokenMFA, "mfa", func(c challenge) (identity.Step, error) {
		return h.deps.Pool.AnswerMFA(r.Context(), c.Email, c.Session, strings.TrimSpace(r.PostFormValue("code")))
	})
}

// mfaSetupData is the set-up page's: the new authenticator's secret, as
// typed (in groups of four) and as the otpauth URI apps read.
type mfaSetupData struct {
	Email, Secret, Grouped string
	// URI is built here from the pool's secret: html/template would
	// otherwise refuse its otpauth scheme.
	URI template.URL
}

// mfaSetupPage starts setting up the authenticator a sign-in must have
// (MFASetup): a new secret from the pool, shown for the person to add to
// their app; the challenge goes on with the pool's new session, and keeps
// the secret (sealed) to show it again after a wrong code.
func (h *Handler) mfaSetupPage(w http.ResponseWriter, r *http.Request) {
	c, ok := h.pending(w, r, identity.MFASetup)
	if !ok {
		return
	}
	secret, err := h.deps.Pool.SetUpMFA(r.Context(), c.Session)
	if err != nil {
		h.challengeFailed(w, r, err, "mfa-setup", c)
		return
	}
	c.Session, c.Secret = secret.Session, secret.Secret
	if !h.keepChallenge(w, r, c) {
		h.message(w, r, http.StatusServiceUnavailable, titles["mfa-setup"], unavailable)
		return
	}
	h.render(w, r, http.StatusOK, "mfa-setup", view{Title: titles["mfa-setup"], Data: newMFASetupData(c)})
}

// newMFASetupData returns the set-up page's data for challenge c.
func newMFASetupData(c challenge) mfaSetupData {
	var grouped []string
	for s := c.Secret; len(s) > 0; s = s[min(4, len(s)):] {
		grouped = append(grouped, s[:min(4, len(s))])
	}
	uri := url.URL{Scheme: "otpauth", Host: "totp", Path: "/Payments:" + c.Email,
		RawQuery: url.Values{"secret": {c.Secret}, "issuer": {"Payments"}}.Encode()}
	return mfaSetupData{Email: c.Email, Secret: c.Secret, Grouped: strings.Join(grouped, " "), URI: template.URL(uri.String())}
}

func (h *Handler) mfaSetup(w http.ResponseWriter, r *http.Request) {
	h.answer(w, r, identity.MFASetup, "mfa-setup", func(c challenge) (identity.Step, error) {
		return h.deps.Pool.VerifyMFASetup(r.Context(), c.Email, c.Session, strings.TrimSpace(r.PostFormValue("code")))
	})
}

// answer answers the pending challenge of kind with call and goes on; a
// refused answer is shown on page, a lost challenge sends the person back
// to sign in.
func (h *Handler) answer(w http.ResponseWriter, r *http.Request, kind identity.Challenge, page string, call func(challenge) (identity.Step, error)) {
	c, ok := h.pending(w, r, kind)
	if !ok {
		return
	}
	step, err := call(c)
	if err != nil {
		h.challengeFailed(w, r, err, page, c)
		return
	}
	h.next(w, r, c.Email, step, page)
}

// challengeFailed shows a challenge's refused answer on page, or, when
// the challenge itself is no longer valid, the sign-in page.
func (h *Handler) challengeFailed(w http.ResponseWriter, r *http.Request, err error, page string, c challenge) {
	if errors.Is(err, identity.ErrNotAuthorized) {
		clearCookie(w, r, challengeCookie)
		h.render(w, r, http.StatusUnauthorized, "sign-in", view{Title: "Sign in", Error: challengeExpired})
		return
	}
	var data any = formData{c.Email}
	if page == "mfa-setup" {
		data = newMFASetupData(c)
	}
	h.render(w, r, statusOf(err), page, view{Title: titles[page], Error: h.words(r, err, unavailable), Data: data})
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
