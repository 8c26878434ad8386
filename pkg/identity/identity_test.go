package identity_test

import (
	"errors"
	"strings"
	"testing"

	"payments/pkg/identity"
)

func TestPolicyCheck(t *testing.T) {
	for _, tt := range []struct {
		password string
		problem  string // "" when valid
	}{
		{"Correct-Horse-9", ""},
		{"Sp ace-Inside9x", ""},
		{"Short-9a", "at least 12"},
		{strings.Repeat("Aa1-", 65), "at most 256"},
		{" Leading-Space9", "space"},
		{"Trailing-Space9 ", "space"},
		{"NO-LOWER-CASE-9", "lower case"},
		{"no-upper-case-9", "upper case"},
		{"No-Numbers-Here", "number"},
		{"NoSymbolsHere99", "symbol"},
		{"Ünïcödé-ÖNLY-99", ""},
		{"ÜNÏCÖDÉ-ONLY-99", "lower case"},
	} {
		err := identity.Policy.Check(tt.password)
		switch {
		case tt.problem == "" && err != nil:
			t.Errorf("Check(%q) = %v, want nil", tt.password, err)
		case tt.problem != "" && (!errors.Is(err, identity.ErrInvalidPassword) || !strings.Contains(err.Error(), tt.problem)):
			t.Errorf("Check(%q) = %v, want ErrInvalidPassword saying %q", tt.password, err, tt.problem)
		}
	}
}

func TestRoleValid(t *testing.T) {
	for _, r := range identity.Roles {
		if !r.Valid() {
			t.Errorf("%s is not Valid", r)
		}
	}
	for _, r := range []identity.Role{"", "admin", "Owner"} {
		if r.Valid() {
			t.Errorf("%q is Valid", r)
		}
	}
}

// TestKeepsAnOwner: a company's last owner can be neither removed nor
// given another role; any other change, and any change while another
// owner remains, keeps an owner.
func TestKeepsAnOwner(t *testing.T) {
	one := []identity.Member{{Email: "ada@example.com", Role: identity.Owner}, {Email: "bob@example.com", Role: identity.Viewer}}
	two := append([]identity.Member{{Email: "cy@example.com", Role: identity.Owner}}, one...)
	for _, tt := range []struct {
		name    string
		members []identity.Member
		email   string
		role    identity.Role // "": removed
		want    error
	}{
		{"remove the last owner", one, "ada@example.com", "", identity.ErrLastOwner},
		{"remove the last owner, the email in capitals", one, "ADA@example.com", "", identity.ErrLastOwner},
		{"demote the last owner", one, "ada@example.com", identity.Viewer, identity.ErrLastOwner},
		{"the last owner stays owner", one, "ada@example.com", identity.Owner, nil},
		{"remove a viewer", one, "bob@example.com", "", nil},
		{"promote a viewer", one, "bob@example.com", identity.Owner, nil},
		{"remove one of two owners", two, "ada@example.com", "", nil},
		{"demote one of two owners", two, "cy@example.com", identity.Finance, nil},
		{"someone not a member", one, "eve@example.com", "", identity.ErrUserNotFound},
		{"no members", nil, "ada@example.com", identity.Viewer, identity.ErrUserNotFound},
	} {
		if err := identity.KeepsAnOwner(tt.members, tt.email, tt.role); !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
}
