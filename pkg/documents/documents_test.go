package documents_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/uuid"

	"payments/infra/local/samples"
	"payments/pkg/documents"
	"payments/pkg/store/storetest"
)

// TestDocuments: what PutDocument stores, GetDocument reads back byte for
// byte with its content type kept, and DeleteDocument removes it.
func TestDocuments(t *testing.T) {
	ctx := context.Background()
	bucket, client := storetest.NewBucket(t), storetest.S3Client(t)
	docs := documents.New(client, bucket)
	big := make([]byte, 3<<20) // every byte value, over and over
	for i := range big {
		big[i] = byte(i * 7)
	}
	tests := []struct {
		name        string
		contentType string
		body        []byte
	}{
		{"png", "image/png", samples.PNG()},
		{"pdf", "application/pdf", samples.PDF()},
		{"3 MB", "image/jpeg", append([]byte("\xff\xd8\xff"), big...)},
		{"empty", "application/octet-stream", []byte{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := "companies/" + uuid.NewString() + "/customers/" + uuid.NewString() + "/id_document_front"
			if err := docs.PutDocument(ctx, key, tt.contentType, tt.body); err != nil {
				t.Fatalf("PutDocument: %v", err)
			}
			got, err := docs.GetDocument(ctx, key)
			if err != nil || !bytes.Equal(got, tt.body) {
				t.Fatalf("GetDocument = %d bytes, %v; want the %d put", len(got), err, len(tt.body))
			}
			head, err := client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
			if err != nil {
				t.Fatalf("HeadObject: %v", err)
			}
			if ct := aws.ToString(head.ContentType); ct != tt.contentType || aws.ToInt64(head.ContentLength) != int64(len(tt.body)) {
				t.Fatalf("stored as %s of %d bytes, want %s of %d", ct, aws.ToInt64(head.ContentLength), tt.contentType, len(tt.body))
			}
			if err := docs.DeleteDocument(ctx, key); err != nil {
				t.Fatalf("DeleteDocument: %v", err)
			}
			if got, err := docs.GetDocument(ctx, key); err == nil {
				t.Fatalf("GetDocument after DeleteDocument = %d bytes, no error", len(got))
			}
		})
	}

	t.Run("a key never put", func(t *testing.T) {
		if got, err := docs.GetDocument(ctx, "companies/"+uuid.NewString()+"/nothing"); err == nil {
			t.Fatalf("GetDocument = %d bytes, no error", len(got))
		}
	})
	t.Run("a bucket that does not exist", func(t *testing.T) {
		missing := documents.New(client, "missing-"+storetest.RandomSuffix())
		if err := missing.PutDocument(ctx, "k", "image/png", samples.PNG()); err == nil {
			t.Fatal("PutDocument into a missing bucket: no error")
		}
	})
}
