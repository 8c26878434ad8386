package auditstore_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"payments/pkg/audit"
	"payments/pkg/page"
	"payments/pkg/store/auditstore"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/storetest"
)

// TestTrail records four changes a minute apart and reads them back
// newest first, two to a page, filtered by operator, company, action and
// time; a record is never written over.
func TestTrail(t *testing.T) {
	db := storetest.NewDB(t)
	t0 := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	now := t0
	trail, err := audit.NewTrail(auditstore.New(db), func() time.Time { now = now.Add(time.Minute); return now })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	changes := []audit.Record{
		{RequestID: "r1", Phase: audit.Requested, Operator: "arn:aws:iam::1:user/ada", Action: "POST /admin/companies",
			Targets: map[string]string{}, Request: json.RawMessage(`{"name":"Acme"}`), SourceIP: "192.0.2.1", UserAgent: "curl/8"},
		{RequestID: "r1", Phase: audit.Answered, Operator: "arn:aws:iam::1:user/ada", Action: "POST /admin/companies",
			CompanyID: "c1", Answer: json.RawMessage(`{"data":{"company_id":"c1"}}`), Status: 201},
		{RequestID: "r2", Phase: audit.Requested, Operator: "arn:aws:iam::1:user/bob", Action: "POST /admin/wallets/{id}/credit",
			Targets: map[string]string{"id": "w1"}, Request: json.RawMessage(`{"amount":1000}`)},
		{RequestID: "r2", Phase: audit.Answered, Operator: "arn:aws:iam::1:user/bob", Action: "POST /admin/wallets/{id}/credit",
			Targets: map[string]string{"id": "w1"}, CompanyID: "c1", Status: 200},
	}
	for _, r := range changes {
		if err := trail.Record(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	all, err := trail.List(ctx, audit.Filter{}, page.Request{Page: 1, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if all.Total != 4 || len(all.Items) != 2 || all.Next == "" {
		t.Fatalf("first page %+v: want 2 of 4 and a next", all)
	}
	got := all.Items[0]
	want := changes[3]
	want.ID, want.At = got.ID, t0.Add(4*time.Minute)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("newest record\n got %+v\nwant %+v", got, want)
	}
	rest, err := trail.List(ctx, audit.Filter{}, page.Request{Page: 1, Limit: 2}.Following(all.Next, all.Total))
	if err != nil || len(rest.Items) != 2 || rest.Next != "" || string(rest.Items[1].Request) != `{"name":"Acme"}` || rest.Items[1].SourceIP != "192.0.2.1" {
		t.Fatalf("second page %+v, %v", rest, err)
	}
	for _, tt := range []struct {
		name string
		f    audit.Filter
		want int
	}{
		{"operator", audit.Filter{Operator: "arn:aws:iam::1:user/bob"}, 2},
		{"company", audit.Filter{CompanyID: "c1"}, 2},
		{"action", audit.Filter{Action: "POST /admin/companies"}, 2},
		{"operator and company", audit.Filter{Operator: "arn:aws:iam::1:user/ada", CompanyID: "c1"}, 1},
		{"from", audit.Filter{From: t0.Add(3 * time.Minute)}, 2},
		{"to", audit.Filter{To: t0.Add(3 * time.Minute)}, 2},
		{"none", audit.Filter{Operator: "arn:aws:iam::1:user/eve"}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := trail.List(ctx, tt.f, page.Request{Page: 1, Limit: 10})
			if err != nil || res.Total != tt.want || len(res.Items) != tt.want {
				t.Errorf("%+v: %d of %d (%v), want %d", tt.f, len(res.Items), res.Total, err, tt.want)
			}
		})
	}
	again := all.Items[0]
	if err := auditstore.New(db).PutRecord(ctx, again); !dynamo.ConditionFailed(err) {
		t.Errorf("a record written over: %v, want its condition to fail", err)
	}
}
