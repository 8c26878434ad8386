package documents_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/uuid"

	"payments/infra/local/samples"
	"payments/pkg/documents"
	"payments/pkg/store/storetest"
)

// fixedPresigner is the S3 client's default presigner (the SDK's
// newDefaultV4Signer: SigV4 without escaping the path again), signing at a
// fixed time: the SDK takes the time from a clock tests cannot set.
type fixedPresigner struct{ at time.Time }

func (f fixedPresigner) PresignHTTP(ctx context.Context, creds aws.Credentials, r *http.Request, payloadHash, service, region string,
	_ time.Time, optFns ...func(*v4.SignerOptions)) (string, http.Header, error) {
	signer := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	return signer.PresignHTTP(ctx, creds, r, payloadHash, service, region, f.at, optFns...)
}

// TestLinksAreTheS3ClientsPresignedURLs: a link is, byte for byte, the URL
// the S3 client's PresignGetObject makes for the same bucket, key, time,
// credentials (a session token included) and endpoint: virtual-hosted in
// AWS, path-style on the emulator.
func TestLinksAreTheS3ClientsPresignedURLs(t *testing.T) {
	at := time.Date(2026, 3, 1, 9, 30, 0, 123_000_000, time.UTC)
	cfg := storetest.AWSConfig()
	cfg.Region = "eu-west-1"
	cfg.Credentials = credentials.NewStaticCredentialsProvider("ASIAEXAMPLEKEY000001", "secret/with+chars", "session-token/with=chars")
	keys := []string{
		"companies/" + uuid.NewString() + "/customers/" + uuid.NewString() + "/id_document_front",
		"companies/c/customers/a b+ç%?#&=;~/id_document_back",
	}
	for _, endpoint := range []string{"", "http://127.0.0.1:4566"} {
		for _, key := range keys {
			for _, ttl := range []time.Duration{15 * time.Minute, time.Second} {
				t.Run(endpoint+" "+key+" "+ttl.String(), func(t *testing.T) {
					links, err := documents.NewLinks(cfg, endpoint, "payments-prod-123456789012-documents")
					if err != nil {
						t.Fatal(err)
					}
					links.Now = func() time.Time { return at }
					got, err := links.DocumentLink(context.Background(), key, ttl)
					if err != nil {
						t.Fatal(err)
					}
					presign := s3.NewPresignClient(documents.NewClient(cfg, endpoint), func(o *s3.PresignOptions) {
						o.Presigner = fixedPresigner{at}
					})
					want, err := presign.PresignGetObject(context.Background(), &s3.GetObjectInput{
						Bucket: &[]string{"payments-prod-123456789012-documents"}[0], Key: &key,
					}, s3.WithPresignExpires(ttl))
					if err != nil {
						t.Fatal(err)
					}
					if got != want.URL {
						t.Fatalf("link\n got %s\nwant %s", got, want.URL)
					}
				})
			}
		}
	}
	t.Run("no credentials", func(t *testing.T) {
		none := cfg
		none.Credentials = nil
		links, err := documents.NewLinks(none, "", "b")
		if err != nil {
			t.Fatal(err)
		}
		if u, err := links.DocumentLink(context.Background(), "k", time.Minute); err == nil {
			t.Fatalf("DocumentLink without credentials = %s", u)
		}
	})
	if _, err := documents.NewLinks(cfg, "::not a url", "b"); err == nil {
		t.Error("NewLinks with a malformed endpoint: no error")
	}
}

// TestDocumentLink: against the S3 emulator, a link reads the document it
// names byte for byte, without credentials, with the content type it was
// stored with; a link to a key never put reads nothing.
func TestDocumentLink(t *testing.T) {
	ctx := context.Background()
	client, bucket := storetest.S3Client(t), storetest.NewBucket(t)
	links, err := documents.NewLinks(storetest.AWSConfig(), storetest.S3Endpoint(t), bucket)
	if err != nil {
		t.Fatal(err)
	}
	key := "companies/" + uuid.NewString() + "/customers/" + uuid.NewString() + "/id_document_front"
	if err := documents.New(client, bucket).PutDocument(ctx, key, "image/png", samples.PNG()); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, key string
		ttl       time.Duration
		status    int
	}{
		{"the document", key, 15 * time.Minute, http.StatusOK},
		{"a key never put", "companies/" + uuid.NewString() + "/nothing", 15 * time.Minute, http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			link, err := links.DocumentLink(ctx, tt.key, tt.ttl)
			if err != nil {
				t.Fatalf("DocumentLink: %v", err)
			}
			u, err := url.Parse(link)
			if err != nil || u.Query().Get("X-Amz-Expires") != strconv.Itoa(int(tt.ttl/time.Second)) || u.Query().Get("X-Amz-Signature") == "" {
				t.Fatalf("link %s is not pre-signed for %v", link, tt.ttl)
			}
			res, err := http.Get(link)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			if res.StatusCode != tt.status {
				t.Fatalf("GET the link: %d %s, want %d", res.StatusCode, b, tt.status)
			}
			if tt.status == http.StatusOK && (!bytes.Equal(b, samples.PNG()) || res.Header.Get("Content-Type") != "image/png") {
				t.Fatalf("the link reads %d bytes of %s, not the PNG", len(b), res.Header.Get("Content-Type"))
			}
		})
	}
}
