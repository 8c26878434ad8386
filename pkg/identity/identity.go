// Package identity is the contract of the people who sign in to the
// company dashboard: a user pool (Amazon Cognito in AWS, cognito-local
// under make run) that keeps their passwords and second factors, signs
// them in and vouches for them with a signed ID token. Each user belongs
// to exactly one company (the pool's custom:company_id attribute) and has
// one role (one of the pool's groups). The dashboard and the team's
// service declare what they need of it; pkg/identity/cognitopool
// implements it.
package identity

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Role is what a company's user may do in the dashboard.
type Role string

// The roles, each a group of the pool.
const (
	// Owner may do everything, the team included.
	Owner Role = "owner"
	// Developer manages the API keys, webhook endpoints and events, and
	// reads the money.
	Developer Role = "developer"
	// Finance makes payouts and bulk payouts and exports, and reads the
	// rest.
	Finance Role = "finance"
	// Viewer reads.
	Viewer Role = "viewer"
)

// Roles are every role, in the order the dashboard lists them.
var Roles = []Role{Owner, Developer, Finance, Viewer}

// Valid reports whether r is one of Roles.
func (r Role) Valid() bool { return slices.Contains(Roles, r) }

// Challenge is what the pool asks before it signs a user in.
type Challenge string

// The challenges the dashboard answers.
const (
	// NoChallenge: the user is signed in.
	NoChallenge Challenge = ""
	// NewPasswordRequired: the user signed in with a temporary password
	// and must choose their own.
	NewPasswordRequired Challenge = "NEW_PASSWORD_REQUIRED"
	// SoftwareTokenMFA: the user must give the code of their
	// authenticator app (TOTP).
	SoftwareTokenMFA Challenge = "SOFTWARE_TOKEN_MFA"
	// MFASetup: MFA is required and the user has no authenticator yet.
	MFASetup Challenge = "MFA_SETUP"
)

// Step is the outcome of a sign-in step: a challenge to answer, with the
// pool's session of it, or, when Challenge is NoChallenge, the ID token
// that vouches for the user.
type Step struct {
	Challenge Challenge
	// Session is the pool's opaque session of the challenge, given back
	// with its answer.
	Session string
	// IDToken is the pool's signed ID token (a JWT), when signed in.
	IDToken string
}

// User is a company's user as the pool vouches for them.
type User struct {
	// Subject is the pool's stable id of the user (the token's sub).
	Subject   string
	Email     string
	CompanyID string
	Role      Role
	// Expires is when the ID token that named them expires.
	Expires time.Time
}

// Member is a user of a company as the pool lists them.
type Member struct {
	Email string
	Role  Role
	// Status is the pool's: FORCE_CHANGE_PASSWORD until the first sign-in,
	// CONFIRMED after it.
	Status string
}

// Pool is the user pool. Every method that names a user by email works
// within one company's users: a user of another company is
// ErrUserNotFound.
type Pool interface {
	// SignIn starts a sign-in with the user's email and password.
	SignIn(ctx context.Context, email, password string) (Step, error)
	// SetNewPassword answers NewPasswordRequired.
	SetNewPassword(ctx context.Context, email, session, newPassword string) (Step, error)
	// AnswerMFA answers SoftwareTokenMFA with the authenticator's code.
	AnswerMFA(ctx context.Context, email, session, code string) (Step, error)
	// SetUpMFA starts answering MFASetup: a new authenticator secret for
	// the person to add to their app, and the session to answer with.
	SetUpMFA(ctx context.Context, session string) (MFASecret, error)
	// VerifyMFASetup answers MFASetup with the app's first code: the
	// authenticator is the user's from then on, and the sign-in goes on.
	VerifyMFASetup(ctx context.Context, email, session, code string) (Step, error)
	// ForgotPassword sends the user a code to choose a new password with
	// (by email, in AWS). It answers nil for an unknown email too, so
	// that it tells nobody who has an account.
	ForgotPassword(ctx context.Context, email string) error
	// ConfirmForgotPassword sets a new password with the code that
	// ForgotPassword sent.
	ConfirmForgotPassword(ctx context.Context, email, code, newPassword string) error
	// Verify checks an ID token's signature against the pool's published
	// keys, its issuer, audience, use and expiry, and returns the user it
	// names.
	Verify(ctx context.Context, idToken string) (User, error)

	// CreateUser creates a user of companyID with role: the pool sends
	// them a temporary password (by email, in AWS), or sets
	// temporaryPassword when it is not "". Their first sign-in asks for a
	// new password.
	CreateUser(ctx context.Context, companyID, email string, role Role, temporaryPassword string) error
	// Members lists the users of companyID.
	Members(ctx context.Context, companyID string) ([]Member, error)
	// SetRole gives a user of companyID role, in place of their own.
	SetRole(ctx context.Context, companyID, email string, role Role) error
	// RemoveUser deletes a user of companyID: they can no longer sign in.
	RemoveUser(ctx context.Context, companyID, email string) error
}

// MFASecret is an authenticator's secret (base32, RFC 6238's TOTP) and
// the sign-in's session that goes with it.
type MFASecret struct {
	Secret, Session string
}

// Errors of a Pool.
var (
	// ErrNotAuthorized: wrong email or password, or an expired session.
	ErrNotAuthorized = errors.New("identity: not authorized")
	// ErrInvalidPassword: the new password breaks the pool's policy.
	ErrInvalidPassword = errors.New("identity: password does not meet the policy")
	// ErrInvalidCode: a wrong or expired code.
	ErrInvalidCode = errors.New("identity: invalid code")
	// ErrUserExists: a user of that email exists already.
	ErrUserExists = errors.New("identity: user exists")
	// ErrUserNotFound: no user of that email in the company.
	ErrUserNotFound = errors.New("identity: user not found")
	// ErrInvalidToken: an ID token that is not the pool's, or expired.
	ErrInvalidToken = errors.New("identity: invalid token")
	// ErrTooManyAttempts: the pool refuses for a while.
	ErrTooManyAttempts = errors.New("identity: too many attempts")
	// ErrLastOwner: the change would leave the company without an owner.
	ErrLastOwner = errors.New("identity: the company's last owner")
)

// MaxEmailLength is the longest email address a user may have.
const MaxEmailLength = 254

// Email returns s as a user's email, trimmed and lower-cased (the pool's
// usernames are not case-sensitive), and what is wrong with it as one
// ("is required", "must be an email address, as name@example.com"), or
// "" when nothing is.
func Email(s string) (email, problem string) {
	email = strings.ToLower(strings.TrimSpace(s))
	switch a, err := mail.ParseAddress(email); {
	case email == "":
		return email, "is required"
	case len(email) > MaxEmailLength:
		return email, fmt.Sprintf("must be at most %d characters", MaxEmailLength)
	case err != nil || a.Address != email || !strings.Contains(email[strings.LastIndex(email, "@")+1:], "."):
		return email, "must be an email address, as name@example.com"
	}
	return email, ""
}

// KeepsAnOwner is the rule of a company's users that the pool cannot keep
// itself (Cognito has no transaction over users and groups): a company
// always has an owner. It returns nil when the member of members whose
// email is email may be given role, or removed when role is "";
// ErrUserNotFound when email is none of members; ErrLastOwner when the
// change would leave members without an owner. Whoever changes a
// company's users calls it with the company's Members first.
func KeepsAnOwner(members []Member, email string, role Role) error {
	i := slices.IndexFunc(members, func(m Member) bool { return strings.EqualFold(m.Email, email) })
	if i < 0 {
		return ErrUserNotFound
	}
	if members[i].Role != Owner || role == Owner {
		return nil
	}
	for j, m := range members {
		if j != i && m.Role == Owner {
			return nil
		}
	}
	return ErrLastOwner
}

// PasswordPolicy is the pool's rule for passwords, temporary ones
// included: the pool is created with it (template.yaml, and the local
// stack's pool), and the service checks a temporary password it is given
// against it before it asks the pool, whose own check (Cognito's) is not
// made by cognito-local.
type PasswordPolicy struct {
	MinimumLength    int
	RequireLowercase bool
	RequireUppercase bool
	RequireNumbers   bool
	RequireSymbols   bool
	// TemporaryPasswordValidityDays is how long a temporary password
	// signs in.
	TemporaryPasswordValidityDays int
}

// Policy is the pool's password policy.
var Policy = PasswordPolicy{
	MinimumLength:                 12,
	RequireLowercase:              true,
	RequireUppercase:              true,
	RequireNumbers:                true,
	RequireSymbols:                true,
	TemporaryPasswordValidityDays: 7,
}

// MaximumPasswordLength is the longest password Cognito takes.
const MaximumPasswordLength = 256

// symbols are the characters Cognito counts as symbols (its "special
// characters"); a space inside a password counts too.
const symbols = "^$*.[]{}()?\"!@#%&/\\,><':;|_~`=+- "

// Check returns nil when password meets p, else ErrInvalidPassword wrapped
// with what it lacks (Problem).
func (p PasswordPolicy) Check(password string) error {
	if problem := p.Problem(password); problem != "" {
		return fmt.Errorf("%w: %s", ErrInvalidPassword, problem)
	}
	return nil
}

// Problem returns what password lacks to meet p ("must contain a
// number"), or "" when it meets it. As Cognito, it counts only the basic
// Latin letters as lower or upper case and refuses a leading or trailing
// space.
func (p PasswordPolicy) Problem(password string) string {
	var lower, upper, number, symbol bool
	for _, c := range password {
		switch {
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= '0' && c <= '9':
			number = true
		case strings.ContainsRune(symbols, c):
			symbol = true
		}
	}
	var problem string
	switch n := utf8.RuneCountInString(password); {
	case n < p.MinimumLength:
		problem = fmt.Sprintf("must be at least %d characters long", p.MinimumLength)
	case n > MaximumPasswordLength:
		problem = fmt.Sprintf("must be at most %d characters long", MaximumPasswordLength)
	case strings.TrimSpace(password) != password:
		problem = "must not begin or end with a space"
	case p.RequireLowercase && !lower:
		problem = "must contain a lower case letter"
	case p.RequireUppercase && !upper:
		problem = "must contain an upper case letter"
	case p.RequireNumbers && !number:
		problem = "must contain a number"
	case p.RequireSymbols && !symbol:
		problem = "must contain a symbol"
	}
	return problem
}
