package issuersandbox

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"payments/pkg/providers/issuer"
)

// TestSandboxNetworkStandsIn: the network takes our answer when it comes
// within its deadline, and declines on its own (issuer_timeout) when it is
// late, an error or no decision; it advises each outcome, and a late
// decision still runs to its end.
func TestSandboxNetworkStandsIn(t *testing.T) {
	approved := issuer.AuthorizationAnswer{Decision: issuer.Approved, AvailableBalance: 400}
	release := make(chan struct{})
	finished := make(chan struct{})
	for _, c := range []struct {
		name    string
		ask     func(ctx context.Context, body []byte) (issuer.AuthorizationAnswer, error)
		standIn bool
	}{
		{"in time", func(context.Context, []byte) (issuer.AuthorizationAnswer, error) { return approved, nil }, false},
		{"an error", func(context.Context, []byte) (issuer.AuthorizationAnswer, error) {
			return issuer.AuthorizationAnswer{}, errors.New("down")
		}, true},
		{"no decision", func(context.Context, []byte) (issuer.AuthorizationAnswer, error) {
			return issuer.AuthorizationAnswer{Decision: "MAYBE"}, nil
		}, true},
		{"late", func(ctx context.Context, _ []byte) (issuer.AuthorizationAnswer, error) {
			defer close(finished)
			<-release // until the network has stood in
			return approved, ctx.Err()
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var advices []issuer.Notification
			n := NewNetwork(c.ask, func(_ context.Context, body []byte) error {
				no, err := issuer.ParseNotification(body)
				advices = append(advices, no)
				return err
			})
			n.Deadline = 10 * time.Millisecond
			a, err := n.Authorize(context.Background(), "", "card_1", "ref", issuer.KindAuthorization, 100, issuer.Merchant{Name: "Shop", City: "Austin", Country: "US"})
			if err != nil {
				t.Fatal(err)
			}
			want := issuer.Approved
			if c.standIn {
				want = issuer.Declined
			}
			if a.StandIn != c.standIn || a.Answer.Decision != want || c.standIn && *a.Answer.DeclineReason != issuer.StandInReason {
				t.Errorf("authorization %+v", a)
			}
			if len(advices) != 1 || advices[0].Type != issuer.NotifyAdvice || advices[0].Decision != want ||
				advices[0].Transaction.ID != a.Request.ID || c.standIn && advices[0].Reason != issuer.StandInReason {
				t.Errorf("advices %+v", advices)
			}
		})
	}
	close(release)
	<-finished // the late decision was not cancelled: it ran to its end
}

func TestSandboxNetworkDelivers(t *testing.T) {
	var got []issuer.Notification
	var asked []issuer.AuthorizationRequest
	n := NewNetwork(func(_ context.Context, body []byte) (issuer.AuthorizationAnswer, error) {
		r, err := issuer.ParseAuthorizationRequest(body)
		asked = append(asked, r)
		return issuer.AuthorizationAnswer{Decision: issuer.Approved}, err
	}, func(_ context.Context, body []byte) error {
		no, err := issuer.ParseNotification(body)
		if err != nil {
			return err
		}
		got = append(got, no)
		return nil
	})
	n.Now = func() time.Time { return time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC) }
	ctx := context.Background()
	a, err := n.Authorize(ctx, "", "card_1", "ref", issuer.KindPreauthorization, 1250, issuer.Merchant{Name: "Hotel", City: "Kribi", Country: "CM"})
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || asked[0].ID != a.Request.ID || !strings.HasPrefix(a.Request.ID, "ntx_") || asked[0].Amount != 1250 || asked[0].Kind != issuer.KindPreauthorization {
		t.Errorf("asked %+v", asked)
	}
	if _, err := n.Follow(ctx, "", issuer.NotifySettlement, "card_1", "ref", issuer.NetworkTransaction{AuthorizationID: a.Request.ID, Amount: 1000, Close: true}, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Terminated(ctx, "", "card_1", "ref", "risk"); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].ID == got[1].ID || !strings.HasPrefix(got[0].ID, "evt_") || got[0].Type != issuer.NotifyAdvice ||
		got[0].Transaction.ID != a.Request.ID || got[1].Transaction.AuthorizationID != a.Request.ID ||
		got[1].Transaction.Amount != 1000 || got[2].Type != issuer.NotifyCardTerminated {
		t.Errorf("notifications %+v", got)
	}
	if _, err := n.Follow(ctx, "", issuer.NotifyReversal, "card_1", "ref", issuer.NetworkTransaction{AuthorizationID: "", Amount: 5}, ""); !errors.Is(err, issuer.ErrBadNotification) || len(got) != 3 {
		t.Errorf("a reversal naming no authorization: %v, %d delivered", err, len(got))
	}
}
