package cognitopool_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"payments/pkg/identity"
	"payments/pkg/identity/cognitopool/cognitotest"
)

const (
	companyA = "01a00000-0000-7000-8000-00000000000a"
	companyB = "01a00000-0000-7000-8000-00000000000b"
	tempPass = "Temporary-Pass-1"
	ownPass  = "My-Own-Password-2"
)

// signUp creates a user of company with role and signs them in for the
// first time, choosing ownPass; it returns their ID token.
func signUp(t *testing.T, p identity.Pool, company, email string, role identity.Role) string {
	t.Helper()
	ctx := context.Background()
	if err := p.CreateUser(ctx, company, email, role, tempPass); err != nil {
		t.Fatalf("CreateUser %s: %v", email, err)
	}
	s, err := p.SignIn(ctx, email, tempPass)
	if err != nil || s.Challenge != identity.NewPasswordRequired || s.Session == "" {
		t.Fatalf("first SignIn %s: %+v, %v; want NewPasswordRequired with a session", email, s, err)
	}
	s, err = p.SetNewPassword(ctx, email, s.Session, ownPass)
	if err != nil || s.Challenge != identity.NoChallenge || s.IDToken == "" {
		t.Fatalf("SetNewPassword %s: %+v, %v; want an ID token", email, s, err)
	}
	return s.IDToken
}

func TestFirstSignIn(t *testing.T) {
	ctx := context.Background()
	p, _ := cognitotest.NewPool(t)
	token := signUp(t, p, companyA, "owner@a.example", identity.Owner)
	u, err := p.Verify(ctx, token)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if u.Email != "owner@a.example" || u.CompanyID != companyA || u.Role != identity.Owner || u.Subject == "" {
		t.Errorf("Verify = %+v, want the owner of company A", u)
	}
	if !u.Expires.After(time.Now()) {
		t.Errorf("Expires %v is not in the future", u.Expires)
	}

	s, err := p.SignIn(ctx, "owner@a.example", ownPass)
	if err != nil || s.IDToken == "" {
		t.Fatalf("SignIn with the new password: %+v, %v", s, err)
	}
	for _, tt := range []struct{ email, password string }{
		{"owner@a.example", "Wrong-Password-3"},
		{"nobody@a.example", ownPass},
	} {
		if _, err := p.SignIn(ctx, tt.email, tt.password); !errors.Is(err, identity.ErrNotAuthorized) {
			t.Errorf("SignIn(%s, %s) = %v, want ErrNotAuthorized", tt.email, tt.password, err)
		}
	}
	if err := p.CreateUser(ctx, companyB, "owner@a.example", identity.Viewer, ""); !errors.Is(err, identity.ErrUserExists) {
		t.Errorf("CreateUser of an existing email = %v, want ErrUserExists", err)
	}
	if err := p.ForgotPassword(ctx, "nobody@a.example"); err != nil {
		t.Errorf("ForgotPassword of an unknown email = %v, want nil", err)
	}
	if err := p.ConfirmForgotPassword(ctx, "owner@a.example", "000000", "Another-Password-4"); !errors.Is(err, identity.ErrInvalidCode) {
		t.Errorf("ConfirmForgotPassword with a code never sent = %v, want ErrInvalidCode", err)
	}
}

func TestCompanies(t *testing.T) {
	ctx := context.Background()
	p, _ := cognitotest.NewPool(t)
	signUp(t, p, companyA, "owner@a.example", identity.Owner)
	for _, u := range []struct {
		company, email string
		role           identity.Role
	}{
		{companyA, "dev@a.example", identity.Developer},
		{companyB, "owner@b.example", identity.Owner},
		{companyB, "viewer@b.example", identity.Viewer},
	} {
		if err := p.CreateUser(ctx, u.company, u.email, u.role, ""); err != nil {
			t.Fatalf("CreateUser %s: %v", u.email, err)
		}
	}

	members, err := p.Members(ctx, companyA)
	if err != nil {
		t.Fatal(err)
	}
	want := []identity.Member{
		{Email: "owner@a.example", Role: identity.Owner, Status: "CONFIRMED"},
		{Email: "dev@a.example", Role: identity.Developer, Status: "FORCE_CHANGE_PASSWORD"},
	}
	if !slices.Equal(members, want) {
		t.Errorf("Members(A) = %+v, want %+v", members, want)
	}

	// Another company's user is nobody to this one.
	if err := p.SetRole(ctx, companyA, "viewer@b.example", identity.Owner); !errors.Is(err, identity.ErrUserNotFound) {
		t.Errorf("SetRole of B's user by A = %v, want ErrUserNotFound", err)
	}
	if err := p.RemoveUser(ctx, companyA, "owner@b.example"); !errors.Is(err, identity.ErrUserNotFound) {
		t.Errorf("RemoveUser of B's user by A = %v, want ErrUserNotFound", err)
	}
	if err := p.RemoveUser(ctx, companyA, "nobody@a.example"); !errors.Is(err, identity.ErrUserNotFound) {
		t.Errorf("RemoveUser of nobody = %v, want ErrUserNotFound", err)
	}
	if members, err := p.Members(ctx, companyB); err != nil || len(members) != 2 {
		t.Errorf("Members(B) = %+v, %v; want B's two users untouched", members, err)
	}

	// A's own: a new role, then removed.
	if err := p.SetRole(ctx, companyA, "owner@a.example", identity.Finance); err != nil {
		t.Fatalf("SetRole: %v", err)
	}
	s, err := p.SignIn(ctx, "owner@a.example", ownPass)
	if err != nil {
		t.Fatal(err)
	}
	if u, err := p.Verify(ctx, s.IDToken); err != nil || u.Role != identity.Finance {
		t.Errorf("Verify after SetRole = %+v, %v; want role finance", u, err)
	}
	if err := p.RemoveUser(ctx, companyA, "dev@a.example"); err != nil {
		t.Fatalf("RemoveUser: %v", err)
	}
	members, err = p.Members(ctx, companyA)
	want = []identity.Member{{Email: "owner@a.example", Role: identity.Finance, Status: "CONFIRMED"}}
	if err != nil || !slices.Equal(members, want) {
		t.Errorf("Members(A) at the end = %+v, %v; want %+v", members, err, want)
	}
}
