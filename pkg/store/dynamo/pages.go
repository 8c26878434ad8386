package dynamo

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/ids"
	"payments/pkg/page"
)

// Lists. Every list the API serves is read by ReadPage, a page at a time,
// so that a request holds one page in memory and costs reads in proportion
// to its page, whatever the size of the account (docs/pagination.md):
//
//   - the page itself is a Query with Limit and ExclusiveStartKey, newest
//     first, whose filters are a FilterExpression; it reads until it has
//     limit+1 matches (the last one only tells that more follow) or the
//     range ends;
//   - total is a Select COUNT Query with the same key condition and filter,
//     summed over its pages; nothing is transferred but the counts;
//   - page=N without a cursor first skips (N−1)×limit matches reading keys
//     only (a projection);
//   - a cursor carries the id of the previous page's last item and the total
//     counted on the first page, so a cursor page counts nothing and skips
//     nothing: it costs the reads of its own page.
//
// A Listing is built by each store from the caller's company and the
// query's filters; to filter on one more attribute, add one condition to
// the store's filter function (ledgerFilter, paymentFilter, …).

// maxChunk caps the items one Query of a list evaluates (its Limit), so
// that a list holds at most that many items at a time. DynamoDB answers at
// most 1 MB a Query anyway (about 1,700 ledger entries); the Limit also
// spares DynamoDB Local, whose Queries without one get slower the more of
// the partition follows (counting 20,000 entries took 12 to 20 s without a
// Limit, under 2 s with this one).
const maxChunk = 2000

// Listing is one list: the rows in one partition, of the table or of a
// GSI, whose sort keys lie between Lo and Hi, newest first, that pass
// Filter (and Match). A row's sort key is Prefix + its id, a UUID; the id
// is the position a cursor carries.
type Listing struct {
	// Index is the GSI read, "" for the table; PKAttr and SKAttr are the
	// key attributes of what is read.
	Index          string
	PKAttr, SKAttr string
	// PK is the partition, always built from the caller's company: a
	// cursor carries only an id within it.
	PK string
	// Prefix starts every row's sort key; Lo and Hi bound the sort keys
	// read (BETWEEN), Lo ≥ Prefix.
	Prefix, Lo, Hi string
	// Consistent asks for strongly consistent reads (of the table).
	Consistent bool
	// Filter is the FilterExpression every row must pass. With MemberKind
	// set, it must refuse the members (it names the row's item kind).
	Filter Filter
	// TableKey returns, for a GSI, the table key of the row with id, which
	// an ExclusiveStartKey of a GSI needs besides the index's.
	TableKey func(id string) (pk, sk string)
	// KindAttr and MemberKind, when set, tell members: items whose
	// attribute KindAttr is MemberKind, stored under sort keys that extend
	// their row's (row SK + "#…"), which come just before it, newest first,
	// and are returned with it (an event's webhook deliveries).
	KindAttr, MemberKind string
	// Match, when set, is a condition on a row and its members that a
	// FilterExpression cannot state; it is applied in process, and the
	// count and the skip then read the rows (projected to keys, the item
	// kind and MatchAttrs) instead of a Select COUNT.
	Match      func(Row) (bool, error)
	MatchAttrs []string
}

// Row is one item of a list: its id (its sort key without the listing's
// prefix), its item and, for a Listing with members, the member items
// stored under it.
type Row struct {
	ID      string
	Item    map[string]types.AttributeValue
	Members []map[string]types.AttributeValue
}

// ReadPage reads page req of l: its rows, the total of l's rows (counted
// when req has no cursor, else the cursor's) and, when more rows follow, the
// id of the page's last Row. A cursor whose position is not in l is
// page.ErrBadCursor.
func (db *DB) ReadPage(ctx context.Context, l Listing, req page.Request) ([]Row, int, string, error) {
	if req.Page < 1 || req.Limit < 1 {
		return nil, 0, "", fmt.Errorf("store: no page %d of %d items", req.Page, req.Limit)
	}
	after, total := req.After, req.Total
	if after != "" {
		if !l.holds(after) {
			return nil, 0, "", page.ErrBadCursor
		}
	} else {
		n, err := db.count(ctx, l)
		if err != nil {
			return nil, 0, "", err
		}
		total = n
		if skip := req.Skip(); skip > 0 {
			if skip >= total {
				return nil, total, "", nil
			}
			if after, err = db.skip(ctx, l, skip); err != nil || after == "" {
				return nil, total, "", err
			}
		}
	}
	rows := make([]Row, 0, req.Limit+1)
	err := db.scan(ctx, l, after, req.Limit+1, false, func(r Row) bool {
		rows = append(rows, r)
		return len(rows) <= req.Limit
	})
	if err != nil {
		return nil, 0, "", err
	}
	next := ""
	if len(rows) > req.Limit {
		rows = rows[:req.Limit]
		next = rows[req.Limit-1].ID
	}
	return rows, total, next, nil
}

// count returns the number of rows of l: a Select COUNT, or, with Match,
// a projected read of every row.
func (db *DB) count(ctx context.Context, l Listing) (int, error) {
	if l.Match != nil {
		n := 0
		err := db.scan(ctx, l, "", 0, true, func(Row) bool { n++; return true })
		return n, err
	}
	in, err := l.query(db.Table, queryCount)
	if err != nil {
		return 0, err
	}
	return db.CountQuery(ctx, in)
}

// CountQuery runs in, a Select COUNT Query, a maxChunk at a time, and sums
// its pages' counts.
func (db *DB) CountQuery(ctx context.Context, in *dynamodb.QueryInput) (int, error) {
	in.Limit = aws.Int32(maxChunk)
	n := 0
	for {
		out, err := db.Client.Query(ctx, in)
		if err != nil {
			return 0, fmt.Errorf("store: count: %w", err)
		}
		n += int(out.Count)
		if out.LastEvaluatedKey == nil {
			return n, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// skip returns the id of the n-th row of l (from 1), reading keys only, or
// "" when l has fewer rows.
func (db *DB) skip(ctx context.Context, l Listing, n int) (string, error) {
	id, seen := "", 0
	err := db.scan(ctx, l, "", n, true, func(r Row) bool {
		if seen++; seen == n {
			id = r.ID
			return false
		}
		return true
	})
	return id, err
}

// scan calls fn with each row of l after the row with id after ("" from
// the start), newest first, until fn returns false or the range ends. want
// is how many rows the caller means to take (0: all of them). Each Query
// asks DynamoDB to evaluate as many items as should give the rows still
// wanted, at the rate of rows per item seen so far (twice as many as the
// last Query while none matched), at least that many rows and at most
// maxChunk: a dense list reads its page in one Query, a sparse filter does
// not crawl. keysOnly reads only what identifies and matches a row.
func (db *DB) scan(ctx context.Context, l Listing, after string, want int, keysOnly bool, fn func(Row) bool) error {
	shape := queryItems
	if keysOnly {
		shape = queryKeys
	}
	in, err := l.query(db.Table, shape)
	if err != nil {
		return err
	}
	if after != "" {
		in.ExclusiveStartKey = l.startKey(after)
	}
	chunk := maxChunk
	if want > 0 {
		chunk = min(want, maxChunk)
	}
	var members []map[string]types.AttributeValue // read before their row
	evaluated, rows := 0, 0
	for {
		in.Limit = aws.Int32(int32(chunk))
		out, err := db.Client.Query(ctx, in)
		if err != nil {
			return fmt.Errorf("store: list: %w", err)
		}
		evaluated += int(out.ScannedCount)
		for _, item := range out.Items {
			if l.MemberKind != "" && StringAttr(item, l.KindAttr) == l.MemberKind {
				members = append(members, item)
				continue
			}
			sk := StringAttr(item, l.SKAttr)
			r := Row{ID: strings.TrimPrefix(sk, l.Prefix), Item: item}
			for _, m := range members {
				if strings.HasPrefix(StringAttr(m, l.SKAttr), sk+"#") {
					r.Members = append(r.Members, m)
				}
			}
			members = members[:0]
			if l.Match != nil {
				ok, err := l.Match(r)
				if err != nil {
					return err
				}
				if !ok {
					continue
				}
			}
			rows++
			if !fn(r) {
				return nil
			}
		}
		if out.LastEvaluatedKey == nil {
			return nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
		switch {
		case want <= 0:
		case rows == 0:
			chunk = min(chunk*2, maxChunk)
		default:
			need := want - rows
			chunk = min(max(need, (need*evaluated+rows-1)/rows), maxChunk)
		}
	}
}

// TimeRange returns the sort-key bounds, for BETWEEN, of the items keyed
// prefix + a UUID v7 whose time falls in [from, to); a zero time leaves
// that end open.
func TimeRange(prefix string, from, to time.Time) (lo, hi string) {
	lo, hi = prefix, prefix[:len(prefix)-1]+string(prefix[len(prefix)-1]+1)
	if !from.IsZero() {
		lo = prefix + ids.V7Prefix(from.UnixMilli())
	}
	if !to.IsZero() {
		ms := to.UnixMilli()
		if to.After(time.UnixMilli(ms)) {
			ms++
		}
		hi = prefix + ids.V7Prefix(ms)
	}
	return lo, hi
}

// PageOf decodes rows, whose items are Is, into a page of Ts with convert
// (an item type's conversion method, such as ledgerItem.transaction).
func PageOf[I, T any](rows []Row, total int, next string, convert func(I) (T, error)) (page.Result[T], error) {
	items := make([]map[string]types.AttributeValue, len(rows))
	for i, r := range rows {
		items[i] = r.Item
	}
	out, err := DecodeAll(items, convert)
	if err != nil {
		return page.Result[T]{}, err
	}
	return page.Result[T]{Items: out, Total: total, Next: next}, nil
}

// holds reports whether id can be a position in l: a UUID whose sort key
// lies in l's range.
func (l Listing) holds(id string) bool {
	sk := l.Prefix + id
	return ids.IsUUID(id) && sk >= l.Lo && sk <= l.Hi
}

// startKey returns the ExclusiveStartKey that resumes l after the row with
// id.
func (l Listing) startKey(id string) map[string]types.AttributeValue {
	key := map[string]types.AttributeValue{
		l.PKAttr: &types.AttributeValueMemberS{Value: l.PK},
		l.SKAttr: &types.AttributeValueMemberS{Value: l.Prefix + id},
	}
	if l.TableKey != nil {
		pk, sk := l.TableKey(id)
		key["PK"] = &types.AttributeValueMemberS{Value: pk}
		key["SK"] = &types.AttributeValueMemberS{Value: sk}
	}
	return key
}

// queryShape is what a Query of a list returns.
type queryShape int

const (
	queryItems queryShape = iota // rows and members, whole
	queryKeys                    // rows and members, projected to what identifies and matches them
	queryCount                   // the number of rows only
)

// query returns the Query of l's range, newest first, with its filter.
func (l Listing) query(table string, shape queryShape) (*dynamodb.QueryInput, error) {
	f := l.Filter
	if l.MemberKind != "" && (shape == queryItems || shape == queryKeys && l.Match != nil) {
		f.or = &condition{op: "=", attr: l.KindAttr, value: l.MemberKind} // the members come too
	}
	expr, names, values, err := f.build()
	if err != nil {
		return nil, err
	}
	names["#pk"], names["#sk"] = l.PKAttr, l.SKAttr
	values[":pk"] = &types.AttributeValueMemberS{Value: l.PK}
	values[":lo"] = &types.AttributeValueMemberS{Value: l.Lo}
	values[":hi"] = &types.AttributeValueMemberS{Value: l.Hi}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(table),
		KeyConditionExpression:    aws.String("#pk = :pk AND #sk BETWEEN :lo AND :hi"),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
		ScanIndexForward:          aws.Bool(false),
	}
	if expr != "" {
		in.FilterExpression = aws.String(expr)
	}
	if l.Index != "" {
		in.IndexName = aws.String(l.Index)
	} else if l.Consistent {
		in.ConsistentRead = aws.Bool(true)
	}
	switch shape {
	case queryCount:
		in.Select = types.SelectCount
	case queryKeys:
		projected := []string{"#sk"}
		if f.or != nil {
			names["#ptype"] = l.KindAttr
			projected = append(projected, "#ptype")
		}
		for i, a := range l.MatchAttrs {
			n := "#p" + strconv.Itoa(i)
			names[n] = a
			projected = append(projected, n)
		}
		in.ProjectionExpression = aws.String(strings.Join(projected, ", "))
	}
	return in, nil
}
