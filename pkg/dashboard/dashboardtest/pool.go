// Package dashboardtest supports the dashboard's tests. Pool is a test
// double of identity.Pool: an in-memory user pool with its own users,
// temporary passwords, challenges, reset codes and signed ID tokens. It is
// not Cognito and speaks to nothing; the wiring gives the dashboard the
// real pool (pkg/identity/cognitopool).
package dashboardtest

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"

	"payments/pkg/identity"
)

var _ identity.Pool = (*Pool)(nil)

// The statuses of a member, as the pool lists them.
const (
	StatusForceChange = "FORCE_CHANGE_PASSWORD"
	StatusConfirmed   = "CONFIRMED"
)

// MinPasswordLength is the double's password policy: at least this many
// characters (identity.ErrInvalidPassword).
const MinPasswordLength = 12

// TokenLifetime is how long the double's ID tokens are valid.
const TokenLifetime = time.Hour

// user is one of the double's users.
type user struct {
	subject, email, company string
	role                    identity.Role
	password                string
	temporary               bool
	// mfaCode, when set, is the authenticator code the user's sign-in
	// asks for (SoftwareTokenMFA).
	mfaCode string
	// mfaSecret is the authenticator the user set up (SetUpMFA), whose
	// TOTP codes their sign-in asks for; pendingSecret the one being set
	// up.
	mfaSecret, pendingSecret string
	resetCode                string
}

// Pool is the test double of identity.Pool. The zero value is not usable:
// NewPool.
type Pool struct {
	mu         sync.Mutex
	users      map[string]*user  // by lower-cased email
	challenges map[string]string // challenge session → email
	key        []byte            // signs the ID tokens
	now        func() time.Time
	requireMFA bool
}

// RequireMFA makes the pool's MFA required, as the prod stage's is: a
// user without an authenticator is asked to set one up (MFASetup) before
// they are signed in.
func (p *Pool) RequireMFA() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.requireMFA = true
}

// NewPool returns an empty Pool telling the time by now (time.Now when
// nil).
func NewPool(now func() time.Time) *Pool {
	if now == nil {
		now = time.Now
	}
	key := make([]byte, 32)
	rand.Read(key)
	return &Pool{users: map[string]*user{}, challenges: map[string]string{}, key: key, now: now}
}

// SetMFA makes the sign-in of email ask for code (SoftwareTokenMFA).
func (p *Pool) SetMFA(email, code string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if u := p.users[strings.ToLower(email)]; u != nil {
		u.mfaCode = code
	}
}

// AddAuthenticator gives email an authenticator app, as they would from
// their account, and returns its secret: from then on their sign-in asks
// for its TOTP code.
func (p *Pool) AddAuthenticator(email string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	u := p.users[strings.ToLower(email)]
	if u == nil {
		return ""
	}
	key := make([]byte, 20)
	rand.Read(key)
	u.mfaSecret = base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(key)
	return u.mfaSecret
}

// ResetCode returns the code ForgotPassword last "sent" email.
func (p *Pool) ResetCode(email string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if u := p.users[strings.ToLower(email)]; u != nil {
		return u.resetCode
	}
	return ""
}

func randomText() string {
	b := make([]byte, 16)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// challenge opens a challenge of kind for u.
func (p *Pool) challenge(u *user, kind identity.Challenge) identity.Step {
	s := randomText()
	p.challenges[s] = u.email
	return identity.Step{Challenge: kind, Session: s}
}

// signedIn is the step after u's last answer: MFA if set, its set-up if
// required, else a token.
func (p *Pool) signedIn(u *user, mfaDone bool) identity.Step {
	switch {
	case mfaDone:
	case u.mfaCode != "" || u.mfaSecret != "":
		return p.challenge(u, identity.SoftwareTokenMFA)
	case p.requireMFA:
		return p.challenge(u, identity.MFASetup)
	}
	return identity.Step{IDToken: p.token(u)}
}

// SetUpMFA starts an authenticator's set-up for the challenge session.
func (p *Pool) SetUpMFA(_ context.Context, session string) (identity.MFASecret, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	u := p.users[p.challenges[session]]
	if u == nil {
		return identity.MFASecret{}, identity.ErrNotAuthorized
	}
	delete(p.challenges, session)
	key := make([]byte, 20)
	rand.Read(key)
	u.pendingSecret = base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(key)
	next := p.challenge(u, identity.MFASetup)
	return identity.MFASecret{Secret: u.pendingSecret, Session: next.Session}, nil
}

// VerifyMFASetup takes the authenticator being set up when code is its
// TOTP code now, and signs the user in.
func (p *Pool) VerifyMFASetup(_ context.Context, email, session, code string) (identity.Step, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	u := p.users[strings.ToLower(email)]
	if u == nil || p.challenges[session] != u.email || u.pendingSecret == "" {
		return identity.Step{}, identity.ErrNotAuthorized
	}
	if code != TOTP(u.pendingSecret, p.now()) {
		return identity.Step{}, identity.ErrInvalidCode
	}
	delete(p.challenges, session)
	u.mfaSecret, u.pendingSecret = u.pendingSecret, ""
	return p.signedIn(u, true), nil
}

// claims are the double's ID token's.
type claims struct {
	Sub     string `json:"sub"`
	Email   string `json:"email"`
	Company string `json:"custom:company_id"`
	Role    string `json:"role"`
	Exp     int64  `json:"exp"`
}

// token signs an ID token of u (HMAC-SHA256 over its claims).
func (p *Pool) token(u *user) string {
	b, _ := json.Marshal(claims{u.subject, u.email, u.company, string(u.role), p.now().Add(TokenLifetime).Unix()})
	body := base64.RawURLEncoding.EncodeToString(b)
	mac := hmac.New(sha256.New, p.key)
	mac.Write([]byte(body))
	return body + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// SignIn starts a sign-in.
func (p *Pool) SignIn(_ context.Context, email, password string) (identity.Step, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	u := p.users[strings.ToLower(email)]
	if u == nil || u.password != password {
		return identity.Step{}, identity.ErrNotAuthorized
	}
	if u.temporary {
		return p.challenge(u, identity.NewPasswordRequired), nil
	}
	return p.signedIn(u, false), nil
}

// answer takes the challenge session of email, once.
func (p *Pool) answer(email, session string) (*user, error) {
	u := p.users[strings.ToLower(email)]
	if u == nil || p.challenges[session] != u.email {
		return nil, identity.ErrNotAuthorized
	}
	delete(p.challenges, session)
	return u, nil
}

// SetNewPassword answers NewPasswordRequired.
func (p *Pool) SetNewPassword(_ context.Context, email, session, newPassword string) (identity.Step, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(newPassword) < MinPasswordLength {
		return identity.Step{}, identity.ErrInvalidPassword
	}
	u, err := p.answer(email, session)
	if err != nil {
		return identity.Step{}, err
	}
	u.password, u.temporary = newPassword, false
	return p.signedIn(u, false), nil
}

// AnswerMFA answers SoftwareTokenMFA.
func (p *Pool) AnswerMFA(_ context.Context, email, session, code string) (identity.Step, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	u := p.users[strings.ToLower(email)]
	if u == nil || p.challenges[session] != u.email {
		return identity.Step{}, identity.ErrNotAuthorized
	}
	byCode := u.mfaCode != "" && code == u.mfaCode
	byApp := u.mfaSecret != "" && code == TOTP(u.mfaSecret, p.now())
	if !byCode && !byApp {
		return identity.Step{}, identity.ErrInvalidCode
	}
	delete(p.challenges, session)
	return p.signedIn(u, true), nil
}

// ForgotPassword "sends" a code (ResetCode reads it).
func (p *Pool) ForgotPassword(_ context.Context, email string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if u := p.users[strings.ToLower(email)]; u != nil {
		u.resetCode = randomText()[:6]
	}
	return nil
}

// ConfirmForgotPassword sets a new password with the code.
func (p *Pool) ConfirmForgotPassword(_ context.Context, email, code, newPassword string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	u := p.users[strings.ToLower(email)]
	switch {
	case u == nil:
		return identity.ErrUserNotFound
	case u.resetCode == "" || code != u.resetCode:
		return identity.ErrInvalidCode
	case len(newPassword) < MinPasswordLength:
		return identity.ErrInvalidPassword
	}
	u.password, u.temporary, u.resetCode = newPassword, false, ""
	return nil
}

// Verify checks an ID token the double signed.
func (p *Pool) Verify(_ context.Context, idToken string) (identity.User, error) {
	body, sig, ok := strings.Cut(idToken, ".")
	mac := hmac.New(sha256.New, p.key)
	mac.Write([]byte(body))
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if !ok || err != nil || !hmac.Equal(got, mac.Sum(nil)) {
		return identity.User{}, identity.ErrInvalidToken
	}
	b, err := base64.RawURLEncoding.DecodeString(body)
	var c claims
	if err != nil || json.Unmarshal(b, &c) != nil {
		return identity.User{}, identity.ErrInvalidToken
	}
	exp := time.Unix(c.Exp, 0)
	if !p.now().Before(exp) {
		return identity.User{}, identity.ErrInvalidToken
	}
	return identity.User{Subject: c.Sub, Email: c.Email, CompanyID: c.Company, Role: identity.Role(c.Role), Expires: exp}, nil
}

// CreateUser creates a user with a temporary password.
func (p *Pool) CreateUser(_ context.Context, companyID, email string, role identity.Role, temporaryPassword string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := strings.ToLower(email)
	if p.users[k] != nil {
		return identity.ErrUserExists
	}
	if temporaryPassword == "" {
		temporaryPassword = randomText()
	}
	p.users[k] = &user{subject: randomText(), email: email, company: companyID, role: role, password: temporaryPassword, temporary: true}
	return nil
}

// Members lists the users of companyID, by email.
func (p *Pool) Members(_ context.Context, companyID string) ([]identity.Member, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []identity.Member
	for _, u := range p.users {
		if u.company == companyID {
			status := StatusConfirmed
			if u.temporary {
				status = StatusForceChange
			}
			out = append(out, identity.Member{Email: u.email, Role: u.role, Status: status})
		}
	}
	slices.SortFunc(out, func(a, b identity.Member) int { return strings.Compare(a.Email, b.Email) })
	return out, nil
}

// of returns email's user if they belong to companyID.
func (p *Pool) of(companyID, email string) (*user, error) {
	u := p.users[strings.ToLower(email)]
	if u == nil || u.company != companyID {
		return nil, identity.ErrUserNotFound
	}
	return u, nil
}

// SetRole changes a user's role.
func (p *Pool) SetRole(_ context.Context, companyID, email string, role identity.Role) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	u, err := p.of(companyID, email)
	if err != nil {
		return err
	}
	u.role = role
	return nil
}

// RemoveUser deletes a user.
func (p *Pool) RemoveUser(_ context.Context, companyID, email string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	u, err := p.of(companyID, email)
	if err != nil {
		return err
	}
	delete(p.users, strings.ToLower(u.email))
	return nil
}

// SetTemporaryPassword gives email the temporary password password, as a
// pool that emailed it would have: their next sign-in with it asks for a
// new one.
func (p *Pool) SetTemporaryPassword(email, password string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	u := p.users[strings.ToLower(email)]
	if u == nil {
		return identity.ErrUserNotFound
	}
	u.password, u.temporary = password, true
	return nil
}
