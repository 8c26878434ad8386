package moneystore

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/store"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
	"payments/pkg/timestamp"
	"payments/pkg/wallets"
)

var _ wallets.Store = (*Wallets)(nil)

// Wallets stores wallets and their ledger. In the company partition
// (COMPANY#<id>):
//
//   - WALLET#<wallet id>: the wallet, with its balances in minor units and
//     a version that every write increments;
//   - WALLETPAIR#<currency>#<country>: the claim that makes the pair unique;
//   - WTX#<uuid v7>: a ledger entry, also indexed on GSI1 by wallet
//     (GSI1PK COMPANY#<id>#WALLET#<wallet id>, GSI1SK WTX#<uuid v7>);
//   - CREDITREF#<reference>: the claim of a sandbox credit reference;
//   - FUNDREF#<reference>: the claim of a funding's reference (funds.go).
//
// Outside it, WALLETREF#<wallet id> maps a wallet to its company, and
// FUNDINGREF#<id> a funding to its company, for the operator console. The
// attribute "type" names the kind of item everywhere ("wallet",
// "wallet_tx", …); a ledger entry's own type (FUND, …) is "tx_type".
type Wallets struct{ db *store.DB }

// NewWallets returns the wallets store on db.
func NewWallets(db *store.DB) *Wallets { return &Wallets{db: db} }

// walletItem is a wallet as stored.
type walletItem struct {
	PK               string `dynamodbav:"PK"`
	SK               string `dynamodbav:"SK"`
	Type             string `dynamodbav:"type"`
	ID               string `dynamodbav:"id"`
	CompanyID        string `dynamodbav:"company_id"`
	Currency         string `dynamodbav:"currency"`
	Country          string `dynamodbav:"country"`
	CountryISOCode   string `dynamodbav:"country_iso_code"`
	CountryPhoneCode string `dynamodbav:"country_phone_code"`
	PayinBalance     int64  `dynamodbav:"payin_balance"`
	PayoutBalance    int64  `dynamodbav:"payout_balance"`
	PayoutReserved   int64  `dynamodbav:"payout_reserved"`
	PayoutAvailable  int64  `dynamodbav:"payout_available"`
	IsActive         bool   `dynamodbav:"is_active"`
	Version          int64  `dynamodbav:"version"`
	CreatedAt        string `dynamodbav:"created_at"`
	UpdatedAt        string `dynamodbav:"updated_at"`
}

// walletPairItem claims a (currency, country) pair for one wallet.
type walletPairItem struct {
	PK       string `dynamodbav:"PK"`
	SK       string `dynamodbav:"SK"`
	Type     string `dynamodbav:"type"`
	WalletID string `dynamodbav:"wallet_id"`
}

// walletRefItem maps a wallet id to its company.
type walletRefItem struct {
	PK        string `dynamodbav:"PK"`
	SK        string `dynamodbav:"SK"`
	Type      string `dynamodbav:"type"`
	WalletID  string `dynamodbav:"wallet_id"`
	CompanyID string `dynamodbav:"company_id"`
}

func newWalletItem(w wallets.Wallet) walletItem {
	return walletItem{
		PK:               schema.CompanyPK(w.CompanyID),
		SK:               schema.WalletSK(w.ID),
		Type:             schema.KindWallet,
		ID:               w.ID,
		CompanyID:        w.CompanyID,
		Currency:         w.Currency,
		Country:          w.Country,
		CountryISOCode:   w.CountryISOCode,
		CountryPhoneCode: w.CountryPhoneCode,
		PayinBalance:     w.PayinBalance,
		PayoutBalance:    w.PayoutBalance,
		PayoutReserved:   w.PayoutReserved,
		PayoutAvailable:  w.PayoutAvailable,
		IsActive:         w.IsActive,
		Version:          w.Version,
		CreatedAt:        timestamp.Format(w.CreatedAt),
		UpdatedAt:        timestamp.Format(w.UpdatedAt),
	}
}

func (it walletItem) wallet() (wallets.Wallet, error) {
	created, err := timestamp.Parse(it.CreatedAt)
	if err != nil {
		return wallets.Wallet{}, fmt.Errorf("store: wallet %s created_at: %w", it.ID, err)
	}
	updated, err := timestamp.Parse(it.UpdatedAt)
	if err != nil {
		return wallets.Wallet{}, fmt.Errorf("store: wallet %s updated_at: %w", it.ID, err)
	}
	return wallets.Wallet{
		ID:               it.ID,
		CompanyID:        it.CompanyID,
		Currency:         it.Currency,
		Country:          it.Country,
		CountryISOCode:   it.CountryISOCode,
		CountryPhoneCode: it.CountryPhoneCode,
		PayinBalance:     it.PayinBalance,
		PayoutBalance:    it.PayoutBalance,
		PayoutReserved:   it.PayoutReserved,
		PayoutAvailable:  it.PayoutAvailable,
		IsActive:         it.IsActive,
		Version:          it.Version,
		CreatedAt:        created,
		UpdatedAt:        updated,
	}, nil
}

// CreateWallet writes the wallet, its pair claim and its wallet id lookup in
// one transaction, each conditioned on being new: a taken pair is
// wallets.ErrExists.
func (s *Wallets) CreateWallet(ctx context.Context, w wallets.Wallet) error {
	wallet, err := attributevalue.MarshalMap(newWalletItem(w))
	if err != nil {
		return fmt.Errorf("store: marshal wallet: %w", err)
	}
	pair, err := attributevalue.MarshalMap(walletPairItem{
		PK: schema.CompanyPK(w.CompanyID), SK: schema.WalletPairSK(w.Currency, w.CountryISOCode),
		Type: schema.KindWalletPair, WalletID: w.ID,
	})
	if err != nil {
		return fmt.Errorf("store: marshal wallet pair: %w", err)
	}
	ref, err := attributevalue.MarshalMap(walletRefItem{
		PK: schema.WalletRefPK(w.ID), SK: schema.WalletRefSK, Type: schema.KindWalletRef, WalletID: w.ID, CompanyID: w.CompanyID,
	})
	if err != nil {
		return fmt.Errorf("store: marshal wallet ref: %w", err)
	}
	t := &store.Txn{}
	t.Add(schema.WalletItem, s.putNew(wallet))
	t.Add("pair", s.putNew(pair))
	t.Add("wallet_ref", s.putNew(ref))
	return s.db.CommitOnce(ctx, "create wallet "+w.ID, t, func(_ context.Context, c dynamo.Cancellation) error {
		if c.Failed("pair") {
			return wallets.ErrExists
		}
		return nil
	})
}

// putNew returns a transaction item that puts item on the condition that no
// item has its key.
func (s *Wallets) putNew(item map[string]types.AttributeValue) types.TransactWriteItem {
	return types.TransactWriteItem{Put: &types.Put{
		TableName:           aws.String(s.db.Table),
		Item:                item,
		ConditionExpression: aws.String("attribute_not_exists(PK)"),
	}}
}

// GetWallet reads a wallet of the company, strongly consistent.
func (s *Wallets) GetWallet(ctx context.Context, companyID, walletID string) (wallets.Wallet, error) {
	var it walletItem
	if err := s.db.Get(ctx, "wallet "+walletID, schema.CompanyPK(companyID), schema.WalletSK(walletID), &it, wallets.ErrNotFound); err != nil {
		return wallets.Wallet{}, err
	}
	return it.wallet()
}

// WalletIDFor returns the id of the company's wallet of (currency,
// countryISO), read from the pair's claim, strongly consistent;
// wallets.ErrNotFound when the company has none. A claim is never deleted
// or rewritten, so the answer never changes once there is one.
func (s *Wallets) WalletIDFor(ctx context.Context, companyID, currency, countryISO string) (string, error) {
	var it walletPairItem
	if err := s.db.Get(ctx, "wallet of "+currency+" "+countryISO, schema.CompanyPK(companyID), schema.WalletPairSK(currency, countryISO), &it, wallets.ErrNotFound); err != nil {
		return "", err
	}
	return it.WalletID, nil
}

// ListWallets returns every wallet of the company, strongly consistent, in
// key order.
func (s *Wallets) ListWallets(ctx context.Context, companyID string) ([]wallets.Wallet, error) {
	items, err := s.query(ctx, &dynamodb.QueryInput{
		TableName:              aws.String(s.db.Table),
		KeyConditionExpression: aws.String("PK = :pk AND begins_with(SK, :prefix)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk":     &types.AttributeValueMemberS{Value: schema.CompanyPK(companyID)},
			":prefix": &types.AttributeValueMemberS{Value: schema.WalletSKPrefix},
		},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("store: list wallets: %w", err)
	}
	return dynamo.DecodeAll(items, walletItem.wallet)
}

// WalletCompany reads the wallet id lookup, strongly consistent.
func (s *Wallets) WalletCompany(ctx context.Context, walletID string) (string, error) {
	var it walletRefItem
	if err := s.db.Get(ctx, "wallet ref "+walletID, schema.WalletRefPK(walletID), schema.WalletRefSK, &it, wallets.ErrNotFound); err != nil {
		return "", err
	}
	return it.CompanyID, nil
}

// query runs in through every page and returns all the items.
func (s *Wallets) query(ctx context.Context, in *dynamodb.QueryInput) ([]map[string]types.AttributeValue, error) {
	var items []map[string]types.AttributeValue
	p := dynamodb.NewQueryPaginator(s.db.Client, in)
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		items = append(items, out.Items...)
	}
	return items, nil
}
