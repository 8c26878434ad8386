package stack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	cip "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"

	"payments/pkg/identity/cognitopool"
	"payments/pkg/queue"
	"payments/pkg/store"
)

// AWSConfig returns the AWS configuration for the emulators: static
// credentials and the local region. Clients take their endpoint from the
// Stack.
func AWSConfig() aws.Config {
	return aws.Config{
		Region:      Region,
		Credentials: credentials.NewStaticCredentialsProvider(AccessKey, SecretKey, ""),
	}
}

// SQSClient returns an SQS client for the emulator at endpoint.
func SQSClient(endpoint string) *sqs.Client {
	return queue.NewClient(AWSConfig(), endpoint)
}

// CreateTable creates the service's table named name in DynamoDB Local at
// endpoint from store.TableDefinition, with TTL on, unless it exists.
func CreateTable(ctx context.Context, endpoint, name string) error {
	return store.New(store.NewClient(AWSConfig(), endpoint), name).CreateTable(ctx)
}

// UserPoolName is the name of the local stack's user pool.
const UserPoolName = "payments-local-dashboard"

// CognitoClient returns a Cognito user pools client for cognito-local at
// endpoint.
func CognitoClient(endpoint string) *cip.Client {
	return cognitopool.NewClient(AWSConfig(), endpoint)
}

// CreateUserPool creates the dashboard's user pool named name in
// cognito-local at endpoint, with its groups and app client, unless they
// exist (cognitopool.Provision), and returns their ids.
func CreateUserPool(ctx context.Context, endpoint, name string) (cognitopool.Resources, error) {
	return cognitopool.Provision(ctx, CognitoClient(endpoint), name)
}

// Queue is an SQS queue the stack creates, as the template declares it.
type Queue struct {
	Name                   string // the queue's name, e.g. "payouts"
	DLQ                    string // the name of its dead-letter queue, or ""
	MaxReceiveCount        int    // receives before a message moves to the DLQ
	VisibilityTimeout      int    // seconds; 0 leaves SQS's default (30)
	MessageRetentionPeriod int    // seconds; 0 leaves SQS's default (4 days)
}

// QueueURLEnv returns the environment variable that carries a queue's URL
// to the functions: "payouts" → PAYOUTS_QUEUE_URL,
// "payouts-dlq" → PAYOUTS_DLQ_QUEUE_URL.
func QueueURLEnv(name string) string {
	return strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(name)) + "_QUEUE_URL"
}

// QueueARN returns the ARN the emulator gives the queue named name.
func QueueARN(name string) string {
	return "arn:aws:sqs:" + Region + ":" + AccountID + ":" + name
}

// CreateQueues creates queues, each dead-letter queue before the queues that
// redrive to it, and returns each queue's URL by name. In the emulator each
// queue is named prefix+Name (tests use a unique prefix). An existing queue
// with the same attributes is kept.
func CreateQueues(ctx context.Context, client *sqs.Client, prefix string, queues []Queue) (map[string]string, error) {
	byName := make(map[string]Queue, len(queues))
	for _, q := range queues {
		byName[q.Name] = q
	}
	urls := make(map[string]string, len(queues))
	var create func(q Queue, depth int) error
	create = func(q Queue, depth int) error {
		if _, ok := urls[q.Name]; ok {
			return nil
		}
		if depth > len(queues) {
			return fmt.Errorf("queue %s: dead-letter queues form a cycle", q.Name)
		}
		attrs := map[string]string{}
		if q.VisibilityTimeout > 0 {
			attrs[string(sqstypes.QueueAttributeNameVisibilityTimeout)] = strconv.Itoa(q.VisibilityTimeout)
		}
		if q.MessageRetentionPeriod > 0 {
			attrs[string(sqstypes.QueueAttributeNameMessageRetentionPeriod)] = strconv.Itoa(q.MessageRetentionPeriod)
		}
		if q.DLQ != "" {
			if q.MaxReceiveCount <= 0 {
				return fmt.Errorf("queue %s: a dead-letter queue needs maxReceiveCount > 0", q.Name)
			}
			dlq, ok := byName[q.DLQ]
			if !ok {
				dlq = Queue{Name: q.DLQ}
			}
			if err := create(dlq, depth+1); err != nil {
				return err
			}
			policy, _ := json.Marshal(map[string]string{
				"deadLetterTargetArn": QueueARN(prefix + q.DLQ),
				"maxReceiveCount":     strconv.Itoa(q.MaxReceiveCount),
			})
			attrs[string(sqstypes.QueueAttributeNameRedrivePolicy)] = string(policy)
		}
		out, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(prefix + q.Name), Attributes: attrs})
		if err != nil {
			return fmt.Errorf("create queue %s: %w", q.Name, err)
		}
		urls[q.Name] = aws.ToString(out.QueueUrl)
		return nil
	}
	for _, q := range queues {
		if err := create(q, 0); err != nil {
			return nil, err
		}
	}
	return urls, nil
}

// WaitReady waits until DynamoDB Local, the SQS emulator and cognito-local
// answer API calls, not only connections.
func (s *Stack) WaitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	ddb := store.NewClient(AWSConfig(), s.DynamoDBEndpoint)
	q := SQSClient(s.SQSEndpoint)
	cognito := CognitoClient(s.CognitoEndpoint)
	var err error
	for {
		if _, err = ddb.ListTables(ctx, nil); err == nil {
			if _, err = q.ListQueues(ctx, &sqs.ListQueuesInput{}); err == nil {
				if _, err = cognito.ListUserPools(ctx, &cip.ListUserPoolsInput{MaxResults: aws.Int32(1)}); err == nil {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return errors.Join(fmt.Errorf("emulators not ready: %w", ctx.Err()), err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
