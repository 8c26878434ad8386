// Package schema is the one place the table's keys are spelled: its
// definition, its key and index attributes, its indexes, and every key
// prefix, key builder, item kind and transaction item name of the items on
// it, ours (pkg/store) and the simulated providers' (SANDBOX#…, see
// sandbox.go). The store, its tests and the tools build keys here; no other
// Go file spells one (infra/repocheck holds them to it).
//
// Every item a company owns has the partition key CompanyPK(companyID);
// only the lookup items that map a public identifier to its company
// (client ids, wallet, payment, card and customer ids for the operator
// console and the issuer's notifications) live outside it.
//
// Keys take strings: this package imports no domain package.
package schema

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Attribute names shared by every item.
const (
	AttrPK     = "PK"
	AttrSK     = "SK"
	AttrGSI1PK = "GSI1PK"
	AttrGSI1SK = "GSI1SK"
	AttrGSI2PK = "GSI2PK"
	AttrGSI2SK = "GSI2SK"
	AttrGSI3PK = "GSI3PK"
	AttrGSI3SK = "GSI3SK"
	// AttrType names an item's kind ("wallet", "payment", "event", …:
	// the Kind constants).
	AttrType = "type"
	// AttrExpiresAt is the TTL attribute: epoch seconds after which
	// DynamoDB may delete the item.
	AttrExpiresAt = "expires_at"
)

// Index names.
const (
	GSI1 = "GSI1"
	GSI2 = "GSI2"
	GSI3 = "GSI3"
)

// TableDefinition is the one definition of the table: the local stack and
// the tests create it from here, and a test proves template.yaml declares the
// same keys and indexes.
func TableDefinition(name string) *dynamodb.CreateTableInput {
	str := func(n string) types.AttributeDefinition {
		return types.AttributeDefinition{AttributeName: aws.String(n), AttributeType: types.ScalarAttributeTypeS}
	}
	key := func(pk, sk string) []types.KeySchemaElement {
		return []types.KeySchemaElement{
			{AttributeName: aws.String(pk), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(sk), KeyType: types.KeyTypeRange},
		}
	}
	gsi := func(name, pk, sk string) types.GlobalSecondaryIndex {
		return types.GlobalSecondaryIndex{
			IndexName:  aws.String(name),
			KeySchema:  key(pk, sk),
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		}
	}
	return &dynamodb.CreateTableInput{
		TableName:   aws.String(name),
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			str(AttrPK), str(AttrSK), str(AttrGSI1PK), str(AttrGSI1SK), str(AttrGSI2PK), str(AttrGSI2SK),
			str(AttrGSI3PK), str(AttrGSI3SK),
		},
		KeySchema: key(AttrPK, AttrSK),
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{
			gsi(GSI1, AttrGSI1PK, AttrGSI1SK),
			gsi(GSI2, AttrGSI2PK, AttrGSI2SK),
			gsi(GSI3, AttrGSI3PK, AttrGSI3SK),
		},
	}
}

// Sharded indexes. The sweeper's indexes (open payments, open fundings,
// open card transactions, unpublished events, events the webhook worker
// has not taken, pending webhook deliveries) are GSI2 partitions spread
// over IndexShards shards.

// IndexShards is how many GSI2 partitions each sweeper index is spread
// over (OPEN_PAYMENT#00 … OPEN_PAYMENT#15, OUTBOX#00 … OUTBOX#15): an item
// goes to the shard of a hash of its id, so that no single partition takes
// every write of the index; the sweeper reads every shard.
const IndexShards = 16

// ShardKey returns the partition of id in the sharded index named index.
func ShardKey(index, id string) string {
	h := fnv.New32a()
	h.Write([]byte(id))
	return fmt.Sprintf("%s#%02d", index, h.Sum32()%IndexShards)
}

// ShardKeys returns every partition of the sharded index named index,
// starting at a random one so that a sweep cut short by its limit does not
// always favour the same shards, and last the partition named index alone,
// where items written before the index was sharded still are (the sweeper
// moves them: see payments.Service.Sweep).
func ShardKeys(index string) []string {
	keys := make([]string, IndexShards, IndexShards+1)
	first := rand.IntN(IndexShards)
	for i := range keys {
		keys[i] = fmt.Sprintf("%s#%02d", index, (first+i)%IndexShards)
	}
	return append(keys, index)
}

// ShardKeysInOrder returns every shard of the index named index, first to
// last: a list read a page after another walks them in this order (the
// created-payment index).
func ShardKeysInOrder(index string) []string {
	keys := make([]string, IndexShards)
	for i := range keys {
		keys[i] = fmt.Sprintf("%s#%02d", index, i)
	}
	return keys
}

// TimedRef is the sort key of an index that orders the records of every
// company by a time: the time, the company and the record's id.
func TimedRef(at, companyID, id string) string { return at + "#" + companyID + "#" + id }

// SplitTimedRef returns the company and the id of a TimedRef.
func SplitTimedRef(sk string) (companyID, id string, err error) {
	parts := strings.SplitN(sk, "#", 3)
	if len(parts) != 3 {
		return "", "", fmt.Errorf("store: malformed index key %s", sk)
	}
	return parts[1], parts[2], nil
}
