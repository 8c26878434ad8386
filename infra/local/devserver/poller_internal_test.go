package devserver

import (
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

func TestUniqueMessages(t *testing.T) {
	msg := func(id, count string) sqstypes.Message {
		return sqstypes.Message{MessageId: aws.String(id), Attributes: map[string]string{"ApproximateReceiveCount": count}}
	}
	tests := []struct {
		name string
		in   []sqstypes.Message
		want []string // id:count
	}{
		{"none", nil, nil},
		{"distinct", []sqstypes.Message{msg("a", "1"), msg("b", "1")}, []string{"a:1", "b:1"}},
		{"repeat keeps the last", []sqstypes.Message{msg("a", "1"), msg("b", "1"), msg("a", "2")}, []string{"b:1", "a:2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, m := range uniqueMessages(tt.in) {
				got = append(got, aws.ToString(m.MessageId)+":"+m.Attributes["ApproximateReceiveCount"])
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNewSQSEvent(t *testing.T) {
	e := NewSQSEvent("http://127.0.0.1:9324/123456789012/payouts", []sqstypes.Message{{
		MessageId: aws.String("m1"), ReceiptHandle: aws.String("r1"), Body: aws.String("{}"),
		MessageAttributes: map[string]sqstypes.MessageAttributeValue{"n": {DataType: aws.String("Number"), StringValue: aws.String("5")}},
	}})
	if len(e.Records) != 1 {
		t.Fatalf("%d records", len(e.Records))
	}
	r := e.Records[0]
	if r.EventSourceARN != "arn:aws:sqs:us-east-1:123456789012:payouts" || r.EventSource != "aws:sqs" || r.AWSRegion != "us-east-1" ||
		r.MessageId != "m1" || r.ReceiptHandle != "r1" || r.Body != "{}" || r.Attributes == nil ||
		r.MessageAttributes["n"].DataType != "Number" || aws.ToString(r.MessageAttributes["n"].StringValue) != "5" {
		t.Errorf("unexpected record %+v", r)
	}
}
