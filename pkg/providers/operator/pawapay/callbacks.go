package pawapay

import (
	"crypto"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"payments/pkg/ids"
	"payments/pkg/providers/operator"
)

// Sentinels of Verify.
var (
	// ErrSignature reports a callback whose signature or Content-Digest is
	// missing or does not verify.
	ErrSignature = fmt.Errorf("pawapay: callback signature refused: %w", operator.ErrCallbackSignature)
	// ErrStale reports a callback signed longer ago than the accepted age,
	// or in the future beyond the clock skew allowed.
	ErrStale = fmt.Errorf("pawapay: callback signature out of date: %w", operator.ErrCallbackSignature)
	// ErrMalformed reports a signed callback whose body is not a payout or
	// deposit in a final status.
	ErrMalformed = fmt.Errorf("pawapay: %w", operator.ErrCallbackMalformed)
)

// clockSkew is how far in the future a signature may be dated.
const clockSkew = time.Minute

// mustCover are the components a callback's signature must cover: the
// request itself (so that a callback signed for another URL never verifies
// here), the body (through its digest) and the signing time; pawaPay
// signs them all (docs/providers.md).
var mustCover = []string{"@method", "@authority", "@path", "content-digest", "signature-date"}

// Callback is a verified callback: the final state of one of our payouts
// (Kind Payout, reference its payoutId) or collections (Collection,
// depositId), and the company its metadata names.
type Callback = operator.Callback

// Callbacks verifies the callbacks pawaPay signs with the key whose public
// half it holds.
type Callbacks struct {
	key    crypto.PublicKey
	maxAge time.Duration
	now    func() time.Time
}

// NewCallbacks returns a verifier of callbacks signed with the private key
// of publicKeyPEM (a PKIX "PUBLIC KEY": EC P-256, P-384 or RSA), accepting
// signatures at most maxAge old; now nil is time.Now.
func NewCallbacks(publicKeyPEM []byte, maxAge time.Duration, now func() time.Time) (*Callbacks, error) {
	block, _ := pem.Decode(publicKeyPEM)
	if block == nil || block.Type != "PUBLIC KEY" {
		return nil, errors.New("pawapay: callbacks key: not a PEM PUBLIC KEY")
	}
	key, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("pawapay: callbacks key: %w", err)
	}
	if maxAge <= 0 {
		return nil, errors.New("pawapay: callbacks: maxAge must be positive")
	}
	if now == nil {
		now = time.Now
	}
	return &Callbacks{key: key, maxAge: maxAge, now: now}, nil
}

// Verify checks a callback pawaPay posted to path with method (the HTTP
// layer passes them and the request's headers, with its Host set as a
// header since @authority may be covered), and returns what it reports.
// Errors wrap ErrSignature, ErrStale or ErrMalformed; the body is read only
// once its signature holds.
func (c *Callbacks) Verify(method, path string, header http.Header, body []byte) (Callback, error) {
	digest := header.Get("Content-Digest")
	if digest == "" || header.Get("Signature") == "" || header.Get("Signature-Input") == "" {
		return Callback{}, fmt.Errorf("%w: Signature, Signature-Input and Content-Digest are required", ErrSignature)
	}
	if err := checkDigest(digest, body); err != nil {
		return Callback{}, fmt.Errorf("%w: %v", ErrSignature, err)
	}
	in, err := c.verifySignature(method, path, header)
	if err != nil {
		return Callback{}, err
	}
	if err := c.fresh(in, header.Get("Signature-Date")); err != nil {
		return Callback{}, err
	}
	return parseCallback(body)
}

// verifySignature finds a member of Signature-Input whose signature
// verifies and covers mustCover.
func (c *Callbacks) verifySignature(method, path string, header http.Header) (sigInput, error) {
	inputs, err := parseSignatureInput(header.Get("Signature-Input"))
	if err != nil {
		return sigInput{}, fmt.Errorf("%w: %v", ErrSignature, err)
	}
	sigs, err := parseByteSequences(header.Get("Signature"))
	if err != nil {
		return sigInput{}, fmt.Errorf("%w: Signature: %v", ErrSignature, err)
	}
	problem := errors.New("no signature matches Signature-Input")
	for _, in := range inputs {
		sig, ok := sigs[in.label]
		if !ok {
			continue
		}
		if missing := slices.IndexFunc(mustCover, func(m string) bool { return !slices.Contains(in.components, m) }); missing >= 0 {
			problem = fmt.Errorf("the signature does not cover %s", mustCover[missing])
			continue
		}
		base, err := signatureBase(in, method, path, header)
		if err != nil {
			problem = err
			continue
		}
		if err := verifySignature(c.key, in.params["alg"], base, sig); err != nil {
			problem = err
			continue
		}
		return in, nil
	}
	return sigInput{}, fmt.Errorf("%w: %v", ErrSignature, problem)
}

// fresh checks the signing time (the created parameter, else the
// Signature-Date header, both signed) and the expires parameter.
func (c *Callbacks) fresh(in sigInput, signatureDate string) error {
	now := c.now()
	var signed time.Time
	if v, ok := in.params["created"]; ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("%w: created is not a timestamp", ErrSignature)
		}
		signed = time.Unix(n, 0)
	} else {
		t, err := parseSignatureDate(signatureDate)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrSignature, err)
		}
		signed = t
	}
	if now.Sub(signed) > c.maxAge {
		return fmt.Errorf("%w: signed %v ago", ErrStale, now.Sub(signed).Round(time.Second))
	}
	if signed.Sub(now) > clockSkew {
		return fmt.Errorf("%w: signed %v in the future", ErrStale, signed.Sub(now).Round(time.Second))
	}
	if v, ok := in.params["expires"]; ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("%w: expires is not a timestamp", ErrSignature)
		}
		if now.After(time.Unix(n, 0)) {
			return fmt.Errorf("%w: the signature has expired", ErrStale)
		}
	}
	return nil
}

// parseSignatureDate reads Signature-Date: an RFC 3339 time, or Unix
// seconds.
func parseSignatureDate(v string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.Unix(n, 0), nil
	}
	return time.Time{}, errors.New("the Signature-Date header is not a time")
}

// parseCallback reads a callback's body: a payout or a deposit in one of
// its statuses, final (COMPLETED, FAILED) or not (PROCESSING, which
// pawaPay sends for a deposit awaiting the payer's authorisation).
func parseCallback(body []byte) (Callback, error) {
	var p payment
	if err := json.Unmarshal(body, &p); err != nil {
		return Callback{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	cb := Callback{CompanyID: metadataField(p.Metadata, companyMetadataField)}
	if !ids.IsUUID(cb.CompanyID) {
		return Callback{}, fmt.Errorf("%w: its metadata names no company", ErrMalformed)
	}
	switch {
	case p.PayoutID != "" && p.DepositID == "":
		cb.Kind, cb.Reference = operator.Payout, p.PayoutID
	case p.DepositID != "" && p.PayoutID == "":
		cb.Kind, cb.Reference = operator.Collection, p.DepositID
	default:
		return Callback{}, fmt.Errorf("%w: one of payoutId and depositId is required", ErrMalformed)
	}
	var failure string
	if p.FailureReason != nil {
		failure = p.FailureReason.FailureCode
	}
	state, reason, o := interpret(p.Status, failure)
	if o.err != nil || o.ask || p.Status == "REJECTED" {
		return Callback{}, fmt.Errorf("%w: status %q is not a payment's status", ErrMalformed, p.Status)
	}
	cb.Result = operator.Result{OrderID: cb.Reference, State: state, Reason: reason, Raw: json.RawMessage(body)}
	return cb, nil
}
