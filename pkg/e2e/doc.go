// Package e2e holds the end-to-end tests: those that go across every
// function at once against the throwaway local stack (DynamoDB Local, the
// SQS and S3 emulators), with the harness of pkg/app/apptest. Bad input
// and fuzzing over every route, paging over every list, idempotency across
// the functions that move money, the sweeper over every kind of work,
// webhook delivery from event to receiver, the routes against the API
// document, a slow database, and the check that every AWS action granted to
// a function is one the tests saw it make.
//
// A capability's own behaviour is tested in its package (pkg/cards,
// pkg/fx…); the deployment's checks (template, permissions, configuration)
// are in pkg/function.
package e2e
