package payments

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestUpstream(t *testing.T) {
	t.Parallel()
	big := `{"x":"` + strings.Repeat("a", MaxUpstreamBytes) + `"}`
	tests := []struct{ raw, want string }{
		{``, ``},
		{`{"status":"SUCCESS"}`, `{"status":"SUCCESS"}`},
		{`<xml>ok</xml>`, `"\u003cxml\u003eok\u003c/xml\u003e"`},
		{big, `{"truncated":true,"bytes":` + itoa(len(big)) + `}`},
	}
	for _, tt := range tests {
		got := upstream(json.RawMessage(tt.raw))
		if string(got) != tt.want || (len(got) > 0 && !json.Valid(got)) {
			t.Errorf("upstream(%.40q) = %s, want %s", tt.raw, got, tt.want)
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
