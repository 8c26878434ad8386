package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
"github.com/aws/aws-sdk-go-v2/service/sqs"
"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

func main() {
	cfg := aws.Config{Region: "x", Credentials: credentials.NewStaticCredentialsProvider("a", "b", "")}
	lambda.Start(func(ctx context.Context) (string, error) {
		_ = cfg
		d := dynamodb.NewFromConfig(cfg); d.GetItem(ctx, nil); d.TransactWriteItems(ctx, nil); d.Query(ctx, nil); d.PutItem(ctx, nil); d.UpdateItem(ctx, nil); q := sqs.NewFromConfig(cfg); q.SendMessage(ctx, nil); m := secretsmanager.NewFromConfig(cfg); m.GetSecretValue(ctx, nil)
		return "hi", nil
	})
}
