package documents

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/smithy-go/encoding/httpbinding"

	"payments/pkg/customers"
)

var _ customers.Linker = (*Links)(nil)

// Links makes the operator console's links to the documents of a bucket:
// S3 pre-signed GET URLs, signed (Signature Version 4, query parameters)
// with the function's credentials, exactly as the S3 client's
// PresignGetObject makes them (a test holds them equal) but without
// linking the S3 client, which would take the admin function past its
// size budget (docs/footprint.md).
type Links struct {
	creds    aws.CredentialsProvider
	region   string
	bucket   string
	endpoint *url.URL // the S3 emulator, addressed path-style; nil in AWS
	signer   *v4.Signer
	// Now returns the signing time; tests may replace it.
	Now func() time.Time
}

// NewLinks returns the links to the documents of bucket, signed with the
// credentials and in the region of cfg; endpoint is the S3 emulator's URL,
// or "" in AWS (virtual-hosted addresses, as the S3 client uses).
func NewLinks(cfg aws.Config, endpoint, bucket string) (*Links, error) {
	l := &Links{
		creds: cfg.Credentials, region: cfg.Region, bucket: bucket, Now: time.Now,
		signer: v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true }), // S3 signs the path as sent
	}
	if endpoint != "" {
		u, err := url.Parse(endpoint)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("documents: S3 endpoint %q is not a URL", endpoint)
		}
		l.endpoint = u
	}
	return l, nil
}

// DocumentLink returns a pre-signed URL that GETs the document stored under
// key for ttl, signed with the caller's credentials: whoever holds it reads
// the document without them until it expires (or until the credentials
// do, for temporary ones).
func (l *Links) DocumentLink(ctx context.Context, key string, ttl time.Duration) (string, error) {
	if l.creds == nil {
		return "", fmt.Errorf("documents: link document %s: no credentials", key)
	}
	creds, err := l.creds.Retrieve(ctx)
	if err != nil {
		return "", fmt.Errorf("documents: link document %s: %w", key, err)
	}
	u := &url.URL{Scheme: "https", Host: l.bucket + ".s3." + l.region + ".amazonaws.com", Path: "/" + key}
	if l.endpoint != nil {
		u = &url.URL{Scheme: l.endpoint.Scheme, Host: l.endpoint.Host, Path: strings.TrimSuffix(l.endpoint.Path, "/") + "/" + l.bucket + "/" + key}
	}
	u.RawPath = httpbinding.EscapePath(u.Path, false)
	u.RawQuery = url.Values{
		"x-id":          {"GetObject"},
		"X-Amz-Expires": {strconv.FormatInt(int64(ttl/time.Second), 10)},
	}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", fmt.Errorf("documents: link document %s: %w", key, err)
	}
	signed, _, err := l.signer.PresignHTTP(ctx, creds, req, "UNSIGNED-PAYLOAD", "s3", l.region, l.Now())
	if err != nil {
		return "", fmt.Errorf("documents: link document %s: %w", key, err)
	}
	return signed, nil
}
