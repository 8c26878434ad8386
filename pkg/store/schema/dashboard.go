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

// ActivitySKPrefix starts the sort key of every entry of a company's
// activity log in its partition (CompanyPK).
const ActivitySKPrefix = "ACTIVITY#"

// ActivitySK is the sort key of the activity entry id (a UUID v7: the
// entries sort by time).
func ActivitySK(id string) string { return ActivitySKPrefix + id }

// KindActivity is the type of an activity entry.
const KindActivity = "activity"
