// Package repocheck holds the checks over the whole repository, run by go
// test like any other: the README's shell blocks against make run (and the
// sandbox sections against the production detour's variables), the
// Makefile's build targets and lint step, the targets make help lists
// against the README's and docs/local.md's tables, the sweeper's steps
// against the README's and docs/local.md's lists, the import rules of
// docs/architecture.md, the table's keys (spelled in pkg/store/schema
// alone), and the waits of every test (no long sleeps).
package repocheck
