package store

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/debts"
	"payments/pkg/timestamp"
)

// addDebt adds debt d to t (replaced by the debts store).
func addDebt(t *txn, table string, d debts.Debt) error {
	item, err := attributevalue.MarshalMap(map[string]any{
		"PK": companyPK(d.CompanyID), "SK": "DEBT#" + d.ID, "type": "debt", "id": d.ID, "amount": d.Amount,
		"remaining": d.Remaining, "status": string(d.Status), "created_at": timestamp.Format(d.CreatedAt),
	})
	if err != nil {
		return fmt.Errorf("store: marshal debt: %w", err)
	}
	t.add("debt", types.TransactWriteItem{Put: &types.Put{TableName: &table, Item: item}})
	return nil
}
