package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"payments/pkg/app/apptest"
	"payments/pkg/function"
	"payments/pkg/function/paymentsapi"
	"payments/pkg/function/walletsapi"
	"payments/pkg/idempotency"
)

// afterCall returns cfg whose DynamoDB calls that match go through and then
// answer err instead of their result, as a call whose answer was lost
// would: its effect, if any, is committed.
func afterCall(cfg function.Config, match func(input any) bool, err error) function.Config {
	cfg.AWS = cfg.AWS.Copy()
	cfg.AWS.APIOptions = append(cfg.AWS.APIOptions, func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("lose-answer", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			out, md, callErr := next.HandleInitialize(ctx, in)
			if callErr == nil && match(in.Parameters) {
				return out, md, err
			}
			return out, md, callErr
		}), middleware.After)
	})
	return cfg
}

// TestSlowDatabaseIs503: a read that DynamoDB throttles, or that runs out
// of time, answers 503 TEMPORARILY_UNAVAILABLE with Retry-After and no
// internal text, on a read route and on a route that moves money; a
// payout whose transaction committed but whose answer was lost (a time-out
// after the commit) answers 503 too, and the retry with its
// Idempotency-Key finds the payout instead of making another.
func TestSlowDatabaseIs503(t *testing.T) {
	e := apptest.NewPaymentsTestEnv(t)
	companyID, token, walletID := e.Company("10000")
	throttled := &types.ProvisionedThroughputExceededException{Message: new(string)}
	isRead := func(in any) bool {
		switch in.(type) {
		case *dynamodb.GetItemInput, *dynamodb.QueryInput:
			return true
		}
		return false
	}
	tests := []struct {
		name         string
		err          error
		wallets      bool
		target, body string
	}{
		{"wallets read, throttled", throttled, true, "/wallets", ""},
		{"wallets read, out of time", fmt.Errorf("injected: %w", context.DeadlineExceeded), true, "/wallets", ""},
		{"payout, throttled", throttled, false, "/payment/payout", payoutBody(100)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := apptest.FailingWith(e.Cfg, isRead, tt.err)
			var h function.HTTPHandler
			var err error
			method := "GET"
			if tt.wallets {
				h, err = walletsapi.New(context.Background(), apptest.Recording(cfg, "wallets"))
			} else {
				method = "POST"
				h, err = paymentsapi.New(context.Background(), apptest.Recording(cfg, "payments"))
			}
			if err != nil {
				t.Fatal(err)
			}
			r := e.Call(h, token, method, tt.target, tt.body)
			checkCode(t, r, 503, "TEMPORARILY_UNAVAILABLE")
			if r.Headers["Retry-After"] != "2" || strings.Contains(r.Raw, "injected") || strings.Contains(r.Raw, "Throughput") {
				t.Fatalf("answer %v %s", r.Headers, r.Raw)
			}
		})
	}
	if e.PayoutCount(token) != "0" {
		t.Fatalf("a refused payout was made")
	}

	t.Run("time-out after the commit", func(t *testing.T) {
		timeout := &smithy.OperationError{ServiceID: "DynamoDB", OperationName: "TransactWriteItems", Err: context.DeadlineExceeded}
		isWrite := func(in any) bool { _, ok := in.(*dynamodb.TransactWriteItemsInput); return ok }
		lost, err := paymentsapi.New(context.Background(), apptest.Recording(afterCall(e.Cfg, isWrite, timeout), "payments"))
		if err != nil {
			t.Fatal(err)
		}
		first := e.Call(lost, token, "POST", "/payment/payout", payoutBody(1000), idempotency.Header, "lost-answer")
		checkCode(t, first, 503, "TEMPORARILY_UNAVAILABLE")
		if e.PayoutCount(token) != "1" {
			t.Fatalf("%s payments: the payout was not committed", e.PayoutCount(token))
		}
		retry := e.Call(e.Payments, token, "POST", "/payment/payout", payoutBody(1000), idempotency.Header, "lost-answer")
		if retry.Status != 200 || retry.Headers[idempotency.ReplayedHeader] != "true" || e.PayoutCount(token) != "1" {
			t.Fatalf("retry: %d %v %s; %s payments", retry.Status, retry.Headers, retry.Raw, e.PayoutCount(token))
		}
		list := e.Call(e.Payments, token, "GET", "/payment/transactions", "")
		if id := retry.Str("data", "transaction_id"); !strings.Contains(list.Raw, id) {
			t.Fatalf("the retry answered %s, not the payout made: %s", id, list.Raw)
		}
		if w := e.Wallet(token, walletID); w["payout_reserved"] != json.Number("1015") {
			t.Fatalf("wallet %v", w)
		}
	})
	e.Verify(companyID)
}
