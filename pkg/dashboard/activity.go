package dashboard

import (
	"errors"
	"net/http"
	"net/url"

	"payments/pkg/page"
	"payments/pkg/sessions"
)

// activityPage is how many entries a page of the Activity log shows.
const activityPage = 25

// activityRow is one entry of the log.
type activityRow struct{ When, Who, What, Subject string }

// activityData is the Activity page's.
type activityData struct {
	Entries []activityRow
	// Next is the link to the older entries, "" on the last page; First
	// the link back to the newest, "" on the first page.
	Next, First string
}

// activityRoutes are the Activity page's: every role reads the log.
func (h *Handler) activityRoutes() []route {
	return []route{
		{"GET /dashboard/activity", ReadMoney, h.activity},
	}
}

// activity shows a page of the company's activity log, newest first: the
// first, or the one after the entry the after parameter names.
func (h *Handler) activity(w http.ResponseWriter, r *http.Request, s sessions.Session) {
	after := r.URL.Query().Get("after")
	res, err := h.deps.Activity.List(r.Context(), s.CompanyID, page.Request{Page: 1, Limit: activityPage, After: after})
	switch {
	case errors.Is(err, page.ErrBadCursor):
		h.message(w, r, http.StatusNotFound, "Page not found", "There is no page at this address.")
		return
	case err != nil:
		h.failed(w, r, err)
		return
	}
	var d activityData
	for _, e := range res.Items {
		d.Entries = append(d.Entries, activityRow{When: e.At.UTC().Format("2006-01-02 15:04:05 UTC"), Who: e.Actor, What: e.Action, Subject: e.Subject})
	}
	if res.Next != "" {
		d.Next = "/dashboard/activity?" + url.Values{"after": {res.Next}}.Encode()
	}
	if after != "" {
		d.First = "/dashboard/activity"
	}
	h.render(w, r, http.StatusOK, "activity", view{Title: "Activity", Nav: "activity", Data: d})
}
