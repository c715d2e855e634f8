// Package probe makes the plugin's outbound network probes: TCP dials that
// honour --connect-to (curl semantics), TLS handshakes with SNI verified
// against the system roots plus --ca-file, and HTTP requests where any HTTP
// answer counts. Every dial is bounded by the prober's timeout
// (--request-timeout, default 10s) and by the caller's context.
package probe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// DefaultTimeout bounds one probe when --request-timeout is not given.
const DefaultTimeout = 10 * time.Second

// ConnectTo is one --connect-to HOST:PORT:ADDR:PORT rule (curl semantics):
// a connection asked for Host:Port goes to Addr:AddrPort instead, while the
// TLS server name and HTTP Host stay Host. An empty Host or Port matches any;
// an empty Addr or AddrPort keeps the original.
type ConnectTo struct {
	Host, Port, Addr, AddrPort string
}

// ParseConnectTo parses HOST:PORT:ADDR:PORT; IPv6 addresses go in brackets
// ("[::1]"). The error names the bad rule.
func ParseConnectTo(s string) (ConnectTo, error) {
	parts, err := splitColons(s)
	if err != nil || len(parts) != 4 {
		return ConnectTo{}, fmt.Errorf("--connect-to %q: want HOST:PORT:ADDR:PORT", s)
	}
	c := ConnectTo{Host: parts[0], Port: parts[1], Addr: parts[2], AddrPort: parts[3]}
	for _, p := range []string{c.Port, c.AddrPort} {
		if p == "" {
			continue
		}
		if _, err := net.LookupPort("tcp", p); err != nil {
			return ConnectTo{}, fmt.Errorf("--connect-to %q: bad port %q", s, p)
		}
	}
	return c, nil
}

// String is the rule as --connect-to takes it, HOST:PORT:ADDR:PORT, an
// IPv6 address in brackets: ParseConnectTo reads it back.
func (c ConnectTo) String() string {
	parts := []string{c.Host, c.Port, c.Addr, c.AddrPort}
	for i, p := range parts {
		if strings.Contains(p, ":") {
			parts[i] = "[" + p + "]"
		}
	}
	return strings.Join(parts, ":")
}

// MarshalText is the rule as String writes it: a recorded run (a bundle's
// spec) keeps its rules as --connect-to takes them.
func (c ConnectTo) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText reads a rule as ParseConnectTo does.
func (c *ConnectTo) UnmarshalText(b []byte) error {
	r, err := ParseConnectTo(string(b))
	if err != nil {
		return err
	}
	*c = r
	return nil
}

// splitColons splits on ':' outside square brackets, dropping the brackets.
func splitColons(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	depth := 0
	for _, r := range s {
		switch {
		case r == '[':
			depth++
		case r == ']':
			depth--
		case r == ':' && depth == 0:
			out = append(out, cur.String())
			cur.Reset()
			continue
		default:
			cur.WriteRune(r)
		}
		if depth < 0 || depth > 1 {
			return nil, errors.New("unbalanced brackets")
		}
	}
	if depth != 0 {
		return nil, errors.New("unbalanced brackets")
	}
	return append(out, cur.String()), nil
}

// Prober makes probes. The zero value is not usable; use New.
type Prober struct {
	// Timeout bounds each dial, handshake and request.
	Timeout time.Duration
	// ConnectTo rules, first match wins (as in curl).
	ConnectTo []ConnectTo
	// Roots are the trust roots: the system pool plus --ca-file.
	Roots *x509.CertPool
	// Resolver resolves host names (net.DefaultResolver by default);
	// tests inject their own.
	Resolver interface {
		LookupHost(ctx context.Context, host string) ([]string, error)
	}
	// Now is the clock used for certificate expiry (time.Now by default).
	Now func() time.Time
	// Tape, when set, records every probe's result (--bundle) or answers
	// from a recording (replay); see Tape.
	Tape Tape
	// Offline, when set, is the error of every connection the prober would
	// open (replay makes none).
	Offline error
}

// New returns a prober with the system roots plus the PEM certificates of
// caFile (when not empty). The error is one line (unreadable file, no
// certificate in it).
func New(timeout time.Duration, connectTo []ConnectTo, caFile string) (*Prober, error) {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	roots, err := x509.SystemCertPool()
	if err != nil || roots == nil {
		roots = x509.NewCertPool()
	}
	if caFile != "" {
		data, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("--ca-file: %w", err)
		}
		if !appendPEM(roots, data) {
			return nil, fmt.Errorf("--ca-file %s: no PEM certificate found", caFile)
		}
	}
	return &Prober{Timeout: timeout, ConnectTo: connectTo, Roots: roots, Resolver: net.DefaultResolver, Now: time.Now}, nil
}

func appendPEM(pool *x509.CertPool, data []byte) bool {
	ok := false
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return ok
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			continue
		}
		pool.AddCert(c)
		ok = true
	}
}

// Target returns where a connection for host:port really goes, after the
// --connect-to rules, and whether a rule matched.
func (p *Prober) Target(host, port string) (string, bool) {
	for _, c := range p.ConnectTo {
		if (c.Host == "" || strings.EqualFold(c.Host, host)) && (c.Port == "" || c.Port == port) {
			addr, aport := c.Addr, c.AddrPort
			if addr == "" {
				addr = host
			}
			if aport == "" {
				aport = port
			}
			return net.JoinHostPort(addr, aport), true
		}
	}
	return net.JoinHostPort(host, port), false
}

// Resolves reports whether host resolves (or is an IP address, or is
// redirected by a --connect-to rule for port).
func (p *Prober) Resolves(ctx context.Context, host, port string) bool {
	if p.Tape != nil {
		r, err := p.Tape.Probe("dns "+net.JoinHostPort(host, port), func() (Result, error) {
			return Result{Resolves: p.resolves(ctx, host, port)}, nil
		})
		return err == nil && r.Resolves
	}
	return p.resolves(ctx, host, port)
}

func (p *Prober) resolves(ctx context.Context, host, port string) bool {
	if _, ok := p.Target(host, port); ok || net.ParseIP(host) != nil {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, p.Timeout)
	defer cancel()
	addrs, err := p.Resolver.LookupHost(ctx, host)
	return err == nil && len(addrs) > 0
}

// DialContext dials addr ("host:port") after applying --connect-to, bounded
// by the prober's timeout.
func (p *Prober) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	target, _ := p.Target(host, port)
	return p.dial(ctx, network, target)
}

// dial connects to addr as is, bounded by the prober's timeout, unless the
// prober is Offline.
func (p *Prober) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if p.Offline != nil {
		return nil, p.Offline
	}
	d := net.Dialer{Timeout: p.Timeout}
	return d.DialContext(ctx, network, addr)
}

// Cert describes the certificate a server presented (never any key).
type Cert struct {
	Subject  string
	Issuer   string
	SANs     []string
	NotAfter time.Time
}

// TLSResult is the outcome of a handshake: the served leaf, and each
// verification failure separately so a report can say all that is wrong.
type TLSResult struct {
	Leaf *Cert
	// Via is the address dialled ("127.0.0.1:8443").
	Via string
	// Expired is true when the leaf's notAfter is past.
	Expired bool
	// HostErr is set when the certificate does not cover the server name.
	HostErr error
	// ChainErr is set when the chain does not lead to a trusted root.
	ChainErr error
}

// OK reports whether the certificate is valid for the server name.
func (r *TLSResult) OK() bool { return !r.Expired && r.HostErr == nil && r.ChainErr == nil }

// TLS dials addr (host:port, or an explicit dial address when via is not
// empty) and shakes hands with SNI = serverName, then verifies the served
// chain against p.Roots, the name and the expiry. The returned error is a
// transport error (no TLS answer at all); certificate problems are in the
// result.
func (p *Prober) TLS(ctx context.Context, serverName, port, via string) (*TLSResult, error) {
	if p.Tape != nil {
		r, err := p.Tape.Probe("tls "+net.JoinHostPort(serverName, port)+" via "+via, func() (Result, error) {
			t, err := p.tls(ctx, serverName, port, via)
			return Result{TLS: t}, err
		})
		return r.TLS, err
	}
	return p.tls(ctx, serverName, port, via)
}

func (p *Prober) tls(ctx context.Context, serverName, port, via string) (*TLSResult, error) {
	ctx, cancel := context.WithTimeout(ctx, p.Timeout)
	defer cancel()
	var conn net.Conn
	var err error
	dialed := via
	if via != "" {
		conn, err = p.dial(ctx, "tcp", via)
	} else {
		dialed, _ = p.Target(serverName, port)
		conn, err = p.DialContext(ctx, "tcp", net.JoinHostPort(serverName, port))
	}
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	tc := tls.Client(conn, &tls.Config{ServerName: serverName, InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}) // #nosec G402 -- verified below, per failure
	if err := tc.HandshakeContext(ctx); err != nil {
		return nil, fmt.Errorf("TLS handshake with %s: %w", dialed, err)
	}
	certs := tc.ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return nil, fmt.Errorf("TLS handshake with %s: no certificate served", dialed)
	}
	return p.Verify(certs, serverName, dialed), nil
}

// Verify checks a served chain (leaf first) for serverName.
func (p *Prober) Verify(certs []*x509.Certificate, serverName, via string) *TLSResult {
	leaf := certs[0]
	now := p.Now()
	r := &TLSResult{Via: via, Leaf: Describe(leaf), Expired: now.After(leaf.NotAfter)}
	r.HostErr = leaf.VerifyHostname(serverName)
	inter := x509.NewCertPool()
	for _, c := range certs[1:] {
		inter.AddCert(c)
	}
	at := now
	if r.Expired || now.Before(leaf.NotBefore) {
		at = leaf.NotAfter.Add(-time.Second) // judge the chain on its own, expiry is reported apart
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: p.Roots, Intermediates: inter, CurrentTime: at}); err != nil {
		r.ChainErr = err
	}
	return r
}

// Describe summarises a certificate.
func Describe(c *x509.Certificate) *Cert {
	sans := append([]string(nil), c.DNSNames...)
	for _, ip := range c.IPAddresses {
		sans = append(sans, ip.String())
	}
	return &Cert{Subject: c.Subject.String(), Issuer: c.Issuer.String(), SANs: sans, NotAfter: c.NotAfter}
}

// HTTPResult is the answer to a probe request.
type HTTPResult struct {
	Status string // "404 Not Found"
	Via    string
}

// HTTP sends a HEAD request to rawURL (as the chart's validator does,
// https://github.com/codefresh-io/cli-v2/blob/v0.2.16/cmd/commands/helm.go) through --connect-to, verifying TLS against p.Roots; when via
// is not empty the connection goes there instead, keeping Host and SNI. Any
// HTTP status is an answer; the error is the transport error (DNS, connect,
// TLS). Redirects are not followed.
func (p *Prober) HTTP(ctx context.Context, rawURL, via string) (*HTTPResult, error) {
	if p.Tape != nil {
		r, err := p.Tape.Probe("http "+rawURL+" via "+via, func() (Result, error) {
			h, err := p.http(ctx, rawURL, via)
			return Result{HTTP: h}, err
		})
		return r.HTTP, err
	}
	return p.http(ctx, rawURL, via)
}

func (p *Prober) http(ctx context.Context, rawURL, via string) (*HTTPResult, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	dialed, _ := p.Target(u.Hostname(), port)
	if via != "" {
		dialed = via
	}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if via != "" {
				return p.dial(ctx, network, via)
			}
			return p.DialContext(ctx, network, addr)
		},
		TLSClientConfig:     &tls.Config{RootCAs: p.Roots, ServerName: u.Hostname(), MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout: p.Timeout,
		DisableKeepAlives:   true,
		Proxy:               nil,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: p.Timeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, rawURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	return &HTTPResult{Status: resp.Status, Via: dialed}, nil
}

// Client returns an HTTP client for calls to a server the values name (the
// Codefresh platform): connections go through --connect-to (Host and SNI
// kept), TLS is verified against p.Roots, each request is bounded by
// p.Timeout, redirects are not followed.
func (p *Prober) Client() *http.Client {
	tr := &http.Transport{
		DialContext:         p.DialContext,
		TLSClientConfig:     &tls.Config{RootCAs: p.Roots, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout: p.Timeout,
		DisableKeepAlives:   true,
		Proxy:               nil,
	}
	return &http.Client{Transport: tr, Timeout: p.Timeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// Result is one probe's answer, as a Tape keeps it: exactly one field is
// set (Resolves may be false).
type Result struct {
	TLS      *TLSResult
	HTTP     *HTTPResult
	Resolves bool
	Registry *RegistryAnswer
}

// RegistryAnswer is what an image registry answered for one image
// reference: its manifest's digest and platforms, or the HTTP status and
// error code it refused with.
type RegistryAnswer struct {
	Digest string `json:"digest,omitempty"`
	// Platforms are the index's platforms, or the image's own
	// ("linux/amd64", "linux/arm/v7").
	Platforms []string `json:"platforms,omitempty"`
	// Status and Code are a refusal's HTTP status and the registry's error
	// code (401 "UNAUTHORIZED", 404 "MANIFEST_UNKNOWN"); 0 and "" when it
	// answered.
	Status int    `json:"status,omitempty"`
	Code   string `json:"code,omitempty"`
}

// Registry answers the registry request named key ("REF as CREDENTIALS")
// with do, which makes it (a registry client dialling through the prober):
// through the Tape when one is set, which keeps the answer (a recording) or
// gives the kept one without calling do (a replay). The error is do's: no
// answer at all.
func (p *Prober) Registry(key string, do func() (*RegistryAnswer, error)) (*RegistryAnswer, error) {
	if p.Tape == nil {
		return do()
	}
	r, err := p.Tape.Probe("registry "+key, func() (Result, error) {
		a, err := do()
		return Result{Registry: a}, err
	})
	return r.Registry, err
}

// Tape sits between the checks and the network: Probe answers the probe
// named key ("tls HOST:PORT via ADDR", "http URL via ADDR", "dns
// HOST:PORT"), by running do and keeping its answer (a recording), or from
// what was kept (a replay, where do is never called). The error is do's.
type Tape interface {
	Probe(key string, do func() (Result, error)) (Result, error)
}
