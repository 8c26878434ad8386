package store

// Key builders. A company-owned item's partition key is always
// companyPK(companyID); only lookup items that map a public identifier to its
// company (client ids, wallet ids for the operator console) live outside it.

func companyPK(companyID string) string { return "COMPANY#" + companyID }
