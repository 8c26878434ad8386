package browsertest_test

import (
	"testing"

	"payments/pkg/app/apptest"
)

// TestMain runs the package's tests with apptest.Main: every AWS call the
// functions made in them must be granted to them (function.Functions).
func TestMain(m *testing.M) { apptest.Main(m) }
