// Package apptest is what the tests that drive the functions share: test
// environments that build the functions with their production constructors
// (or the services they build) over a fresh DynamoDB Local table, emulator
// queues and buckets (AuthTestEnv, PaymentsTestEnv, CardsTestEnv,
// CustomersTestEnv); calls sent through a handler as API Gateway sends them
// and checked against the contract (Result); faults injected into a
// function's AWS clients (Failing, FailingWith); the recording of every AWS
// call a function makes (Recording) and Main, which checks the recorded
// calls against the grants of function.Functions.
//
// A domain's tests (package cards_test in pkg/cards, fx_test in pkg/fx…)
// and the end-to-end tests of pkg/e2e import it.
package apptest
