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
