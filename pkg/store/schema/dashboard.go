package schema

// The company dashboard's items.

// DashboardSessionSKPrefix starts the sort key of every dashboard session
// in its company's partition (CompanyPK).
const DashboardSessionSKPrefix = "DASHSESSION#"

// DashboardSessionSK is the sort key, in its company's partition, of the
// dashboard session id: the record that keeps a signed-in person's session
// alive until it expires (the TTL attribute) or they sign out.
func DashboardSessionSK(id string) string { return DashboardSessionSKPrefix + id }

// KindDashboardSession is the type of a dashboard session item.
const KindDashboardSession = "dashboard_session"
