package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"payments/pkg/activity"
	"payments/pkg/dashboard"
	"payments/pkg/identity"
	"payments/pkg/page"
)

// TestRules holds the roles' table of docs/dashboard.md: what each role
// may do, and nothing more.
func TestRules(t *testing.T) {
	all := []dashboard.Permission{dashboard.ReadMoney, dashboard.ManageDevelopers, dashboard.MoveMoney, dashboard.Export, dashboard.ManageTeam}
	want := map[identity.Role][]dashboard.Permission{
		identity.Owner:     all,
		identity.Developer: {dashboard.ReadMoney, dashboard.ManageDevelopers},
		identity.Finance:   {dashboard.ReadMoney, dashboard.MoveMoney, dashboard.Export},
		identity.Viewer:    {dashboard.ReadMoney},
	}
	for _, role := range identity.Roles {
		for _, p := range all {
			allowed := false
			for _, w := range want[role] {
				allowed = allowed || w == p
			}
			if got := dashboard.Allowed(role, p); got != allowed {
				t.Errorf("Allowed(%s, %s) = %v, want %v", role, p, got, allowed)
			}
		}
	}
	if dashboard.Allowed("", dashboard.ReadMoney) || dashboard.Allowed("admin", dashboard.ReadMoney) {
		t.Error("a role that is none of the pool's is allowed something")
	}
}

// entries returns the company's activity, newest first, as "actor|action|subject".
func entries(t *testing.T, log *activity.Log, company string) []string {
	t.Helper()
	res, err := log.List(context.Background(), company, page.Request{Page: 1, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range res.Items {
		out = append(out, e.Actor+"|"+e.Action+"|"+e.Subject)
	}
	return out
}

// TestTeamRoles: every role sees the company's members; only an owner
// sees the forms, and the server refuses the others' changes (403),
// whatever the page showed them.
func TestTeamRoles(t *testing.T) {
	srv, pool, log := serverWithLog(t, nil)
	for _, role := range identity.Roles {
		c := client(t, srv)
		email := string(role) + "@example.com"
		signIn(t, c, srv, pool, email, role)
		res, body := get(t, c, srv, "/dashboard/team")
		if res.StatusCode != http.StatusOK || !strings.Contains(body, "<h1>Team</h1>") || !strings.Contains(body, email) {
			t.Errorf("%s: the Team page: %d %s", role, res.StatusCode, body)
		}
		if forms := strings.Contains(body, ">Invite</button>"); forms != (role == identity.Owner) {
			t.Errorf("%s: the invitation form shown: %v", role, forms)
		}
		for _, change := range []struct {
			path string
			form url.Values
		}{
			{"/dashboard/team/invite", url.Values{"email": {"new-" + email}, "role": {"viewer"}}},
			{"/dashboard/team/role", url.Values{"email": {"owner@example.com"}, "role": {"viewer"}}},
			{"/dashboard/team/remove", url.Values{"email": {"owner@example.com"}}},
		} {
			if role == identity.Owner {
				continue
			}
			res, body := post(t, c, srv, change.path, change.form)
			if res.StatusCode != http.StatusForbidden || !strings.Contains(body, "does not allow this") {
				t.Errorf("%s: POST %s: %d, want 403", role, change.path, res.StatusCode)
			}
		}
	}
	members, _ := pool.Members(context.Background(), "c1")
	if len(members) != len(identity.Roles) {
		t.Errorf("after the refused changes the company has %v", members)
	}
	if got := entries(t, log, "c1"); len(got) != 0 {
		t.Errorf("refused changes were recorded: %v", got)
	}
}

// TestInviteChangeRemove: an owner invites a member with a role, changes
// the role and removes them; each change is made in the pool, said on the
// page and recorded with the owner as its actor.
func TestInviteChangeRemove(t *testing.T) {
	srv, pool, log := serverWithLog(t, nil)
	c := client(t, srv)
	signIn(t, c, srv, pool, "ada@example.com", identity.Owner)
	member := func() identity.Member {
		members, _ := pool.Members(context.Background(), "c1")
		for _, m := range members {
			if m.Email == "new@example.com" {
				return m
			}
		}
		return identity.Member{}
	}

	res, body := post(t, c, srv, "/dashboard/team/invite", url.Values{"email": {"  New@Example.com "}, "role": {"viewer"}})
	if res.Request.URL.Path != "/dashboard/team" || !strings.Contains(body, "Invitation sent.") || !strings.Contains(body, "new@example.com") {
		t.Fatalf("after the invitation: %s %d %s", res.Request.URL, res.StatusCode, body)
	}
	if m := member(); m.Role != identity.Viewer || m.Status != "FORCE_CHANGE_PASSWORD" || !strings.Contains(body, "Invited") {
		t.Errorf("the invited member: %+v", m)
	}
	res, body = post(t, c, srv, "/dashboard/team/role", url.Values{"email": {"new@example.com"}, "role": {"finance"}})
	if res.StatusCode != http.StatusOK || !strings.Contains(body, "Role changed.") || member().Role != identity.Finance {
		t.Errorf("after the role change: %d %+v %s", res.StatusCode, member(), body)
	}
	res, body = post(t, c, srv, "/dashboard/team/remove", url.Values{"email": {"new@example.com"}})
	if res.StatusCode != http.StatusOK || !strings.Contains(body, "Member removed.") || member().Email != "" || strings.Contains(body, "new@example.com") {
		t.Errorf("after the removal: %d %+v %s", res.StatusCode, member(), body)
	}
	want := []string{
		"ada@example.com|Member removed|new@example.com",
		"ada@example.com|Role changed to finance|new@example.com",
		"ada@example.com|Member invited as viewer|new@example.com",
	}
	if got := entries(t, log, "c1"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the activity:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestChangedMemberSignedOut: a member's every session ends when an owner
// changes their role or removes them, so the change holds from their next
// request; other people's sessions go on.
func TestChangedMemberSignedOut(t *testing.T) {
	srv, pool, _ := serverWithLog(t, nil)
	owner := client(t, srv)
	signIn(t, owner, srv, pool, "ada@example.com", identity.Owner)
	bob, bobElsewhere, eve := client(t, srv), client(t, srv), client(t, srv)
	signIn(t, bob, srv, pool, "bob@example.com", identity.Finance)
	// Bob again, from another browser, with the password he chose.
	if res, body := post(t, bobElsewhere, srv, "/dashboard/sign-in", url.Values{"email": {"bob@example.com"}, "password": {"A-longer-password-2"}}); res.Request.URL.Path != "/dashboard" {
		t.Fatalf("second sign-in: %s %d %s", res.Request.URL.Path, res.StatusCode, body)
	}
	signIn(t, eve, srv, pool, "eve@example.com", identity.Developer)
	signedIn := func(c *http.Client) bool {
		res, _ := get(t, c, srv, "/dashboard")
		return res.StatusCode == http.StatusOK && res.Request.URL.Path == "/dashboard"
	}
	if res, body := post(t, owner, srv, "/dashboard/team/role", url.Values{"email": {"bob@example.com"}, "role": {"viewer"}}); !strings.Contains(body, "Role changed.") {
		t.Fatalf("role change: %d %s", res.StatusCode, body)
	}
	if signedIn(bob) || signedIn(bobElsewhere) {
		t.Error("a session of the member whose role changed goes on with the old role")
	}
	if !signedIn(eve) || !signedIn(owner) {
		t.Error("another person's session ended with the role change")
	}
	if res, body := post(t, owner, srv, "/dashboard/team/remove", url.Values{"email": {"eve@example.com"}}); !strings.Contains(body, "Member removed.") {
		t.Fatalf("removal: %d %s", res.StatusCode, body)
	}
	if signedIn(eve) {
		t.Error("the removed member is still signed in")
	}
	if !signedIn(owner) {
		t.Error("the owner's session ended with the removal")
	}
}

// TestInviteRefused: an invitation the page refuses names the field,
// keeps what was typed and invites nobody.
func TestInviteRefused(t *testing.T) {
	srv, pool, log := serverWithLog(t, nil)
	c := client(t, srv)
	signIn(t, c, srv, pool, "ada@example.com", identity.Owner)
	pool.CreateUser(context.Background(), "c2", "taken@example.com", identity.Viewer, "")
	for _, tt := range []struct {
		email, role string
		status      int
		says        string
	}{
		{"", "viewer", http.StatusBadRequest, "Email is required."},
		{"not-an-email", "viewer", http.StatusBadRequest, "Email must be an email address, as name@example.com."},
		{"Ann <ann@example.com>", "viewer", http.StatusBadRequest, "Email must be an email address"},
		{"ann@example.com", "admin", http.StatusBadRequest, "Role must be one of owner, developer, finance and viewer."},
		{"ann@example.com", "", http.StatusBadRequest, "Role must be one of"},
		{"taken@example.com", "viewer", http.StatusConflict, "Email taken@example.com already has a dashboard account"},
	} {
		res, body := post(t, c, srv, "/dashboard/team/invite", url.Values{"email": {tt.email}, "role": {tt.role}})
		if res.StatusCode != tt.status || !strings.Contains(body, tt.says) || !strings.Contains(body, `role="alert"`) {
			t.Errorf("%q %q: %d, want %d saying %q: %s", tt.email, tt.role, res.StatusCode, tt.status, tt.says, body)
		}
	}
	if members, _ := pool.Members(context.Background(), "c1"); len(members) != 1 {
		t.Errorf("refused invitations made members: %v", members)
	}
	if got := entries(t, log, "c1"); len(got) != 0 {
		t.Errorf("refused invitations were recorded: %v", got)
	}
}

// TestLastOwner: the company's last owner can be neither removed nor
// demoted (by themselves, the only one who could), and nobody changes
// themselves; another owner can.
func TestLastOwner(t *testing.T) {
	const lastOwner = "This is the last owner of your company"
	const self = "You cannot change your own role or remove yourself"
	for _, tt := range []struct {
		name   string
		others map[string]identity.Role // the company's other members
		path   string
		form   url.Values
		status int
		says   string
	}{
		{"the last owner removes themselves", nil, "/dashboard/team/remove",
			url.Values{"email": {"ada@example.com"}}, http.StatusConflict, lastOwner},
		{"the last owner demotes themselves", map[string]identity.Role{"bob@example.com": identity.Finance}, "/dashboard/team/role",
			url.Values{"email": {"ada@example.com"}, "role": {"finance"}}, http.StatusConflict, lastOwner},
		{"an owner removes themselves", map[string]identity.Role{"cy@example.com": identity.Owner}, "/dashboard/team/remove",
			url.Values{"email": {"ADA@example.com"}}, http.StatusConflict, self},
		{"an owner demotes another", map[string]identity.Role{"cy@example.com": identity.Owner}, "/dashboard/team/role",
			url.Values{"email": {"cy@example.com"}, "role": {"viewer"}}, http.StatusOK, "Role changed."},
		{"an owner removes another", map[string]identity.Role{"cy@example.com": identity.Owner}, "/dashboard/team/remove",
			url.Values{"email": {"cy@example.com"}}, http.StatusOK, "Member removed."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv, pool, log := serverWithLog(t, nil)
			c := client(t, srv)
			signIn(t, c, srv, pool, "ada@example.com", identity.Owner)
			for email, role := range tt.others {
				pool.CreateUser(context.Background(), "c1", email, role, "")
			}
			res, body := post(t, c, srv, tt.path, tt.form)
			if res.StatusCode != tt.status || !strings.Contains(body, tt.says) {
				t.Errorf("%d, want %d saying %q: %s", res.StatusCode, tt.status, tt.says, body)
			}
			members, _ := pool.Members(context.Background(), "c1")
			if tt.status != http.StatusOK {
				if len(members) != 1+len(tt.others) || members[0].Email != "ada@example.com" || members[0].Role != identity.Owner {
					t.Errorf("a refused change changed the team: %v", members)
				}
				if got := entries(t, log, "c1"); len(got) != 0 {
					t.Errorf("a refused change was recorded: %v", got)
				}
			}
		})
	}
}

// TestTeamTenancy: another company's member, named in the form, is not
// found (404, as an unknown email) and stays as they were.
func TestTeamTenancy(t *testing.T) {
	srv, pool, log := serverWithLog(t, nil)
	c := client(t, srv)
	signIn(t, c, srv, pool, "ada@example.com", identity.Owner)
	pool.CreateUser(context.Background(), "c2", "other@example.com", identity.Owner, "")
	pool.CreateUser(context.Background(), "c2", "other-viewer@example.com", identity.Viewer, "")
	for _, tt := range []struct {
		path string
		form url.Values
	}{
		{"/dashboard/team/role", url.Values{"email": {"other-viewer@example.com"}, "role": {"owner"}}},
		{"/dashboard/team/remove", url.Values{"email": {"other-viewer@example.com"}}},
		{"/dashboard/team/remove", url.Values{"email": {"other@example.com"}}},
		{"/dashboard/team/remove", url.Values{"email": {"nobody@example.com"}}},
	} {
		res, body := post(t, c, srv, tt.path, tt.form)
		if res.StatusCode != http.StatusNotFound || !strings.Contains(body, "Page not found") {
			t.Errorf("POST %s %v: %d, want 404: %s", tt.path, tt.form, res.StatusCode, body)
		}
	}
	if _, body := get(t, c, srv, "/dashboard/team"); strings.Contains(body, "other") {
		t.Errorf("the Team page shows another company's members: %s", body)
	}
	members, _ := pool.Members(context.Background(), "c2")
	if len(members) != 2 || members[0].Role != identity.Viewer || members[1].Role != identity.Owner {
		t.Errorf("the other company's members: %v", members)
	}
	if got := entries(t, log, "c1"); len(got) != 0 {
		t.Errorf("refused changes were recorded: %v", got)
	}
	// The double's own check, which the dashboard relies on: the pool
	// changes no user of another company.
	if err := pool.SetRole(context.Background(), "c1", "other-viewer@example.com", identity.Owner); err != identity.ErrUserNotFound {
		t.Errorf("the pool's SetRole of another company's user: %v", err)
	}
	if err := pool.RemoveUser(context.Background(), "c1", "other-viewer@example.com"); err != identity.ErrUserNotFound {
		t.Errorf("the pool's RemoveUser of another company's user: %v", err)
	}
}

// TestActivityPages: the log, newest first, a page of 25 entries with a
// link to the older ones; another company's entries are not shown; a
// cursor not of the log is not found.
func TestActivityPages(t *testing.T) {
	var mu sync.Mutex
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		at = at.Add(time.Second)
		return at
	}
	srv, pool, log := serverWithLog(t, clock)
	ctx := context.Background()
	for i := 1; i <= 30; i++ {
		if err := log.Record(ctx, "c1", activity.KeyActor("cli_1"), "POST /payment/payout", fmt.Sprintf("pay-%02d", i)); err != nil {
			t.Fatal(err)
		}
	}
	log.Record(ctx, "c2", "eve@example.com", "Member removed", "secret-of-c2")
	c := client(t, srv)
	signIn(t, c, srv, pool, "vic@example.com", identity.Viewer)

	res, body := get(t, c, srv, "/dashboard/activity")
	if res.StatusCode != http.StatusOK || !strings.Contains(body, "<h1>Activity</h1>") {
		t.Fatalf("the Activity page: %d %s", res.StatusCode, body)
	}
	for _, want := range []string{"<th scope=\"col\">When</th>", "<th scope=\"col\">Who</th>", "<th scope=\"col\">What</th>", "<th scope=\"col\">Subject</th>",
		"API key cli_1", "POST /payment/payout", "2026-03-01 09:00:30 UTC"} {
		if !strings.Contains(body, want) {
			t.Errorf("the first page lacks %q", want)
		}
	}
	if !strings.Contains(body, "pay-30") || !strings.Contains(body, "pay-06") || strings.Contains(body, "pay-05") ||
		strings.Index(body, "pay-30") > strings.Index(body, "pay-29") || strings.Contains(body, "secret-of-c2") || strings.Contains(body, "Newest entries") {
		t.Errorf("the first page is not the 25 newest entries of the company: %s", body)
	}
	i := strings.Index(body, `<a href="/dashboard/activity?after=`)
	if i < 0 {
		t.Fatalf("no link to the older entries: %s", body)
	}
	next := strings.ReplaceAll(body[i+len(`<a href="`):i+strings.Index(body[i:], `">`)], "&amp;", "&")
	res, body = get(t, c, srv, next)
	if res.StatusCode != http.StatusOK || !strings.Contains(body, "pay-05") || !strings.Contains(body, "pay-01") || strings.Contains(body, "pay-06") ||
		strings.Contains(body, "Older entries") || !strings.Contains(body, "Newest entries") {
		t.Errorf("the second page (%s): %d %s", next, res.StatusCode, body)
	}
	if res, _ := get(t, c, srv, "/dashboard/activity?after=not-an-entry"); res.StatusCode != http.StatusNotFound {
		t.Errorf("a cursor not of the log: %d, want 404", res.StatusCode)
	}
}
