package adminapi_test

import (
	"testing"

	"payments/pkg/app/apptest"
)

// TestMain runs the package's tests with apptest.Main: every AWS call a
// function made in them must be granted to it (function.Functions).
func TestMain(m *testing.M) { apptest.Main(m) }
