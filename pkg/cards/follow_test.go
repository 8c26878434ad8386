package cards

import (
	"errors"
	"testing"
)

func TestCheckFollow(t *testing.T) {
	t.Parallel()
	open := Transaction{Type: TxAuthorization, Kind: KindAuthorization, Amount: 1000, Hold: 1000, Status: TxPending}
	settled := Transaction{Type: TxAuthorization, Kind: KindAuthorization, Amount: 1000, Settled: 800, Refunded: 300, Status: TxSuccess}
	reversed := Transaction{Type: TxAuthorization, Kind: KindPreauthorization, Amount: 1000, Status: TxSuccess}
	verification := Transaction{Type: TxAuthorization, Kind: KindVerification, Status: TxSuccess}
	expired := Transaction{Type: TxAuthorization, Kind: KindAuthorization, Amount: 1000, Status: TxSuccess, Expired: true}
	for _, c := range []struct {
		name  string
		typ   TxType
		auth  Transaction
		asked int64
		want  int64
		err   error
	}{
		{"settle all", TxSettlement, open, 0, 1000, nil},
		{"settle part", TxSettlement, open, 250, 250, nil},
		{"settle the hold exactly", TxSettlement, open, 1000, 1000, nil},
		{"settle more than the hold (a tip)", TxSettlement, open, 1001, 1001, nil},
		{"settle an expired one", TxSettlement, expired, 0, 1000, nil},
		{"settle part of an expired one", TxSettlement, expired, 300, 300, nil},
		{"reverse an expired one", TxReversal, expired, 0, 0, ErrAlreadyReversed},
		{"reverse part", TxReversal, open, 400, 400, nil},
		{"reverse more than the hold", TxReversal, open, 1001, 0, ErrExceedsHold},
		{"settle twice", TxSettlement, settled, 0, 0, ErrAlreadySettled},
		{"settle a reversed hold", TxSettlement, reversed, 0, 0, ErrAlreadyReversed},
		{"reverse", TxReversal, open, 0, 1000, nil},
		{"reverse a settled one", TxReversal, settled, 0, 0, ErrAlreadySettled},
		{"reverse twice", TxReversal, reversed, 0, 0, ErrAlreadyReversed},
		{"refund the rest", TxRefund, settled, 0, 500, nil},
		{"refund part", TxRefund, settled, 120, 120, nil},
		{"refund more than left", TxRefund, settled, 501, 0, ErrExceedsSettled},
		{"refund an unsettled one", TxRefund, open, 0, 0, ErrNotSettled},
		{"refund a reversed one", TxRefund, reversed, 100, 0, ErrNotSettled},
		{"refund all of a refunded one", TxRefund, Transaction{Type: TxAuthorization, Kind: KindAuthorization, Settled: 5, Refunded: 5}, 0, 0, ErrExceedsSettled},
		{"settle a verification", TxSettlement, verification, 0, 0, ErrNotAuthorization},
		{"settle a funding", TxSettlement, Transaction{Type: TxFunding, Amount: 1000}, 0, 0, ErrNotAuthorization},
		{"refund a decline", TxRefund, Transaction{Type: TxDecline, Amount: 1000}, 0, 0, ErrNotAuthorization},
	} {
		got, err := CheckFollow(c.typ, c.auth, c.asked)
		if got != c.want || !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
			t.Errorf("%s: %d, %v; want %d, %v", c.name, got, err, c.want, c.err)
		}
		if code := RefusalCode(err); (err == nil) != (code == "") {
			t.Errorf("%s: refusal code %q for %v", c.name, code, err)
		} else if err != nil && !errors.Is(refusal(code), c.err) {
			t.Errorf("%s: code %s reads back as %v", c.name, code, refusal(code))
		}
	}
}

func TestDeclineReason(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		card   Card
		amount int64
		want   DeclineReason
	}{
		{Card{Status: Active, Balance: 500}, 500, ""},
		{Card{Status: Active, Balance: 500, Held: 1}, 500, DeclineInsufficient},
		{Card{Status: Active}, 0, ""},
		{Card{Status: Frozen, Balance: 500}, 100, DeclineFrozen},
		{Card{Status: Frozen, IsLocked: true, Balance: 500}, 100, DeclineLocked},
		{Card{Status: Terminated}, 100, DeclineTerminated},
		{Card{Status: Pending}, 100, DeclineInactive},
		{Card{Status: Suspended, Balance: 500}, 100, DeclineInactive},
		{Card{Status: Failed}, 0, DeclineInactive},
	} {
		if got := declineReason(c.card, c.amount); got != c.want {
			t.Errorf("%+v, %d: %q, want %q", c.card, c.amount, got, c.want)
		}
	}
}
