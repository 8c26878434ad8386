package function_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"payments/pkg/function"
)

// TestStartupNoticeOncePerProcess: a notice is logged at INFO the first
// time it is given, and not again, however many functions give it; another
// notice is logged once too.
func TestStartupNoticeOncePerProcess(t *testing.T) {
	var out bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&out, nil)))
	defer slog.SetDefault(prev)
	first, second := "notice test: first "+t.Name(), "notice test: second "+t.Name()
	for range 10 {
		function.StartupNotice(first, "mode", "production")
	}
	function.StartupNotice(second)
	function.StartupNotice(second)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `level=INFO msg="`+first+`" mode=production`) ||
		!strings.Contains(lines[1], `level=INFO msg="`+second+`"`) {
		t.Errorf("logged:\n%s\nwant each notice once, at INFO", out.String())
	}
}
