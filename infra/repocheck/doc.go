// Package repocheck holds the checks over the whole repository, run by go
// test like any other: the README's shell blocks against make run, the
// Makefile's build targets and lint step, the import rules of
// docs/architecture.md, and the waits of every test (no long sleeps).
package repocheck
