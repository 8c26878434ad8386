package dashboard_test

import (
	"testing"

	"payments/pkg/app/apptest"
)

// TestMain runs the package's tests with apptest.Main: every AWS call the
// dashboard made in them must be granted to it (function.Functions), and
// make test checks that every granted action was made by some package.
func TestMain(m *testing.M) { apptest.Main(m) }
