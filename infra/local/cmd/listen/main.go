// Command listen is `make listen`: an HTTPS webhook receiver on this
// machine for the stack of `make run` (see docs/local.md).
//
// It serves https://127.0.0.1:$LISTEN_PORT/ with a certificate for
// 127.0.0.1 and localhost issued by the local CA that `make run` keeps in
// its data folder and trusts (package localca), so the webhook worker of a
// running `make run` delivers to it with no restart. For each request it
// prints the event type, the event id (X-Service-Event-Id), whether the
// signature verifies with the company's secret (webhooks.Verify, and why
// not) and the JSON body, indented; it answers 200.
//
// Environment, or flags:
//
//	LISTEN_PORT, -port   the port (8443)
//	TOKEN, -token        a company's access token (POST /auth/token): listen
//	                     creates a webhook endpoint of that company at this
//	                     receiver with the company's own token
//	                     (POST /webhooks/endpoints), verifies with the secret
//	                     the API gives it, and deletes the endpoint when it
//	                     stops
//	EVENTS, -events      the endpoint's enabled_events, comma-separated
//	                     (default *: every kind)
//	COMPANY, -company    a company id of the local stack: its webhook_url is
//	                     set to this receiver through the operator console of
//	                     the running `make run` (X-Admin-Key: ADMIN_API_KEY,
//	                     else the data folder's admin-api-key)
//	SECRET, -secret      the company's signing secret; without it, COMPANY's
//	                     secret is rotated (POST /admin/companies/{id}/webhook-secret,
//	                     the console's one way to get it) and the new one printed
//	FORWARD, -forward    a URL to which each request is also sent as it came
//	                     (method, headers, body bytes); the answer's status is
//	                     printed
//	DATA_DIR             make run's data folder (.cache)
//
// -make-pid PID names the make that runs it (`make listen`): it stops when
// that make is told to stop, as devstack does (package makewatch).
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"payments/infra/local/localca"
	"payments/infra/local/makewatch"
	"payments/infra/local/stack"
)

// DefaultPort is the receiver's port when LISTEN_PORT is not set: clear of
// make run's (3000, 8000, 9324, 4568, 4443).
const DefaultPort = 8443

// config is what `make listen` is told.
type config struct {
	port                     int
	company, secret, forward string
	token                    string
	events                   []string
}

func main() {
	var cfg config
	port := envOr("LISTEN_PORT", strconv.Itoa(DefaultPort))
	flag.StringVar(&port, "port", port, "the `port` on 127.0.0.1 (LISTEN_PORT)")
	flag.StringVar(&cfg.company, "company", os.Getenv("COMPANY"), "the `id` of the company whose webhook_url is set to this receiver (COMPANY)")
	flag.StringVar(&cfg.secret, "secret", os.Getenv("SECRET"), "the company's webhook signing `secret` (SECRET); without it COMPANY's is rotated")
	flag.StringVar(&cfg.forward, "forward", os.Getenv("FORWARD"), "a `URL` each delivery is also sent to, as received (FORWARD)")
	flag.StringVar(&cfg.token, "token", os.Getenv("TOKEN"), "a company's access `token` (TOKEN): listen creates its own webhook endpoint with it")
	events := flag.String("events", envOr("EVENTS", "*"), "the endpoint's enabled_events, `comma-separated` (EVENTS)")
	makePid := flag.Int("make-pid", 0, "the `pid` of the make that runs listen: stop when it is stopping or gone")
	flag.Parse()
	p, err := strconv.Atoi(port)
	if err != nil || p <= 0 || p > 65535 {
		fmt.Fprintf(os.Stderr, "listen: LISTEN_PORT=%q is not a port number\n", port)
		os.Exit(2)
	}
	cfg.port = p
	cfg.events = strings.Split(*events, ",")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *makePid > 0 {
		var cancel context.CancelFunc
		ctx, cancel = makewatch.Context(ctx, *makePid, slog.New(slog.NewTextHandler(os.Stderr, nil)))
		defer cancel()
	}
	if err := run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "listen:", err)
		os.Exit(1)
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// run is `make listen`: it serves until ctx is done.
func run(ctx context.Context, cfg config, out io.Writer) error {
	if cfg.forward != "" {
		if u, err := url.Parse(cfg.forward); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("FORWARD=%q is not an http or https URL", cfg.forward)
		}
	}
	root, err := stack.FindRoot()
	if err != nil {
		return err
	}
	data, err := stack.DataDir(root)
	if err != nil {
		return err
	}
	ca, err := localca.Load(data)
	if err != nil {
		return err
	}
	var con *api
	switch {
	case cfg.company != "" && cfg.token != "":
		return errors.New("give COMPANY (the console's endpoint) or TOKEN (an endpoint of the company's own), not both")
	case cfg.token != "":
		st, err := stack.ReadState(data)
		if err != nil {
			return fmt.Errorf("TOKEN is set: %w", err)
		}
		con = newCompanyAPI(st.BaseURL, cfg.token)
	case cfg.company != "":
		st, err := stack.ReadState(data)
		if err != nil {
			return fmt.Errorf("COMPANY is set: %w", err)
		}
		key, err := adminKey(data)
		if err != nil {
			return err
		}
		con = newConsole(st.BaseURL, key)
		if b, err := os.ReadFile(st.CAFile); err != nil || !bytes.Contains(b, bytes.TrimSpace(ca.PEM)) {
			fmt.Fprintf(out, "Warning:   the running make run does not trust the local CA (%s), so its deliveries here fail\n"+
				"           with a certificate error: restart make run\n", filepath.Join(localca.Dir(data), localca.CertFile))
		}
	}
	s, err := open(ctx, cfg, ca, con, out)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Local CA:  %s (curl --cacert)\nready\n", filepath.Join(localca.Dir(data), localca.CertFile))
	return s.serve(ctx)
}

// adminKey returns the operator console's key of make run: ADMIN_API_KEY,
// else the data folder's file, which make run writes at its first start.
func adminKey(data string) (string, error) {
	if k := os.Getenv("ADMIN_API_KEY"); k != "" {
		return k, nil
	}
	file := filepath.Join(data, stack.SecretFiles["ADMIN_API_KEY"])
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("the admin key of make run: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// session is a receiver bound to its port, its company pointed at it.
type session struct {
	// url is the receiver's URL, https://127.0.0.1:<port>/.
	url     string
	company string
	// api and endpoint are the company's API and the endpoint listen
	// created with its token, deleted when it stops.
	api      *api
	endpoint string
	l        net.Listener
	srv      *http.Server
	out      io.Writer
}

// open binds the receiver's port and, when cfg has a token, creates an
// endpoint of the company at it through con (the company's API); when cfg
// names a company, it sets the company's webhook_url to it through con
// (the console), after getting the secret (cfg's, or a new one from con).
// Either way every delivery made from then on comes here, signed with a
// secret the receiver knows. It prints what it did.
func open(ctx context.Context, cfg config, ca *localca.CA, con *api, out io.Writer) (*session, error) {
	cert, err := ca.Issue()
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.port)))
	if err != nil {
		return nil, fmt.Errorf("%w (set LISTEN_PORT to use another port)", err)
	}
	s := &session{url: "https://" + l.Addr().String() + "/", company: cfg.company, l: l, out: out}
	fmt.Fprintf(out, "Listening: %s\n", s.url)
	secret := cfg.secret
	if cfg.token != "" {
		e, err := con.replaceEndpoint(ctx, s.url, cfg.events)
		if err != nil {
			l.Close()
			return nil, err
		}
		s.api, s.endpoint, secret = con, e.ID, e.Secret
		fmt.Fprintf(out, "Endpoint:  %s for %s, created with the company's token (deleted when listen stops)\n"+
			"Secret:    %s (its signing secret; after a rotation the previous one keeps verifying for the overlap)\n",
			e.ID, strings.Join(cfg.events, ","), secret)
	}
	if cfg.company != "" {
		was, err := con.webhookURL(ctx, cfg.company)
		if err != nil {
			l.Close()
			return nil, err
		}
		if secret == "" {
			if secret, err = con.rotateSecret(ctx, cfg.company); err != nil {
				l.Close()
				return nil, err
			}
			fmt.Fprintf(out, "Secret:    %s\n"+
				"           ROTATED: the console made the company a new webhook signing secret (it shows a secret\n"+
				"           only when it makes one). Deliveries created from now on are signed with it; a receiver\n"+
				"           that holds the previous secret no longer verifies them. To keep this one next time:\n"+
				"           make listen COMPANY=%s SECRET=%s\n", secret, cfg.company, secret)
		}
		if err := con.setWebhookURL(ctx, cfg.company, s.url); err != nil {
			l.Close()
			return nil, err
		}
		switch was {
		case s.url:
			was = "unchanged"
		case "":
			was = "it had none"
		default:
			was = "it was " + was
		}
		fmt.Fprintf(out, "Company:   %s: webhook_url set to %s (%s)\n", cfg.company, s.url, was)
	}
	if secret == "" {
		fmt.Fprintln(out, "Secret:    none (give COMPANY= or SECRET=): signatures are not verified")
	}
	if cfg.forward != "" {
		fmt.Fprintf(out, "Forward:   %s\n", cfg.forward)
	}
	s.srv = &http.Server{
		Handler:           newReceiver(secret, cfg.forward, out),
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 10 * time.Second,
	}
	return s, nil
}

// serve serves deliveries until ctx is done.
func (s *session) serve(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- s.srv.ServeTLS(s.l, "", "") }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.srv.Shutdown(shut)
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	if s.company != "" {
		fmt.Fprintf(s.out, "stopped: the webhook_url of company %s still points at %s; deliveries fail until make listen runs again\n", s.company, s.url)
	}
	if s.endpoint != "" {
		gone, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.api.deleteEndpoint(gone, s.endpoint); err != nil {
			fmt.Fprintf(s.out, "stopped: endpoint %s not deleted (%v); the next make listen with a fresh TOKEN deletes it\n", s.endpoint, err)
			return nil
		}
		fmt.Fprintf(s.out, "stopped: endpoint %s deleted\n", s.endpoint)
	}
	return nil
}
