package schema

// The audit table's items (pkg/audit). The trail has a table of its own,
// with the same key attributes (AttrPK, AttrSK) and no index: every record
// is in one partition, AuditPK, which the operators' changes, a few a
// minute, are far from filling.

// AuditPK is the partition of every record of the audit trail.
const AuditPK = "AUDIT"

// AuditSKPrefix starts the sort key of every audit record.
const AuditSKPrefix = "RECORD#"

// AuditSK is the sort key of the audit record id (a UUID v7: the records
// sort by time).
func AuditSK(id string) string { return AuditSKPrefix + id }

// KindAudit is the type of an audit record.
const KindAudit = "audit_record"
