package dashboard

import (
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"payments/pkg/identity"
	"payments/pkg/sessions"
)

// teamData is the Team page's.
type teamData struct {
	Members []memberRow
	Roles   []identity.Role
	// CanManage shows the forms that change the team (ManageTeam).
	CanManage bool
	// Email and Role are the invitation's, kept when it is refused.
	Email string
	Role  identity.Role
}

// memberRow is one of the company's users.
type memberRow struct {
	Email  string
	Role   identity.Role
	Status string
	// Self is the session's own user, whom the page does not let change.
	Self bool
}

// The Team page's notices after a change, by the done parameter.
var teamNotices = map[string]string{
	"invited": "Invitation sent. The new member signs in with the temporary password the email gives them.",
	"role":    "Role changed.",
	"removed": "Member removed.",
}

// teamRoutes are the Team page's: every role sees the company's users
// (whom to ask for a change); only an owner (ManageTeam) changes them.
func (h *Handler) teamRoutes() []route {
	return []route{
		{"GET /dashboard/team", ReadMoney, h.team},
		{"POST /dashboard/team/invite", ManageTeam, h.invite},
		{"POST /dashboard/team/role", ManageTeam, h.setRole},
		{"POST /dashboard/team/remove", ManageTeam, h.removeMember},
	}
}

// team lists the company's users.
func (h *Handler) team(w http.ResponseWriter, r *http.Request, s sessions.Session) {
	h.renderTeam(w, r, s, http.StatusOK, teamNotices[r.URL.Query().Get("done")], "", teamData{Role: identity.Viewer})
}

// renderTeam renders the Team page with status, a notice or an error, and
// the invitation's fields of d.
func (h *Handler) renderTeam(w http.ResponseWriter, r *http.Request, s sessions.Session, status int, notice, problem string, d teamData) {
	members, err := h.deps.Pool.Members(r.Context(), s.CompanyID)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	slices.SortFunc(members, func(a, b identity.Member) int { return strings.Compare(a.Email, b.Email) })
	d.Roles, d.CanManage, d.Members = identity.Roles, Allowed(s.Role, ManageTeam), nil
	for _, m := range members {
		d.Members = append(d.Members, memberRow{Email: m.Email, Role: m.Role, Status: statusWords(m.Status), Self: strings.EqualFold(m.Email, s.Email)})
	}
	h.render(w, r, status, "team", view{Title: "Team", Nav: "team", Notice: notice, Error: problem, Data: d})
}

// statusWords says a member's status of the pool in words.
func statusWords(status string) string {
	switch status {
	case "FORCE_CHANGE_PASSWORD":
		return "Invited"
	case "CONFIRMED":
		return "Active"
	}
	return strings.ToLower(strings.ReplaceAll(status, "_", " "))
}

// formRole reads the role field: "" when it is not a role.
func formRole(r *http.Request) identity.Role {
	if role := identity.Role(r.PostFormValue("role")); role.Valid() {
		return role
	}
	return ""
}

// invite creates a user of the company with the role chosen: the pool
// sends them a temporary password (by email, in AWS).
func (h *Handler) invite(w http.ResponseWriter, r *http.Request, s sessions.Session) {
	email, problem := identity.Email(r.PostFormValue("email"))
	role := formRole(r)
	d := teamData{Email: email, Role: role}
	switch {
	case problem != "":
		h.renderTeam(w, r, s, http.StatusBadRequest, "", "Email "+problem+".", d)
		return
	case role == "":
		h.renderTeam(w, r, s, http.StatusBadRequest, "", "Role must be one of owner, developer, finance and viewer.", d)
		return
	}
	err := h.deps.Pool.CreateUser(r.Context(), s.CompanyID, email, role, "")
	switch {
	case errors.Is(err, identity.ErrUserExists):
		h.renderTeam(w, r, s, http.StatusConflict, "", "Email "+email+" already has a dashboard account, of your company or another.", d)
		return
	case err != nil:
		h.changeFailed(w, r, err)
		return
	}
	h.record(r, s, "Member invited as "+string(role), email)
	teamDone(w, r, "invited")
}

// setRole gives a member of the company another role.
func (h *Handler) setRole(w http.ResponseWriter, r *http.Request, s sessions.Session) {
	email, _ := identity.Email(r.PostFormValue("email")) // not a member's when not an email
	role := formRole(r)
	if role == "" {
		h.renderTeam(w, r, s, http.StatusBadRequest, "", "Role must be one of owner, developer, finance and viewer.", teamData{Role: identity.Viewer})
		return
	}
	if !h.teamChange(w, r, s, email, role) || !h.endSessions(w, r, s, email, false) {
		return
	}
	if err := h.deps.Pool.SetRole(r.Context(), s.CompanyID, email, role); err != nil {
		h.teamRefused(w, r, s, err)
		return
	}
	h.record(r, s, "Role changed to "+string(role), email)
	if h.endSessions(w, r, s, email, true) {
		teamDone(w, r, "role")
	}
}

// removeMember deletes a member of the company from the pool.
func (h *Handler) removeMember(w http.ResponseWriter, r *http.Request, s sessions.Session) {
	email, _ := identity.Email(r.PostFormValue("email"))
	if !h.teamChange(w, r, s, email, "") || !h.endSessions(w, r, s, email, false) {
		return
	}
	if err := h.deps.Pool.RemoveUser(r.Context(), s.CompanyID, email); err != nil {
		h.teamRefused(w, r, s, err)
		return
	}
	h.record(r, s, "Member removed", email)
	if h.endSessions(w, r, s, email, true) {
		teamDone(w, r, "removed")
	}
}

// endSessions ends every session the company's member email has, so that
// their new role, or their removal, holds from their next request, not
// from their next sign-in. It runs before the pool's change (nothing is
// changed when it fails) and again after it, made (for a sign-in between
// the two). When it cannot, it says so and returns false: after the
// change, the sessions started before it are gone already, and only a
// sign-in made in between may remain, until it expires.
func (h *Handler) endSessions(w http.ResponseWriter, r *http.Request, s sessions.Session, email string, made bool) bool {
	err := h.deps.Sessions.EndAllOf(r.Context(), s.CompanyID, email)
	switch {
	case err == nil:
		return true
	case !made:
		h.changeFailed(w, r, err)
	default:
		slog.ErrorContext(r.Context(), "dashboard: end sessions", "error", err)
		h.message(w, r, http.StatusServiceUnavailable, "Temporarily unavailable",
			"The change was made. Should "+email+" have signed in during the last few seconds, that sign-in keeps what they had before until it expires, within 8 hours.")
	}
	return false
}

// teamChange checks that the member email of the session's company may be
// given role (removed when ""): the company keeps an owner
// (identity.KeepsAnOwner), and nobody changes themselves. When not, it
// answers and returns false.
func (h *Handler) teamChange(w http.ResponseWriter, r *http.Request, s sessions.Session, email string, role identity.Role) bool {
	members, err := h.deps.Pool.Members(r.Context(), s.CompanyID)
	if err != nil {
		h.changeFailed(w, r, err)
		return false
	}
	if err := identity.KeepsAnOwner(members, email, role); err != nil {
		h.teamRefused(w, r, s, err)
		return false
	}
	if strings.EqualFold(email, s.Email) {
		h.renderTeam(w, r, s, http.StatusConflict, "", "You cannot change your own role or remove yourself: another owner can.", teamData{Role: identity.Viewer})
		return false
	}
	return true
}

// teamRefused answers a change the rules or the pool refused: a user not
// of the company is not found, as one who does not exist.
func (h *Handler) teamRefused(w http.ResponseWriter, r *http.Request, s sessions.Session, err error) {
	switch {
	case errors.Is(err, identity.ErrUserNotFound):
		h.message(w, r, http.StatusNotFound, "Page not found", "There is no page at this address.")
	case errors.Is(err, identity.ErrLastOwner):
		h.renderTeam(w, r, s, http.StatusConflict, "",
			"This is the last owner of your company: invite or promote another owner first, so that the company keeps one.", teamData{Role: identity.Viewer})
	default:
		h.changeFailed(w, r, err)
	}
}

// teamDone shows the Team page again after a change, saying what was done.
func teamDone(w http.ResponseWriter, r *http.Request, done string) {
	http.Redirect(w, r, "/dashboard/team?"+url.Values{"done": {done}}.Encode(), http.StatusSeeOther)
}

// changeFailed answers a service's failure to make a change with a page
// that says so.
func (h *Handler) changeFailed(w http.ResponseWriter, r *http.Request, err error) {
	slog.ErrorContext(r.Context(), "dashboard: change", "error", err)
	h.message(w, r, http.StatusServiceUnavailable, "Temporarily unavailable", "This change could not be made just now. Please try again in a moment.")
}
