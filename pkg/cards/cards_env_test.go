package cards_test

import (
	"time"

	"payments/pkg/app/apptest"
	"payments/pkg/cards"
	"payments/pkg/function"
	"payments/pkg/function/base"
	"payments/pkg/function/cardnetwork"
	"payments/pkg/function/cardsapi"
	"payments/pkg/store"
)

// testCards is the cards service of the cards function over db, with a
// fee cache of its own.
func testCards(cfg function.Config, db *store.DB) (*cards.Service, error) {
	return cardsapi.Service(cfg, db, apptest.TestQueue(cfg, cfg.WebhooksQueueURL), base.NewCaches(time.Now).Fees)
}

// testCardNetwork is the cards function's sandbox card network of svc.
func testCardNetwork(cfg function.Config, db *store.DB, svc *cards.Service) (*cards.Sandbox, error) {
	return cardnetwork.Network(cfg, db, svc, apptest.TestQueue(cfg, cfg.IssuerEventsQueueURL))
}
