package stack

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// FindRoot returns the repository root: the nearest folder at or above the
// working directory that holds go.mod.
func FindRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod at or above the working directory")
		}
		dir = parent
	}
}

// DataDirEnv names the variable that moves the data folder of `make run`
// away from the repository's .cache (a test's stack, a second checkout's).
const DataDirEnv = "DATA_DIR"

// DataDir returns the folder where `make run` keeps its data (DynamoDB, S3),
// logs, secrets (SecretFiles), local CA and State: $DATA_DIR made
// absolute, else root/.cache. The installed emulators stay in root/.cache.
func DataDir(root string) (string, error) {
	d := os.Getenv(DataDirEnv)
	if d == "" {
		return filepath.Join(root, ".cache"), nil
	}
	return filepath.Abs(d)
}

// SecretFiles maps each local secret to its file in the data folder, where
// Secret makes it once: the value of NAME where AWS gives a function
// NAME_ARN (see devserver.Resources.Secrets), or of CARD_KEY and
// WEBHOOK_KEY, the local stand-ins of the KMS keys.
var SecretFiles = map[string]string{
	"ADMIN_API_KEY": "admin-api-key",
	// The key of the dashboard's session cookies, made once for the
	// local stack.
	"DASHBOARD_SESSION_KEY": "dashboard-session-key",
	// The local stand-ins of the token keys' KMS keys: P-256 private
	// keys, as 64 hexadecimal characters (auth.LocalKeyFromHex).
	"TOKEN_KEY_A": "token-key-a",
	"TOKEN_KEY_B": "token-key-b",
	"CARD_KEY":    "card-key",
	// The local stand-in of WebhookKey, the KMS key of the webhook
	// signing secrets: a key of its own, as in AWS.
	"WEBHOOK_KEY":           "webhook-key",
	"ISSUER_WEBHOOK_SECRET": "issuer-webhook-secret",
	// The simulated aggregator's token (MODE=production locally): the
	// functions send it, the simulated pawaPay checks it.
	"OPERATOR_API_TOKEN": "operator-api-token",
	// The simulated issuer's secret key (MODE=production locally): the
	// functions send it, the simulated Stripe Issuing checks it.
	"ISSUER_API_KEY": "issuer-api-key",
}

// Secret returns the secret kept in the file at path, creating it (32
// random bytes, hex-encoded, mode 0600) when the file does not exist.
func Secret(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		if s := strings.TrimSpace(string(b)); s != "" {
			return s, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	raw := make([]byte, 32)
	rand.Read(raw)
	s := hex.EncodeToString(raw)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(path, []byte(s+"\n"), 0o600); err != nil {
		return "", err
	}
	return s, nil
}

// State describes the running `make run` stack to other local commands
// (make invoke). It holds no secrets: those stay in their own files.
type State struct {
	Pid              int    `json:"pid"`
	DynamoDBEndpoint string `json:"dynamodbEndpoint"`
	SQSEndpoint      string `json:"sqsEndpoint"`
	S3Endpoint       string `json:"s3Endpoint"`
	CognitoEndpoint  string `json:"cognitoEndpoint"`
	// UserPoolID and UserPoolClientID are the ids of the local user pool
	// and of its dashboard client in cognito-local.
	UserPoolID       string            `json:"userPoolId"`
	UserPoolClientID string            `json:"userPoolClientId"`
	TableName        string            `json:"tableName"`
	AuditTableName   string            `json:"auditTableName"`
	QueueURLs        map[string]string `json:"queueUrls"`
	BaseURL          string            `json:"baseUrl"`
	// DocumentsURL is the base URL of the sample identity documents.
	DocumentsURL string `json:"documentsUrl"`
	// CAFile is the CA bundle the stack's functions trust (SSL_CERT_FILE).
	CAFile string `json:"caFile"`
}

// Env returns the environment that points the AWS SDK at the running
// stack's emulators (see EndpointEnv), cognito-local's included.
func (st State) Env() []string {
	return append(EndpointEnv(st.DynamoDBEndpoint, st.SQSEndpoint, st.S3Endpoint), CognitoEndpointEnv+"="+st.CognitoEndpoint)
}

// StateFile is the file, in the data folder (DataDir), that holds the
// running stack's State.
const StateFile = "devstack.json"

// WriteState writes st to dataDir/StateFile.
func WriteState(dataDir string, st State) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dataDir, StateFile), append(b, '\n'), 0o644)
}

// ReadState reads the State of the running stack from dataDir, failing
// when no stack is running.
func ReadState(dataDir string) (State, error) {
	var st State
	b, err := os.ReadFile(filepath.Join(dataDir, StateFile))
	if errors.Is(err, fs.ErrNotExist) {
		return st, errors.New("the local stack is not running: start it with `make run`")
	}
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("%s: %w", StateFile, err)
	}
	if st.Pid <= 0 || syscall.Kill(st.Pid, 0) == syscall.ESRCH {
		return st, errors.New("the local stack is not running (it did not stop cleanly): start it with `make run`")
	}
	return st, nil
}
