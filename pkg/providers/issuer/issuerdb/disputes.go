package issuerdb

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"payments/pkg/providers/issuer"
	"payments/pkg/providers/issuer/issuersandbox"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
	"payments/pkg/timestamp"
)

// The sandbox issuer's disputes:
//
//   - SANDBOX#ISSUER#DISPUTE#<issuer id>: a dispute as opened, with the
//     network's decision and when it holds;
//   - SANDBOX#ISSUER#DISPUTEREF#<our dispute id>: the id of the dispute
//     opened with that reference;
//   - SANDBOX#ISSUER#DISPUTETX#<transaction id>: the id of the dispute of
//     that transaction: one per transaction.

type sandboxDisputeItem struct {
	PK            string `dynamodbav:"PK"`
	SK            string `dynamodbav:"SK"`
	Type          string `dynamodbav:"type"`
	ID            string `dynamodbav:"id"`
	Reference     string `dynamodbav:"reference"`
	TransactionID string `dynamodbav:"transaction_id"`
	CardID        string `dynamodbav:"card_id"`
	Reason        string `dynamodbav:"reason"`
	Explanation   string `dynamodbav:"explanation,omitempty"`
	Status        string `dynamodbav:"status"`
	Amount        int64  `dynamodbav:"amount"`
	Credited      int64  `dynamodbav:"credited"`
	Outcome       string `dynamodbav:"outcome"`
	DecidedAt     string `dynamodbav:"decided_at"`
	CreatedAt     string `dynamodbav:"created_at"`
}

func (it sandboxDisputeItem) dispute() (issuersandbox.Dispute, error) {
	decided, err := timestamp.Parse(it.DecidedAt)
	if err != nil {
		return issuersandbox.Dispute{}, fmt.Errorf("store: sandbox dispute %s decided_at: %w", it.ID, err)
	}
	created, err := timestamp.Parse(it.CreatedAt)
	if err != nil {
		return issuersandbox.Dispute{}, fmt.Errorf("store: sandbox dispute %s created_at: %w", it.ID, err)
	}
	return issuersandbox.Dispute{
		Dispute: issuer.Dispute{ID: it.ID, Reference: it.Reference, TransactionID: it.TransactionID,
			Status: it.Status, Amount: it.Amount, Credited: it.Credited},
		CardID: it.CardID, Reason: it.Reason, Explanation: it.Explanation, Outcome: it.Outcome,
		DecidedAt: decided, CreatedAt: created,
	}, nil
}

// errSandboxTxDisputed is a transaction disputed under another reference.
var errSandboxTxDisputed = errors.New("store: sandbox transaction disputed already")

// PutDispute writes the dispute, its reference lookup, the claim of its
// transaction and notices in one transaction, each conditioned on being
// new; a taken reference returns the dispute recorded for it, a taken
// transaction is issuer.ErrDeclined.
func (s *Store) PutDispute(ctx context.Context, d issuersandbox.Dispute, notices []issuersandbox.Notice) (issuersandbox.Dispute, error) {
	at := timestamp.Format(d.CreatedAt)
	t := &dynamo.Txn{}
	errs := []error{
		s.addNew(t, "dispute", sandboxDisputeItem{
			PK: schema.SandboxDisputePK(d.ID), SK: schema.SandboxDisputeSK, Type: schema.KindSandboxDispute, ID: d.ID, Reference: d.Reference,
			TransactionID: d.TransactionID, CardID: d.CardID, Reason: d.Reason, Explanation: d.Explanation,
			Status: d.Status, Amount: d.Amount, Credited: d.Credited, Outcome: d.Outcome,
			DecidedAt: timestamp.Format(d.DecidedAt), CreatedAt: at,
		}),
		s.addNew(t, "reference", sandboxRefItem{PK: schema.SandboxDisputeRefPK(d.Reference), SK: schema.SandboxRefSK, Type: schema.KindSandboxDisputeRef, ID: d.ID, CreatedAt: at}),
		s.addNew(t, "transaction", sandboxRefItem{PK: schema.SandboxDisputeTxPK(d.TransactionID), SK: schema.SandboxRefSK, Type: schema.KindSandboxDisputeTx, ID: d.ID, CreatedAt: at}),
	}
	for i, n := range notices {
		errs = append(errs, s.addNew(t, "notice"+strconv.Itoa(i), newNoticeItem(n)))
	}
	if err := errors.Join(errs...); err != nil {
		return issuersandbox.Dispute{}, err
	}
	err := s.db.WriteOnce(ctx, "open sandbox dispute "+d.Reference, t, func(ctx context.Context, c dynamo.Cancellation) error {
		switch {
		case c.Failed("reference"):
			return errSandboxRefTaken
		case c.Failed("transaction"):
			return errSandboxTxDisputed
		}
		return nil
	})
	switch {
	case errors.Is(err, errSandboxRefTaken):
		var ref sandboxRefItem
		if err := s.getExisting(ctx, schema.SandboxDisputeRefPK(d.Reference), schema.SandboxRefSK, &ref); err != nil {
			return issuersandbox.Dispute{}, err
		}
		var it sandboxDisputeItem
		if err := s.getExisting(ctx, schema.SandboxDisputePK(ref.ID), schema.SandboxDisputeSK, &it); err != nil {
			return issuersandbox.Dispute{}, err
		}
		return it.dispute()
	case errors.Is(err, errSandboxTxDisputed):
		return issuersandbox.Dispute{}, fmt.Errorf("store: sandbox transaction %s is disputed already: %w", d.TransactionID, issuer.ErrDeclined)
	case err != nil:
		return issuersandbox.Dispute{}, err
	}
	return d, nil
}
