// Package outbound is the one way the service calls URLs that clients chose
// (webhook URLs, notify_url, document URLs), as DESIGN.md §6 requires:
//
//   - HTTPS only;
//   - a time-out on the whole exchange (10 s by default);
//   - no redirects: a 3xx is returned as the answer, never followed;
//   - the response body is read up to a cap (64 KiB by default): Post drops
//     the rest, Get refuses a longer body with ErrTooLarge;
//   - the dialer refuses loopback, private, link-local (which holds the
//     cloud metadata address 169.254.169.254), unique-local (which holds
//     fd00:ec2::254), shared (CGNAT), unspecified, multicast and other
//     non-public addresses. The check runs in the dialer's Control hook,
//     after DNS resolution and for every address a name resolves to, so a
//     name that resolves (or later re-resolves) to such an address is never
//     connected to;
//   - no proxy from the environment, so the check applies to the real peer.
//
// Certificates are verified against the system roots, which Go reads from
// SSL_CERT_FILE and SSL_CERT_DIR when they are set: a local stack or a test
// trusts its own CA the standard way.
//
// Local mode may allow loopback addresses (and only them) with
// WithAllowLoopback, which the functions turn on when the environment sets
// OUTBOUND_ALLOW_LOOPBACK=true (see AllowLoopbackFromEnv). It is never set
// in a deployed stage.
package outbound

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"syscall"
	"time"
)

// Defaults of a Client.
const (
	DefaultTimeout = 10 * time.Second
	DefaultMaxBody = 64 << 10
)

// AllowLoopbackEnv names the environment variable that, set to "true",
// allows loopback addresses in local mode.
const AllowLoopbackEnv = "OUTBOUND_ALLOW_LOOPBACK"

// Errors of this package.
var (
	// ErrNotHTTPS is a URL that is not an absolute https URL with a host.
	ErrNotHTTPS = errors.New("outbound: only absolute https URLs are called")
	// ErrRefusedAddress is a connection to an address that is not public
	// (loopback, private, link-local, metadata, …); it is refused before any
	// packet is sent.
	ErrRefusedAddress = errors.New("outbound: refused address")
	// ErrTooLarge is a body that Get found longer than the client's cap.
	ErrTooLarge = errors.New("outbound: response body too large")
)

// Client makes outbound HTTPS requests under the rules of the package.
type Client struct {
	http    *http.Client
	maxBody int64
}

type options struct {
	timeout       time.Duration
	maxBody       int64
	allowLoopback bool
	rootCAs       *x509.CertPool
	dialed        func(netip.AddrPort)
}

// Option configures a Client.
type Option func(*options)

// WithTimeout sets the time-out of a whole exchange (connect, TLS, request,
// response headers and the capped body read).
func WithTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// WithMaxBody sets how many bytes of a response body are read at most.
func WithMaxBody(n int64) Option { return func(o *options) { o.maxBody = n } }

// WithAllowLoopback allows loopback addresses (127.0.0.0/8, ::1): for the
// local stack and tests only. Every other refused range stays refused.
func WithAllowLoopback(allow bool) Option { return func(o *options) { o.allowLoopback = allow } }

// WithRootCAs makes the client trust pool instead of the system roots.
func WithRootCAs(pool *x509.CertPool) Option { return func(o *options) { o.rootCAs = pool } }

// WithDialObserver calls f with every address the dialer is about to
// connect to, after the address check passed; tests use it to prove that a
// refused address is never dialled.
func WithDialObserver(f func(netip.AddrPort)) Option { return func(o *options) { o.dialed = f } }

// AllowLoopbackFromEnv reports whether OUTBOUND_ALLOW_LOOPBACK is "true" (or
// another true value of strconv.ParseBool).
func AllowLoopbackFromEnv() bool {
	ok, _ := strconv.ParseBool(os.Getenv(AllowLoopbackEnv))
	return ok
}

// New returns a Client with the package defaults changed by opts.
func New(opts ...Option) *Client {
	o := options{timeout: DefaultTimeout, maxBody: DefaultMaxBody}
	for _, opt := range opts {
		opt(&o)
	}
	dialer := &net.Dialer{
		Timeout:   o.timeout,
		KeepAlive: 30 * time.Second,
		Control: func(network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("%w: %s: %v", ErrRefusedAddress, address, err)
			}
			if reason := Refused(ap.Addr(), o.allowLoopback); reason != "" {
				return fmt.Errorf("%w: %s is %s", ErrRefusedAddress, ap.Addr(), reason)
			}
			if o.dialed != nil {
				o.dialed(ap)
			}
			return nil
		},
	}
	transport := &http.Transport{
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: o.rootCAs},
		TLSHandshakeTimeout:   o.timeout,
		ResponseHeaderTimeout: o.timeout,
		// HTTP/2 where the receiver offers it, except in the deployed
		// functions, built without it (nethttpomithttp2, docs/footprint.md):
		// there every request is HTTP/1.1 (a receiver that speaks HTTP/2
		// only would fail; none is known among webhook receivers).
		ForceAttemptHTTP2: true,
		MaxIdleConns:      32,
		IdleConnTimeout:   60 * time.Second,
	}
	return &Client{
		http: &http.Client{
			Transport: transport,
			Timeout:   o.timeout,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		},
		maxBody: o.maxBody,
	}
}

// Response is what a call answered: its status and at most the capped
// number of bytes of its body.
type Response struct {
	StatusCode int
	Body       []byte
}

// Post sends body to rawURL with the given headers and returns the answer.
// Any HTTP status is a Response (3xx included: redirects are not
// followed); a refused URL or address, a time-out or a network error is an
// error. A body longer than the cap is cut at the cap.
func (c *Client) Post(ctx context.Context, rawURL string, header http.Header, body []byte) (Response, error) {
	return c.do(ctx, http.MethodPost, rawURL, header, body, false)
}

// Get fetches rawURL, as Post, except that a body longer than the cap is
// ErrTooLarge: what Get returns is the whole body or nothing.
func (c *Client) Get(ctx context.Context, rawURL string) (Response, error) {
	return c.do(ctx, http.MethodGet, rawURL, nil, nil, true)
}

func (c *Client) do(ctx context.Context, method, rawURL string, header http.Header, body []byte, whole bool) (Response, error) {
	if err := CheckURL(rawURL); err != nil {
		return Response{}, err
	}
	req, err := http.NewRequestWithContext(ctx, method, rawURL, bytes.NewReader(body))
	if err != nil {
		return Response{}, fmt.Errorf("outbound: build request: %w", err)
	}
	for k, vs := range header {
		req.Header[k] = append([]string(nil), vs...)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return Response{}, err
	}
	defer res.Body.Close()
	limit := c.maxBody
	if whole {
		limit++
	}
	b, err := io.ReadAll(io.LimitReader(res.Body, limit))
	if err != nil {
		return Response{StatusCode: res.StatusCode}, fmt.Errorf("outbound: read response: %w", err)
	}
	if int64(len(b)) > c.maxBody {
		return Response{StatusCode: res.StatusCode}, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, c.maxBody)
	}
	return Response{StatusCode: res.StatusCode, Body: b}, nil
}

// CheckURL accepts an absolute https URL with a host and no user
// information, and refuses anything else with ErrNotHTTPS. A literal IP
// host is checked when dialled, like any resolved address.
func CheckURL(rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "https" || u.Hostname() == "" || u.User != nil || u.Opaque != "" {
		return ErrNotHTTPS
	}
	return nil
}

// refusedRanges are the non-public ranges besides the ones netip classifies
// (loopback, private, link-local, multicast, unspecified).
var refusedRanges = []struct {
	prefix netip.Prefix
	reason string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "a \"this network\" address"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a shared (CGNAT) address"},
	{netip.MustParsePrefix("192.0.0.0/24"), "an IETF protocol assignment"},
	{netip.MustParsePrefix("192.0.2.0/24"), "a documentation address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address"},
	{netip.MustParsePrefix("198.51.100.0/24"), "a documentation address"},
	{netip.MustParsePrefix("203.0.113.0/24"), "a documentation address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address"},
	{netip.MustParsePrefix("64:ff9b::/96"), "a NAT64 address"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "a NAT64 address"},
	{netip.MustParsePrefix("100::/64"), "a discard-only address"},
	{netip.MustParsePrefix("2001:db8::/32"), "a documentation address"},
	{netip.MustParsePrefix("2002::/16"), "a 6to4 address"},
	{netip.MustParsePrefix("2001::/32"), "a Teredo address"},
}

// Metadata addresses of cloud providers, named for clearer errors; both
// also fall in a refused range.
var metadata = map[netip.Addr]bool{
	netip.MustParseAddr("169.254.169.254"): true,
	netip.MustParseAddr("fd00:ec2::254"):   true,
}

// Refused returns why addr may not be connected to, or "" when it may.
// Loopback addresses are allowed only when allowLoopback is set.
// IPv4-mapped IPv6 addresses are judged as the IPv4 address they carry.
func Refused(addr netip.Addr, allowLoopback bool) string {
	addr = addr.Unmap()
	switch {
	case !addr.IsValid():
		return "not an IP address"
	case metadata[addr.WithZone("")]:
		return "a cloud metadata address"
	case addr.IsLoopback():
		if allowLoopback {
			return ""
		}
		return "a loopback address"
	case addr.IsUnspecified():
		return "an unspecified address"
	case addr.IsPrivate():
		return "a private address"
	case addr.IsLinkLocalUnicast():
		return "a link-local address"
	case addr.IsMulticast(), addr.IsInterfaceLocalMulticast(), addr.IsLinkLocalMulticast():
		return "a multicast address"
	case addr == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "the broadcast address"
	}
	for _, r := range refusedRanges {
		if r.prefix.Contains(addr) {
			return r.reason
		}
	}
	return ""
}
