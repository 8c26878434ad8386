package runtimeapi_test

import (
	"testing"

	"payments/infra/local/localtest"
)

// TestMain serves the sample identity documents the sample events enrol
// customers from.
func TestMain(m *testing.M) { localtest.Main(m) }
