package pawapaysim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
)

// provider is what simulated pawaPay knows of a provider code: its
// currency, its country (ISO 3166 alpha-3), the country's dial code and the
// decimals its amounts may carry (pawaPay's providers page).
type provider struct {
	currency, country, dial string
	decimals                int
}

// providers are the provider codes simulated pawaPay serves.
var providers = map[string]provider{
	"MTN_MOMO_CMR":      {"XAF", "CMR", "237", 0},
	"ORANGE_CMR":        {"XAF", "CMR", "237", 0},
	"AIRTEL_GAB":        {"XAF", "GAB", "241", 0},
	"MTN_MOMO_COG":      {"XAF", "COG", "242", 0},
	"AIRTEL_COG":        {"XAF", "COG", "242", 0},
	"MTN_MOMO_CIV":      {"XOF", "CIV", "225", 0},
	"ORANGE_CIV":        {"XOF", "CIV", "225", 0},
	"WAVE_CIV":          {"XOF", "CIV", "225", 0},
	"ORANGE_SEN":        {"XOF", "SEN", "221", 0},
	"FREE_SEN":          {"XOF", "SEN", "221", 0},
	"WAVE_SEN":          {"XOF", "SEN", "221", 0},
	"ORANGE_BFA":        {"XOF", "BFA", "226", 0},
	"MOOV_BFA":          {"XOF", "BFA", "226", 0},
	"MTN_MOMO_BEN":      {"XOF", "BEN", "229", 0},
	"MOOV_BEN":          {"XOF", "BEN", "229", 0},
	"VODACOM_MPESA_COD": {"CDF", "COD", "243", 2},
	"AIRTEL_COD":        {"CDF", "COD", "243", 2},
	"ORANGE_COD":        {"CDF", "COD", "243", 2},
}

var (
	uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	// amountPattern is the documented amount: no leading zero but for an
	// amount under one, at most two decimals, trailing zeros permitted
	// ("5", "5.0", "5.55", "0.5"; not "5.", ".5", "00.5", "5.555").
	amountPattern = regexp.MustCompile(`^(0|[1-9][0-9]{0,17})([.][0-9]{1,2})?$`)
	msisdnPattern = regexp.MustCompile(`^[1-9][0-9]{7,14}$`)
	currencyCode  = regexp.MustCompile(`^[A-Z]{3}$`)
)

// rejection is a request pawaPay refuses: its failure code, message and
// the HTTP status the failure codes page gives the code (400 for a
// malformed request, 200 for one pawaPay read but cannot serve).
type rejection struct {
	code, message string
	status        int
}

func (r *rejection) Error() string { return r.code + ": " + r.message }

func missing(field string) *rejection {
	return &rejection{"MISSING_PARAMETER", field + " is required", http.StatusBadRequest}
}

func invalid(field, why string) *rejection {
	return &rejection{"INVALID_PARAMETER", field + " " + why, http.StatusBadRequest}
}

// unservable is a well-formed request the provider cannot serve: answered
// 200 with status REJECTED.
func unservable(code, why string) *rejection {
	return &rejection{code, why, http.StatusOK}
}

// initiation is a valid payout or deposit request, as far as the
// simulation needs it.
type initiation struct {
	id, amount, currency, phone, provider string
	account                               json.RawMessage // recipient or payer as received
	metadata                              []map[string]any
}

// validate checks body against the documented request of a payout (idField
// payoutId, partyField recipient) or a deposit (depositId, payer).
func validate(body []byte, idField, partyField string, optional []string) (initiation, *rejection) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return initiation{}, &rejection{"INVALID_INPUT", "the body is not a JSON object", http.StatusBadRequest}
	}
	known := append([]string{idField, "amount", "currency", partyField, "clientReferenceId", "customerMessage", "metadata"}, optional...)
	for k := range fields {
		if !slices.Contains(known, k) {
			return initiation{}, &rejection{"UNSUPPORTED_PARAMETER", k + " is not a parameter of this request", http.StatusBadRequest}
		}
	}
	var in initiation
	str := func(field string, required bool) (string, *rejection) {
		raw, ok := fields[field]
		if !ok {
			if required {
				return "", missing(field)
			}
			return "", nil
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", invalid(field, "must be a string")
		}
		return s, nil
	}
	var rej *rejection
	if in.id, rej = str(idField, true); rej != nil {
		return in, rej
	}
	if !uuidPattern.MatchString(in.id) {
		return in, invalid(idField, "must be a UUID")
	}
	if in.amount, rej = str("amount", true); rej != nil {
		return in, rej
	}
	if !amountPattern.MatchString(in.amount) {
		return in, invalid("amount", "is not of the documented amount format")
	}
	if in.currency, rej = str("currency", true); rej != nil {
		return in, rej
	}
	if !currencyCode.MatchString(in.currency) {
		return in, invalid("currency", "must be an ISO 4217 code")
	}
	for _, f := range []string{"clientReferenceId", "customerMessage", "preAuthorisationCode"} {
		if v, rej := str(f, false); rej != nil {
			return in, rej
		} else if f == "customerMessage" && v != "" && (len(v) < 4 || len(v) > 22) {
			return in, invalid(f, "must be 4 to 22 characters")
		}
	}
	if rej := validateParty(fields[partyField], partyField, &in); rej != nil {
		return in, rej
	}
	if raw, ok := fields["metadata"]; ok {
		if rej := validateMetadata(raw, &in); rej != nil {
			return in, rej
		}
	}
	p := providers[in.provider]
	if p.currency != in.currency {
		return in, unservable("INVALID_CURRENCY", "currency is not the currency of provider "+in.provider)
	}
	if _, frac, ok := strings.Cut(in.amount, "."); ok && len(frac) > p.decimals {
		return in, unservable("INVALID_AMOUNT", fmt.Sprintf("amount has more than the %d decimals provider %s takes", p.decimals, in.provider))
	}
	if !strings.HasPrefix(in.phone, p.dial) {
		return in, unservable("INVALID_PHONE_NUMBER", partyField+".accountDetails.phoneNumber is not a number of the provider's country")
	}
	return in, nil
}

// validateParty checks a recipient or payer: {type: MMO, accountDetails:
// {phoneNumber, provider}}.
func validateParty(raw json.RawMessage, field string, in *initiation) *rejection {
	if raw == nil {
		return missing(field)
	}
	var party map[string]json.RawMessage
	if json.Unmarshal(raw, &party) != nil || party == nil {
		return invalid(field, "must be an object")
	}
	for k := range party {
		if k != "type" && k != "accountDetails" {
			return &rejection{"UNSUPPORTED_PARAMETER", field + "." + k + " is not a parameter of this request", http.StatusBadRequest}
		}
	}
	var typ string
	if party["type"] == nil {
		return missing(field + ".type")
	}
	if json.Unmarshal(party["type"], &typ) != nil || typ != "MMO" {
		return invalid(field+".type", "must be MMO")
	}
	if party["accountDetails"] == nil {
		return missing(field + ".accountDetails")
	}
	var details map[string]json.RawMessage
	if json.Unmarshal(party["accountDetails"], &details) != nil || details == nil {
		return invalid(field+".accountDetails", "must be an object")
	}
	for k := range details {
		if k != "phoneNumber" && k != "provider" {
			return &rejection{"UNSUPPORTED_PARAMETER", field + ".accountDetails." + k + " is not a parameter of this request", http.StatusBadRequest}
		}
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"phoneNumber", &in.phone}, {"provider", &in.provider}} {
		if details[f.name] == nil {
			return missing(field + ".accountDetails." + f.name)
		}
		if json.Unmarshal(details[f.name], f.dst) != nil {
			return invalid(field+".accountDetails."+f.name, "must be a string")
		}
	}
	if !msisdnPattern.MatchString(in.phone) {
		return unservable("INVALID_PHONE_NUMBER", field+".accountDetails.phoneNumber must be an MSISDN: digits only, the country code first")
	}
	if _, ok := providers[in.provider]; !ok {
		return unservable("INVALID_PROVIDER", field+".accountDetails.provider is not a provider of pawaPay")
	}
	in.account = raw
	return nil
}

// validateMetadata checks v2 metadata: a list of at most 10 objects, each
// of one field with a string value and, optionally, isPII.
func validateMetadata(raw json.RawMessage, in *initiation) *rejection {
	var items []map[string]any
	if json.Unmarshal(raw, &items) != nil {
		return invalid("metadata", "must be a list of objects")
	}
	if len(items) > 10 {
		return invalid("metadata", "holds at most 10 fields")
	}
	seen := map[string]bool{}
	for i, item := range items {
		fields := 0
		for k, v := range item {
			if k == "isPII" {
				if _, ok := v.(bool); !ok {
					return invalid(fmt.Sprintf("metadata[%d].isPII", i), "must be a boolean")
				}
				continue
			}
			if _, ok := v.(string); !ok {
				return invalid(fmt.Sprintf("metadata[%d].%s", i, k), "must be a string")
			}
			if seen[k] {
				return &rejection{"DUPLICATE_METADATA_FIELD", "metadata field " + k + " is given twice", http.StatusBadRequest}
			}
			seen[k] = true
			fields++
		}
		if fields != 1 {
			return invalid(fmt.Sprintf("metadata[%d]", i), "must hold exactly one field")
		}
	}
	in.metadata = items
	return nil
}
