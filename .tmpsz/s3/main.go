package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

func main() {
	cfg := aws.Config{Region: "x", Credentials: credentials.NewStaticCredentialsProvider("a", "b", "")}
	lambda.Start(func(ctx context.Context) (string, error) {
		_ = cfg
		c := s3.NewFromConfig(cfg); c.PutObject(ctx, nil); c.GetObject(ctx, nil); c.DeleteObject(ctx, nil)
		return "hi", nil
	})
}
