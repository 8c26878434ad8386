// Package fundworker is the fund-worker function, the consumer of the
// sandbox bank's answers about declared fundings.
package fundworker

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"payments/pkg/function"
	"payments/pkg/function/base"
	"payments/pkg/function/services"
	"payments/pkg/providers"
	"payments/pkg/providers/bank"
	"payments/pkg/providers/bank/banksandbox"
	"payments/pkg/queue"
	"payments/pkg/wallets"
)

// New builds the fund-worker function, the consumer of the funds
// queue: each message is a banksandbox.Message that the sandbox bank queued, a
// few seconds after a company declared a funding (POST /wallets/fund);
// wallets.Service.CheckFunding asks the bank about it and confirms or
// rejects it as the operator console would. Failed messages are reported
// one by one (ReportBatchItemFailures). In production mode, where no bank
// adapter exists yet, the console decides fundings and nothing queues
// such messages: the worker starts all the same, and drops any message
// it is given (logged), leaving the funding to the console.
func New(ctx context.Context, cfg function.Config) (function.SQSHandler, error) {
	db := base.DB(cfg)
	p, err := services.Providers(cfg, db, providers.Deps{}) // its bank is only asked (Check)
	if err != nil {
		return nil, err
	}
	if p.Bank == bank.None {
		return queue.Batch(func(ctx context.Context, m queue.Message) error {
			slog.WarnContext(ctx, "drop funds message: no bank adapter in this mode, the console decides fundings", "mode", cfg.Mode)
			return nil
		}), nil
	}
	svc, err := services.Wallets(cfg, db, p, queue.NewPublisher(queue.NewClient(cfg.AWS, cfg.SQSEndpoint), cfg.WebhooksQueueURL))
	if err != nil {
		return nil, err
	}
	return queue.Batch(func(ctx context.Context, m queue.Message) error {
		return checkFunding(ctx, svc, m.Body)
	}), nil
}

// checkFunding handles one message of the funds queue. A malformed message,
// or one naming a funding that does not exist, is dropped (logged): asking
// again would not change it.
func checkFunding(ctx context.Context, svc *wallets.Service, body []byte) error {
	var m banksandbox.Message
	if err := json.Unmarshal(body, &m); err != nil || m.CompanyID == "" || m.FundingID == "" {
		slog.ErrorContext(ctx, "drop malformed funds message", "error", err)
		return nil
	}
	err := svc.CheckFunding(ctx, m.CompanyID, m.FundingID)
	if errors.Is(err, wallets.ErrTransactionNotFound) {
		slog.WarnContext(ctx, "drop message for unknown funding", "company_id", m.CompanyID, "transaction_id", m.FundingID)
		return nil
	}
	return err
}
