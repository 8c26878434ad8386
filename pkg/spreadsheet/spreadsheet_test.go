package spreadsheet_test

import (
	"testing"

	"payments/pkg/spreadsheet"
)

func TestText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"June payroll", "June payroll"},
		{"=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"},
		{"+1", "'+1"},
		{"-2+3", "'-2+3"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"\tcmd", "'\tcmd"},
		{"\rcmd", "'\rcmd"},
		{"a=b", "a=b"},
	} {
		if got := spreadsheet.Text(c.in); got != c.want {
			t.Errorf("Text(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}
