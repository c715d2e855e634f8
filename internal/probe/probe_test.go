package probe

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"
	"time"
)

func TestParseConnectTo(t *testing.T) {
	c, err := ParseConnectTo("example.com:443:127.0.0.1:8443")
	if err != nil || c != (ConnectTo{"example.com", "443", "127.0.0.1", "8443"}) {
		t.Fatalf("%+v %v", c, err)
	}
	c, err = ParseConnectTo("::[::1]:")
	if err != nil || c.Addr != "::1" || c.Host != "" || c.AddrPort != "" {
		t.Fatalf("%+v %v", c, err)
	}
	for _, bad := range []string{"a:1:b", "a:x:b:1", "a:1:[b:2"} {
		if _, err := ParseConnectTo(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	p := &Prober{ConnectTo: []ConnectTo{{Host: "a.example", Port: "443", Addr: "127.0.0.1", AddrPort: "9"}}}
	if got, ok := p.Target("a.example", "443"); !ok || got != "127.0.0.1:9" {
		t.Errorf("Target = %s %v", got, ok)
	}
	if got, ok := p.Target("b.example", "443"); ok || got != "b.example:443" {
		t.Errorf("Target = %s %v", got, ok)
	}
}

// TestConnectToText: a rule is written as --connect-to takes it (an IPv6
// address in brackets) and read back as ParseConnectTo reads it; a bad
// rule is refused.
func TestConnectToText(t *testing.T) {
	rules := []ConnectTo{{Host: "a.example", Port: "443", Addr: "127.0.0.1", AddrPort: "9"}, {Addr: "::1"}}
	b, err := json.Marshal(rules)
	if err != nil || string(b) != `["a.example:443:127.0.0.1:9","::[::1]:"]` {
		t.Fatalf("%s %v", b, err)
	}
	var back []ConnectTo
	if err := json.Unmarshal(b, &back); err != nil || !slices.Equal(back, rules) {
		t.Errorf("%+v %v", back, err)
	}
	if err := json.Unmarshal([]byte(`["a:1:b"]`), &back); err == nil {
		t.Error("a bad rule is read")
	}
}

type noDNS struct{}

func (noDNS) LookupHost(context.Context, string) ([]string, error) {
	return nil, &net.DNSError{Err: "no such host", IsNotFound: true}
}

// A TLS probe through --connect-to keeps SNI = host: httptest's certificate
// covers example.com, so the name check passes only if SNI/verification use
// the asked host, not 127.0.0.1.
func TestTLSAndHTTPThroughConnectTo(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Host", r.Host)
		w.WriteHeader(http.StatusTeapot)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	_, port, _ := net.SplitHostPort(u.Host)
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	p := &Prober{Timeout: 5 * time.Second, Roots: roots, Resolver: noDNS{}, Now: time.Now,
		ConnectTo: []ConnectTo{{Host: "example.com", Port: "443", Addr: "127.0.0.1", AddrPort: port}}}
	ctx := context.Background()
	if !p.Resolves(ctx, "example.com", "443") || p.Resolves(ctx, "other.example", "443") {
		t.Error("Resolves ignores --connect-to or the resolver")
	}
	res, err := p.TLS(ctx, "example.com", "443", "")
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK() || res.Via != "127.0.0.1:"+port {
		t.Errorf("TLS result %+v", res)
	}
	res, err = p.TLS(ctx, "wrong.test", "443", "127.0.0.1:"+port)
	if err != nil || res.HostErr == nil {
		t.Errorf("wrong host not reported: %+v %v", res, err)
	}
	p2 := *p
	p2.Roots = x509.NewCertPool()
	if res, _ := p2.TLS(ctx, "example.com", "443", ""); res == nil || res.ChainErr == nil {
		t.Errorf("unknown CA not reported: %+v", res)
	}
	p3 := *p
	p3.Now = func() time.Time { return srv.Certificate().NotAfter.Add(time.Hour) }
	if res, _ := p3.TLS(ctx, "example.com", "443", ""); res == nil || !res.Expired || res.ChainErr != nil {
		t.Errorf("expiry not reported apart from the chain: %+v", res)
	}
	h, err := p.HTTP(ctx, "https://example.com/", "")
	if err != nil || h.Status != "418 I'm a teapot" {
		t.Errorf("HTTP = %+v, %v", h, err)
	}
	if _, err := p.HTTP(ctx, "https://127.0.0.1:1/", ""); err == nil {
		t.Error("unreachable host answered")
	}
}

// TestConnectToString: a rule prints as --connect-to takes it, and parses
// back to itself, IPv6 addresses in brackets.
func TestConnectToString(t *testing.T) {
	for _, s := range []string{"g.codefresh.io:443:127.0.0.1:9", "::[::1]:8443", "[2001:db8::1]:443:127.0.0.1:"} {
		c, err := ParseConnectTo(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.String(); got != s {
			t.Errorf("ParseConnectTo(%q).String() = %q", s, got)
		}
		if back, err := ParseConnectTo(c.String()); err != nil || back != c {
			t.Errorf("%q does not parse back: %+v %v", c.String(), back, err)
		}
	}
}
