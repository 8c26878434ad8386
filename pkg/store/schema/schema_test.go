package schema_test

import (
	"slices"
	"testing"

	"payments/pkg/store/schema"
)

// TestKeys holds every key to its literal form: the items already in the
// table were written with these bytes, so a key never changes. This is the
// one test that spells keys (infra/repocheck allows no other).
func TestKeys(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{schema.CompanyPK("c1"), "COMPANY#c1"},
		{schema.CompanySK, "COMPANY"},
		{schema.ClientPK("cli"), "CLIENT#cli"},
		{schema.ClientSK, "CLIENT"},
		{schema.RateLimitPK("token", "192.0.2.1"), "RATE#token#192.0.2.1"},
		{schema.RateLimitSK, "RATE"},
		{schema.TokenBucketSK("money"), "LIMIT#money"},
		{schema.DashboardSessionSK("s1"), "DASHSESSION#s1"},
		{schema.DashboardSessionSKPrefix, "DASHSESSION#"},
		{schema.ActivitySK("a1"), "ACTIVITY#a1"},
		{schema.ActivitySKPrefix, "ACTIVITY#"},
		{schema.WalletSK("w1"), "WALLET#w1"},
		{schema.WalletSKPrefix, "WALLET#"},
		{schema.WalletPairSK("XAF", "CM"), "WALLETPAIR#XAF#CM"},
		{schema.WalletRefPK("w1"), "WALLETREF#w1"},
		{schema.WalletRefSK, "WALLETREF"},
		{schema.LedgerSK("e1"), "WTX#e1"},
		{schema.LedgerSKPrefix, "WTX#"},
		{schema.WalletLedgerPK("c1", "w1"), "COMPANY#c1#WALLET#w1"},
		{schema.CreditRefSK("r1"), "CREDITREF#r1"},
		{schema.OpenFundingGSI2SK("2026-01-01", "c1", "f1"), "2026-01-01#c1#f1"},
		{schema.FundRefSK("r1"), "FUNDREF#r1"},
		{schema.FundingRefPK("f1"), "FUNDINGREF#f1"},
		{schema.FundingRefSK, "FUNDINGREF"},
		{schema.DebtSK("d1"), "DEBT#d1"},
		{schema.DebtSKPrefix, "DEBT#"},
		{schema.PendingDebtSK("d1"), "PENDINGDEBT#d1"},
		{schema.PendingDebtSKPrefix, "PENDINGDEBT#"},
		{schema.IdempotencySK("k1"), "IDEMPOTENCY#k1"},
		{schema.PaymentSK("p1"), "PAY#p1"},
		{schema.PaymentSKPrefix, "PAY#"},
		{schema.ReconcileGSI1PK, "RECONCILE"},
		{schema.ExternalIDSK("x1"), "EXTID#x1"},
		{schema.PaymentRefPK("p1"), "PAYREF#p1"},
		{schema.PaymentRefSK, "PAYREF"},
		{schema.OpenPaymentGSI2SK("2026-01-01", "c1", "p1"), "2026-01-01#c1#p1"},
		{schema.BulkSK("b1"), "BULK#b1"},
		{schema.BulkSKPrefix, "BULK#"},
		{schema.OpenBulkGSI2PK, "OPEN_BULK"},
		{schema.BulkChunkSK("b1", 7), "BULKROWS#b1#0007"},
		{schema.BulkChunksOf("b1"), "BULKROWS#b1#"},
		{schema.BulkChunkPrefix, "BULKROWS#"},
		{schema.CardSK("k1"), "CARD#k1"},
		{schema.CardSKPrefix, "CARD#"},
		{schema.CardSlotsSK, "CARDSLOTS"},
		{schema.CardSecretsSK("k1"), "CARDSECRETS#k1"},
		{schema.CardSecretsSKPrefix, "CARDSECRETS#"},
		{schema.CardTxSK("t1"), "CTX#t1"},
		{schema.CardTxSKPrefix, "CTX#"},
		{schema.CustomerCardsPK("c1", "u1"), "COMPANY#c1#CUSTOMER#u1"},
		{schema.CardTxsPK("c1", "k1"), "COMPANY#c1#CARD#k1"},
		{schema.CustomerTxsPK("c1", "u1"), "COMPANY#c1#CUSTOMER#u1#CTX"},
		{schema.RevealSKPrefix("k1"), "REVEAL#k1#"},
		{schema.RevealSK("k1", "r1"), "REVEAL#k1#r1"},
		{schema.CardRefPK("k1"), "CARDREF#k1"},
		{schema.CardRefPKPrefix, "CARDREF#"},
		{schema.CardRefSK, "CARDREF"},
		{schema.IssuerEventSK("e1"), "ISSUEREVENT#e1"},
		{schema.IssuerTxSK("t1"), "ISSUERTX#t1"},
		{schema.OpenCardTxGSI2SK("2026-01-01", "c1", "t1"), "2026-01-01#c1#t1"},
		{schema.OpenHoldGSI2SK("2026-01-01", "c1", "t1"), "2026-01-01#c1#t1"},
		{schema.OpenTerminationGSI2SK("2026-01-01", "c1", "k1"), "2026-01-01#c1#k1"},
		{schema.DisputeSK("d1"), "DISPUTE#d1"},
		{schema.DisputeSKPrefix, "DISPUTE#"},
		{schema.DisputeTxSK("t1"), "DISPUTETX#t1"},
		{schema.IssuerDisputeSK("i1"), "ISSUERDISPUTE#i1"},
		{schema.CustomerSK("u1"), "CUSTOMER#u1"},
		{schema.CustomerSKPrefix, "CUSTOMER#"},
		{schema.KYCReviewGSI1PK, "KYC_REVIEW"},
		{schema.CustomerRefPK("u1"), "CUSTREF#u1"},
		{schema.CustomerRefSK, "CUSTREF"},
		{schema.CustomerClaimSK(schema.ClaimEmail, "a@b.c"), "CUSTCLAIM#EMAIL#d648b243a3e817eaa3309e00e183483f2867baadf522099f0c2121770536b25a"},
		{schema.CustomerClaimSK(schema.ClaimIDNumber, ""), "CUSTCLAIM#IDNUMBER#e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{schema.EventSK("e1"), "EVT#e1"},
		{schema.EventSKPrefix, "EVT#"},
		{schema.EventGSI2SK("2026-01-01", "e1"), "2026-01-01#e1"},
		{schema.PendingDeliveryGSI2SK("2026-01-01", "c1", "d1"), "2026-01-01#c1#d1"},
		{schema.SequenceSK("o1"), "SEQ#o1"},
		{schema.WebhookItemsPrefix, "WEBHOOK_"},
		{schema.WebhookSecretSK, "WEBHOOK_SECRET"},
		{schema.WebhookEndpointSK("ep1"), "WEBHOOK_ENDPOINT#ep1"},
		{schema.WebhookEndpointCountSK, "WEBHOOK_ENDPOINTS"},
		{schema.DeliverySK("e1#ep1#3"), "EVT#e1#DLV#ep1#3"},
		{schema.DeliverySK("e1"), "EVT#e1#DLV#"},
		{schema.ClearSecretsPK, "MIGRATION#WEBHOOK_SECRETS"},
		{schema.ClearSecretsSK, "STATE"},
		{schema.RateSK("USD", "XAF"), "RATE#USD#XAF"},
		{schema.RateSKPrefix, "RATE#"},
		{schema.RateVersionSK("v1"), "RATEVERSION#v1"},
		{schema.FeeScheduleSK, "FEES"},
		{schema.ReconciliationPK, "RECONCILIATION"},
		{schema.ReconciliationSK("r1"), "RUN#r1"},
		{schema.ReconciliationSKPrefix, "RUN#"},
		{schema.ReconciliationStateSK("operator"), "PROVIDER#operator"},
		{schema.CreatedPaymentGSI3SK("2026-01-01", "c1", "p1"), "2026-01-01#c1#p1"},
		{schema.TimedRef("2026-01-01", "c1", "x1"), "2026-01-01#c1#x1"},

		{schema.SandboxCardholderPK("h1"), "SANDBOX#ISSUER#CARDHOLDER#h1"},
		{schema.SandboxCardholderRefPK("r1"), "SANDBOX#ISSUER#CHREF#r1"},
		{schema.SandboxCardPK("k1"), "SANDBOX#ISSUER#CARD#k1"},
		{schema.SandboxCardRefPK("r1"), "SANDBOX#ISSUER#CARDREF#r1"},
		{schema.SandboxMovePK("r1"), "SANDBOX#ISSUER#MOVE#r1"},
		{schema.SandboxDisputePK("d1"), "SANDBOX#ISSUER#DISPUTE#d1"},
		{schema.SandboxDisputeRefPK("r1"), "SANDBOX#ISSUER#DISPUTEREF#r1"},
		{schema.SandboxDisputeTxPK("t1"), "SANDBOX#ISSUER#DISPUTETX#t1"},
		{schema.SandboxStatementPK("s1"), "SANDBOX#ISSUER#STMT#s1"},
		{schema.SandboxStatementNotePK("e1"), "SANDBOX#ISSUER#STMTNOTE#e1"},
		{schema.SandboxAuthorizationsGSI1PK, "SANDBOX#ISSUER#STATEMENT#AUTHORIZATIONS"},
		{schema.SandboxTransactionsGSI1PK, "SANDBOX#ISSUER#STATEMENT#TRANSACTIONS"},
		{schema.SandboxNoticesGSI1PK, "SANDBOX#ISSUER#NOTICES"},
		{schema.SandboxNoticePK("e1"), "SANDBOX#ISSUER#NOTICE#e1"},
		{schema.SandboxDecisionPK("a1"), "SANDBOX#ISSUER#AUTH#a1"},
		{schema.SandboxOrderPK("r1"), "SANDBOX#OPERATOR#r1"},
		{schema.SandboxKYCPK("r1"), "SANDBOX#KYC#r1"},
		{schema.SandboxPrefix, "SANDBOX#"},
		{schema.SandboxIssuerPrefix, "SANDBOX#ISSUER#"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

// TestShards: an id always goes to the same shard of an index, one of
// those ShardKeys lists, which ends with the unsharded partition.
func TestShards(t *testing.T) {
	for _, tt := range []struct{ index, id, want string }{
		{schema.OpenPaymentIndex, "p1", schema.OpenPaymentGSI2PK("p1")},
		{schema.OpenFundingIndex, "f1", schema.OpenFundingGSI2PK("f1")},
		{schema.OpenCardTxIndex, "t1", schema.OpenCardTxGSI2PK("t1")},
		{schema.OpenHoldIndex, "t1", schema.OpenHoldGSI2PK("t1")},
		{schema.OpenTerminationIndex, "k1", schema.OpenTerminationGSI2PK("k1")},
		{schema.CardIndex, "k1", schema.CardGSI3PK("k1")},
		{schema.CreatedPaymentIndex, "p1", schema.CreatedPaymentGSI3PK("p1")},
	} {
		got := schema.ShardKey(tt.index, tt.id)
		if got != tt.want {
			t.Errorf("ShardKey(%s, %s) = %q, its builder %q", tt.index, tt.id, got, tt.want)
		}
		keys := schema.ShardKeys(tt.index)
		if len(keys) != schema.IndexShards+1 || keys[schema.IndexShards] != tt.index || !slices.Contains(keys, got) {
			t.Errorf("ShardKeys(%s) = %v: want %d shards holding %s, then %s", tt.index, keys, schema.IndexShards, got, tt.index)
		}
		inOrder := schema.ShardKeysInOrder(tt.index)
		if inOrder[0] != tt.index+"#00" || inOrder[schema.IndexShards-1] != tt.index+"#15" || !slices.Contains(inOrder, got) {
			t.Errorf("ShardKeysInOrder(%s) = %v", tt.index, inOrder)
		}
		sorted := slices.Clone(keys[:schema.IndexShards])
		slices.Sort(sorted)
		if !slices.Equal(sorted, inOrder) {
			t.Errorf("ShardKeys(%s) = %v, not the shards %v", tt.index, keys, inOrder)
		}
	}
	if got := schema.ShardKey(schema.OutboxIndex, "e1"); got != "OUTBOX#03" {
		t.Errorf("ShardKey(OUTBOX, e1) = %q, want OUTBOX#03 (FNV-1a mod 16)", got)
	}
}

func TestSplitTimedRef(t *testing.T) {
	for _, tt := range []struct {
		sk, company, id string
		ok              bool
	}{
		{schema.TimedRef("2026-01-01T00:00:00Z", "c1", "p1"), "c1", "p1", true},
		{"2026#c1#e1#ep1", "c1", "e1#ep1", true},
		{"2026#c1", "", "", false},
	} {
		company, id, err := schema.SplitTimedRef(tt.sk)
		if company != tt.company || id != tt.id || (err == nil) != tt.ok {
			t.Errorf("SplitTimedRef(%q) = %q, %q, %v", tt.sk, company, id, err)
		}
	}
}

func TestItemNames(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{schema.WalletLegItem(0), "wallet"},
		{schema.WalletLegItem(2), "wallet2"},
		{schema.Nth(schema.UpdatedItems, 0), "updated0"},
		{schema.Nth(schema.DebtItem, 1), "debt1"},
		{schema.Nth(schema.DebtMarkItems, 1), "debtmark1"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}
