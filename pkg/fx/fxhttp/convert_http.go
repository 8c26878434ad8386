package fxhttp

import (
	"context"
	"encoding/json"
	"net/http"

	"payments/pkg/fx"
	"payments/pkg/httpapi"
	"payments/pkg/money"
	"payments/pkg/wallets/walletshttp"
)

// conversionResponse is the data of POST
// /partner/wallets/xaf-usd-conversion and of its preview: amount in
// currency, the other amounts in USD; usd_balance_after is the USD
// wallet's payout balance.
type conversionResponse struct {
	ConversionID            *string     `json:"conversion_id"`
	SourceWalletID          string      `json:"source_wallet_id"`
	USDWalletID             string      `json:"usd_wallet_id"`
	Amount                  json.Number `json:"amount"`
	Currency                string      `json:"currency"`
	Rate                    json.Number `json:"rate"`
	ExchangeRateID          string      `json:"exchangeRateId"`
	ConvertedAmount         json.Number `json:"converted_amount"`
	FeeAmount               json.Number `json:"fee_amount"`
	CreditedAmount          json.Number `json:"credited_amount"`
	SourcePayinBalanceAfter json.Number `json:"source_payin_balance_after"`
	USDBalanceAfter         json.Number `json:"usd_balance_after"`
}

func newConversionResponse(c fx.Conversion) conversionResponse {
	q, usd := c.Quote, c.USD.Currency
	out := conversionResponse{
		SourceWalletID: c.Source.ID, USDWalletID: c.USD.ID,
		Amount: money.JSON(q.Amount, c.Source.Currency), Currency: c.Source.Currency,
		Rate: json.Number(q.Rate.Value.String()), ExchangeRateID: q.Rate.ID,
		ConvertedAmount: money.JSON(q.Converted, usd), FeeAmount: money.JSON(q.Fee, usd), CreditedAmount: money.JSON(q.Net, usd),
		SourcePayinBalanceAfter: money.JSON(c.Source.PayinBalance, c.Source.Currency),
		USDBalanceAfter:         money.JSON(c.USD.PayoutBalance, usd),
	}
	if c.ID != "" {
		out.ConversionID = &c.ID
	}
	return out
}

// depositResponse is the data of POST /wallets/deposit: amount, fee_amount
// and total_amount in the source's currency, converted_amount in the
// destination's, and both wallets after the deposit.
type depositResponse struct {
	DepositID         string                     `json:"deposit_id"`
	Amount            json.Number                `json:"amount"`
	FeeAmount         json.Number                `json:"fee_amount"`
	TotalAmount       json.Number                `json:"total_amount"`
	Rate              json.Number                `json:"rate"`
	ExchangeRateID    string                     `json:"exchangeRateId"`
	ConvertedAmount   json.Number                `json:"converted_amount"`
	SourceWallet      walletshttp.WalletResponse `json:"source_wallet"`
	DestinationWallet walletshttp.WalletResponse `json:"destination_wallet"`
}

// ConversionRoutes registers the company routes that move money between
// its wallets at its rates: POST /partner/wallets/xaf-usd-conversion, POST
// /partner/wallets/preview-conversion and POST /wallets/deposit.
func ConversionRoutes(rt *httpapi.Router, c *fx.Converter) {
	rt.Handle("POST /partner/wallets/xaf-usd-conversion", conversionHandler(c.Convert, "Conversion completed successfully"), httpapi.Money())
	rt.Handle("POST /partner/wallets/preview-conversion", conversionHandler(c.PreviewConversion, "Conversion previewed successfully"))
	rt.Handle("POST /wallets/deposit", depositHandler(c), httpapi.Money())
}

// depositHandler answers a deposit made by c.
func depositHandler(c *fx.Converter) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		cid, err := httpapi.Company(r)
		if err != nil {
			return err
		}
		var in fx.DepositInput
		if err := httpapi.Decode(r, &in); err != nil {
			return err
		}
		d, err := c.Deposit(r.Context(), cid, in)
		if err != nil {
			return err
		}
		src, dst := d.Source.Currency, d.Destination.Currency
		httpapi.Respond(w, http.StatusOK, "Deposit completed successfully", depositResponse{
			DepositID: d.ID, Amount: money.JSON(d.Amount, src), FeeAmount: money.JSON(d.Fee, src),
			TotalAmount: money.JSON(d.Total(), src), Rate: json.Number(d.Rate.Value.String()), ExchangeRateID: d.Rate.ID,
			ConvertedAmount: money.JSON(d.Converted, dst),
			SourceWallet:    walletshttp.NewWalletResponse(d.Source), DestinationWallet: walletshttp.NewWalletResponse(d.Destination),
		})
		return nil
	}
}

// conversionHandler answers a conversion or its preview, made by do,
// with message.
func conversionHandler(do func(context.Context, string, fx.ConversionInput) (fx.Conversion, error), message string) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		cid, err := httpapi.Company(r)
		if err != nil {
			return err
		}
		var in fx.ConversionInput
		if err := httpapi.Decode(r, &in); err != nil {
			return err
		}
		conv, err := do(r.Context(), cid, in)
		if err != nil {
			return err
		}
		httpapi.Respond(w, http.StatusOK, message, newConversionResponse(conv))
		return nil
	}
}
