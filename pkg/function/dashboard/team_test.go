package dashboard_test

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"payments/pkg/activity"
	"payments/pkg/dashboard/browsertest"
	"payments/pkg/idempotency"
	"payments/pkg/identity"
	"payments/pkg/page"
	"payments/pkg/store"
)

// ownerClient signs the seeded owner of srv in over plain HTTP and
// returns the client and a form poster.
func ownerClient(t *testing.T, srv *browsertest.Server) (*http.Client, func(path string, form url.Values) (*http.Response, string)) {
	t.Helper()
	srv.ConfirmOwner(t)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	post := func(path string, form url.Values) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		return do(t, c, req)
	}
	if res, body := post("/dashboard/sign-in", url.Values{"email": {browsertest.OwnerEmail}, "password": {browsertest.NewPassword}}); res.Request.URL.Path != "/dashboard" {
		t.Fatalf("the owner's sign-in: %s %d %s", res.Request.URL, res.StatusCode, body)
	}
	return c, post
}

// TestTeamInThePool: the owner invites a member, changes their role and
// removes them through the dashboard function, over the pool it is built
// with (under make test, cognito-local through the Cognito adapter, its
// calls recorded: these are the Team page's grants, which grantcheck holds
// to function.Functions).
func TestTeamInThePool(t *testing.T) {
	srv := browsertest.Start(t)
	_, post := ownerClient(t, srv)
	role := func() identity.Role {
		members, err := srv.Pool.Members(t.Context(), srv.CompanyID)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range members {
			if m.Email == "ann@example.com" {
				return m.Role
			}
		}
		return ""
	}
	if res, body := post("/dashboard/team/invite", url.Values{"email": {"ann@example.com"}, "role": {"viewer"}}); !strings.Contains(body, "Invitation sent.") || role() != identity.Viewer {
		t.Fatalf("the invitation: %d %s", res.StatusCode, body)
	}
	if res, body := post("/dashboard/team/role", url.Values{"email": {"ann@example.com"}, "role": {"developer"}}); !strings.Contains(body, "Role changed.") || role() != identity.Developer {
		t.Fatalf("the role change: %d %s", res.StatusCode, body)
	}
	if res, body := post("/dashboard/team/remove", url.Values{"email": {"ann@example.com"}}); !strings.Contains(body, "Member removed.") || role() != "" {
		t.Fatalf("the removal: %d %s", res.StatusCode, body)
	}
}

// TestAPIKeyChangesInActivity: a payout made on the API with the
// company's key is in the company's activity log, its actor the key, once
// though its Idempotency-Key replayed it, and on the Activity page.
func TestAPIKeyChangesInActivity(t *testing.T) {
	srv := browsertest.Start(t)
	env := srv.Env
	body := `{"operator":"mtn","country":"CM","phone_number":"237670000001","amount":1000,"currency":"XAF"}`
	first := env.Call(env.Payments, srv.Token, "POST", "/payment/payout", body, idempotency.Header, "payout-1")
	again := env.Call(env.Payments, srv.Token, "POST", "/payment/payout", body, idempotency.Header, "payout-1")
	if first.Status/100 != 2 || again.Status != first.Status {
		t.Fatalf("the payout: %s, again %s", first.Raw, again.Raw)
	}
	company := env.Admin("GET", "/admin/companies/"+srv.CompanyID, "")
	clientID := company.Str("data", "client_id")
	if clientID == "" {
		t.Fatalf("the company: %s", company.Raw)
	}
	log, err := activity.NewLog(store.NewActivity(env.DB), nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := log.List(t.Context(), srv.CompanyID, page.Request{Page: 1, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var payouts []activity.Entry
	for _, e := range res.Items {
		if e.Action == "POST /payment/payout" {
			payouts = append(payouts, e)
		}
	}
	if len(payouts) != 1 || payouts[0].Actor != activity.KeyActor(clientID) || payouts[0].Subject == "" {
		t.Fatalf("the payout's entries: %+v (all: %+v)", payouts, res.Items)
	}

	c, _ := ownerClient(t, srv)
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/dashboard/activity", nil)
	answer, text := do(t, c, req)
	if answer.StatusCode != http.StatusOK || !strings.Contains(text, "API key "+clientID) || !strings.Contains(text, "POST /payment/payout") || !strings.Contains(text, payouts[0].Subject) {
		t.Errorf("the Activity page: %d %s", answer.StatusCode, text)
	}
}
