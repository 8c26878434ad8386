package stack

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestEmulatorsListenOnLoopbackOnly starts a stack and checks, for each
// emulator, every TCP socket its process listens on (read from
// /proc/net/tcp and tcp6, found by the socket inodes of the process's
// descriptors): there is one on its port, and each is bound to a loopback
// address, not to every interface (0.0.0.0, ::); and its port accepts on
// 127.0.0.1 and refuses on each address of the machine that is not a
// loopback one. DynamoDB Local's own main and stripe-mock's -http-port bind
// every interface.
func TestEmulatorsListenOnLoopbackOnly(t *testing.T) {
	root, err := FindRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := Start(ctx, Options{Root: root, Buckets: []string{"documents"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if err := s.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	others := nonLoopbackAddrs(t)
	t.Logf("the machine's other addresses: %v", others)
	for _, p := range s.procs {
		t.Run(p.Name, func(t *testing.T) {
			port, err := portOf(s, p.Name)
			if err != nil {
				t.Fatal(err)
			}
			listening, err := listeners(p.Pid())
			if err != nil {
				t.Fatal(err)
			}
			onPort := false
			for _, l := range listening {
				onPort = onPort || int(l.Port()) == port
				if !l.Addr().IsLoopback() {
					t.Errorf("%s listens on %s: every interface, or one that is not loopback", p.Name, l)
				}
			}
			if !onPort {
				t.Errorf("%s has no socket listening on its port %d: %v", p.Name, port, listening)
			}
			c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
			if err != nil {
				t.Fatalf("127.0.0.1:%d: %v", port, err)
			}
			c.Close()
			for _, a := range others {
				addr := netip.AddrPortFrom(a, uint16(port)).String()
				c, err := net.DialTimeout("tcp", addr, time.Second)
				if err == nil {
					c.Close()
					t.Errorf("%s accepts on %s", p.Name, addr)
				} else if !errors.Is(err, syscall.ECONNREFUSED) {
					t.Errorf("%s on %s: %v, want the connection refused", p.Name, addr, err)
				}
			}
		})
	}
}

// portOf returns the port of the emulator named name in s.
func portOf(s *Stack, name string) (int, error) {
	url := map[string]string{"dynamodb": s.DynamoDBEndpoint, "sqs": s.SQSEndpoint, "s3": s.S3Endpoint, "cognito": s.CognitoEndpoint, "stripe-mock": s.StripeMockURL}[name]
	i := strings.LastIndex(url, ":")
	if i < 0 {
		return 0, fmt.Errorf("%s: no port in %q", name, url)
	}
	return strconv.Atoi(url[i+1:])
}

// nonLoopbackAddrs returns the machine's interface addresses that are
// neither loopback nor IPv6 link-local (which need a zone to dial).
func nonLoopbackAddrs(t *testing.T) []netip.Addr {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	var out []netip.Addr
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		ip, ok := netip.AddrFromSlice(n.IP)
		if !ok {
			continue
		}
		ip = ip.Unmap()
		if ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsUnspecified() {
			continue
		}
		out = append(out, ip)
	}
	return out
}

// listeners returns the local addresses of the TCP sockets in the LISTEN
// state that process pid holds open.
func listeners(pid int) ([]netip.AddrPort, error) {
	fds := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	entries, err := os.ReadDir(fds)
	if err != nil {
		return nil, err
	}
	inodes := map[string]bool{}
	for _, e := range entries {
		link, err := os.Readlink(filepath.Join(fds, e.Name()))
		if err == nil && strings.HasPrefix(link, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
		}
	}
	var out []netip.AddrPort
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		ls, err := listening(table)
		if err != nil {
			return nil, err
		}
		for inode, addr := range ls {
			if inodes[inode] {
				out = append(out, addr)
			}
		}
	}
	return out, nil
}

// listening reads a /proc/net/tcp table: the local address of each socket
// in the LISTEN state (0A), by its inode.
func listening(table string) (map[string]netip.AddrPort, error) {
	f, err := os.Open(table)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]netip.AddrPort{}
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || fields[3] != "0A" {
			continue
		}
		addr, err := procAddr(fields[1])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", table, err)
		}
		out[fields[9]] = addr
	}
	return out, sc.Err()
}

// procAddr decodes a local_address of /proc/net/tcp{,6}: the address in
// hex, as 32-bit words in the machine's (little-endian) order, a colon and
// the port in hex.
func procAddr(s string) (netip.AddrPort, error) {
	hexIP, hexPort, ok := strings.Cut(s, ":")
	raw, err := hex.DecodeString(hexIP)
	if !ok || err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, fmt.Errorf("not an address: %q", s)
	}
	port, err := strconv.ParseUint(hexPort, 16, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("not a port: %q", s)
	}
	for w := 0; w < len(raw); w += 4 {
		raw[w], raw[w+1], raw[w+2], raw[w+3] = raw[w+3], raw[w+2], raw[w+1], raw[w]
	}
	ip, _ := netip.AddrFromSlice(raw)
	return netip.AddrPortFrom(ip.Unmap(), uint16(port)), nil
}

func TestProcAddr(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"0100007F:1F40", "127.0.0.1:8000"},
		{"00000000:2F5F", "0.0.0.0:12127"},
		{"00000000000000000000000001000000:1F40", "[::1]:8000"},
		{"00000000000000000000000000000000:2F5F", "[::]:12127"},
		{"0000000000000000FFFF00000100007F:1F40", "127.0.0.1:8000"},
	} {
		got, err := procAddr(tt.in)
		if err != nil || got.String() != tt.want {
			t.Errorf("procAddr(%q) = %v, %v; want %s", tt.in, got, err, tt.want)
		}
	}
	if _, err := procAddr("zz:1"); err == nil {
		t.Error("procAddr of a non-address succeeded")
	}
}
