package cards_test

import (
	"payments/pkg/app"
	"payments/pkg/app/apptest"
	"payments/pkg/cards"
	"payments/pkg/function"
	"payments/pkg/function/cardnetwork"
	"payments/pkg/function/cardsapi"
	"payments/pkg/store"
)

// testCards is the cards service of the cards function over db.
func testCards(cfg function.Config, db *store.DB) (*cards.Service, error) {
	return cardsapi.Service(cfg, db, apptest.TestQueue(cfg, cfg.WebhooksQueueURL), app.Caches.Fees)
}

// testCardNetwork is the cards function's sandbox card network of svc.
func testCardNetwork(cfg function.Config, db *store.DB, svc *cards.Service) (*cards.Sandbox, error) {
	return cardnetwork.Network(cfg, db, svc, apptest.TestQueue(cfg, cfg.IssuerEventsQueueURL))
}
