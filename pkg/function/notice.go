package function

import (
	"log/slog"
	"sync"
)

// notices holds the messages StartupNotice has logged in this process.
var notices sync.Map

// StartupNotice logs msg with args at INFO, once per process: what a mode's
// configuration means for the functions built from it (an adapter it lacks,
// callbacks it refuses), said at start-up by whichever function builds it
// first. In Lambda each function is a process of its own and says it once,
// at init; the dev server builds every function of the stack in one
// process, which says it once for all of them.
func StartupNotice(msg string, args ...any) {
	if _, said := notices.LoadOrStore(msg, true); said {
		return
	}
	slog.Info(msg, args...)
}
