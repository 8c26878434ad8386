package store

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
)

// SetClearSecretsPageSizeForTest sets the page size of the scan for
// webhook secrets in clear until the test ends.
func SetClearSecretsPageSizeForTest(t interface{ Cleanup(func()) }, n int32) {
	old := clearSecretsPageSize
	clearSecretsPageSize = n
	t.Cleanup(func() { clearSecretsPageSize = old })
}

// EventPutForTest exposes eventPut to the external tests.
var EventPutForTest = eventPut

// DeliveryKeyForTest returns the key of a delivery's item.
func DeliveryKeyForTest(companyID, deliveryID string) map[string]types.AttributeValue {
	return dynamo.Key(schema.CompanyPK(companyID), schema.DeliverySK(deliveryID))
}
