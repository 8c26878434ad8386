package function

import (
	"slices"
	"testing"
)

// TestEverySettingIsRead: each variable a function's row names has its
// entry in settings, of one kind (read, or secret), and each entry is named
// by some row, so that the table and the rows cannot drift apart.
func TestEverySettingIsRead(t *testing.T) {
	named := map[string]bool{}
	for name, fn := range Functions {
		for _, v := range fn.Variables() {
			named[v] = true
			if _, ok := settings[v]; !ok {
				t.Errorf("functions/%s reads %s, which has no entry in settings", name, v)
			}
		}
	}
	for v, st := range settings {
		if !named[v] {
			t.Errorf("settings has %s, which no function reads", v)
		}
		if (st.read == nil) == (st.secret == nil) {
			t.Errorf("%s: a setting is read or a secret, one of the two", v)
		}
		if st.productionOnly && st.secret == nil {
			t.Errorf("%s: only a secret is read in production mode alone", v)
		}
	}
	if !slices.IsSorted(PlainSecrets) || len(PlainSecrets) == 0 {
		t.Errorf("PlainSecrets: %v", PlainSecrets)
	}
}
