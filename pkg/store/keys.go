package store

// Key builders. A company-owned item's partition key is always
// companyPK(companyID); only lookup items that map a public identifier to its
// company (client ids, wallet ids for the operator console) live outside it.

func companyPK(companyID string) string { return "COMPANY#" + companyID }

// Companies and credentials.

// companySK is the sort key of a company's own record in its partition.
func companySK() string { return "COMPANY" }

// clientPK is the partition of the lookup item that maps a client_id to its
// company; it lives outside the company partition because the token
// endpoint knows only the client_id.
func clientPK(clientID string) string { return "CLIENT#" + clientID }

// clientSK is the sort key of the client_id lookup item.
func clientSK() string { return "CLIENT" }

// rateLimitPK is the partition of one rate-limit window: scope names the
// limited endpoint ("token"), key the caller (a source IP).
func rateLimitPK(scope, key string) string { return "RATE#" + scope + "#" + key }

// rateLimitSK is the sort key of a rate-limit window item.
func rateLimitSK() string { return "RATE" }

// Wallets and their ledger.

// walletSK is the sort key of a wallet in its company's partition.
func walletSK(walletID string) string { return walletSKPrefix + walletID }

// walletSKPrefix starts the sort key of every wallet of a company. It does
// not start the pair claims (WALLETPAIR#…).
const walletSKPrefix = "WALLET#"

// walletPairSK is the sort key of the claim item that makes a (currency,
// country) pair unique within a company.
func walletPairSK(currency, countryISO string) string {
	return "WALLETPAIR#" + currency + "#" + countryISO
}

// walletRefPK is the partition of the lookup item that maps a wallet id to
// its company; only the operator console reads it, because it alone knows a
// wallet id without a company.
func walletRefPK(walletID string) string { return "WALLETREF#" + walletID }

// walletRefSK is the sort key of the wallet id lookup item.
func walletRefSK() string { return "WALLETREF" }

// ledgerSK is the sort key of a wallet transaction (ledger entry) in its
// company's partition; ids are UUID v7, so the keys are time-ordered.
func ledgerSK(txID string) string { return ledgerSKPrefix + txID }

// ledgerSKPrefix starts the sort key of every ledger entry of a company.
const ledgerSKPrefix = "WTX#"

// walletLedgerPK is the GSI1 partition of one wallet's ledger entries
// (GSI1SK is ledgerSK).
func walletLedgerPK(companyID, walletID string) string {
	return companyPK(companyID) + "#WALLET#" + walletID
}

// openFundingIndex names the GSI2 index of the fundings declared and not
// yet decided, sharded (shardKey): the sweeper asks the bank about them.
const openFundingIndex = "OPEN_FUNDING"

// openFundingGSI2PK is the shard of the open-funding index of funding id.
func openFundingGSI2PK(id string) string { return shardKey(openFundingIndex, id) }

// openFundingGSI2SK orders the fundings of a shard by when they were
// declared, and names them.
func openFundingGSI2SK(created, companyID, id string) string {
	return created + "#" + companyID + "#" + id
}

// creditRefSK is the sort key of the claim item that lets a sandbox credit
// reference be used once per company.
func creditRefSK(reference string) string { return "CREDITREF#" + reference }

// Debts (see Debts).

// debtSK is the sort key of a debt in its company's partition; ids are
// UUID v7, so the keys are time-ordered.
func debtSK(id string) string { return debtSKPrefix + id }

// debtSKPrefix starts the sort key of every debt of a company.
const debtSKPrefix = "DEBT#"

// pendingDebtSK is the sort key of the marker a debt has while it is
// pending.
func pendingDebtSK(id string) string { return pendingDebtSKPrefix + id }

// pendingDebtSKPrefix starts the sort key of every pending debt's marker.
const pendingDebtSKPrefix = "PENDINGDEBT#"

// Idempotency keys (see Idempotency).

// idempotencySK is the sort key of the record of an Idempotency-Key in its
// company's partition.
func idempotencySK(key string) string { return "IDEMPOTENCY#" + key }
