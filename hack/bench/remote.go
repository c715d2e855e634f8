package main

import (
	"io"
	"net"
	"net/url"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// The remote mode: the same plugin runs through a TCP proxy on 127.0.0.1
// that delays every chunk of bytes by half a round-trip time each way, so
// that every request costs one more round trip, as against an API server
// tens of milliseconds away. TLS passes through untouched (the proxy is
// on 127.0.0.1, which the API server's certificate covers). A run costs
// its sequential round trips: the difference from the local run, in round
// trips, is what the budget bounds.

// latencyProxy forwards connections to target with rtt/2 added each way.
type latencyProxy struct {
	l      net.Listener
	target string
	half   time.Duration
	wg     sync.WaitGroup
}

// startLatencyProxy listens on 127.0.0.1 and forwards to target (host:port).
func startLatencyProxy(target string, rtt time.Duration) (*latencyProxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &latencyProxy{l: l, target: target, half: rtt / 2}
	go p.serve()
	return p, nil
}

func (p *latencyProxy) Addr() string { return p.l.Addr().String() }

func (p *latencyProxy) Close() {
	_ = p.l.Close()
	p.wg.Wait()
}

func (p *latencyProxy) serve() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.relay(c)
		}()
	}
}

func (p *latencyProxy) relay(client net.Conn) {
	defer client.Close()
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer server.Close()
	done := make(chan struct{}, 2)
	go func() { p.delayed(server, client); done <- struct{}{} }()
	go func() { p.delayed(client, server); done <- struct{}{} }()
	<-done
}

// delayed copies src to dst, each chunk written half a round trip after it
// was read, in order.
func (p *latencyProxy) delayed(dst io.WriteCloser, src io.Reader) {
	type chunk struct {
		at   time.Time
		data []byte
	}
	q := make(chan chunk, 1024)
	go func() {
		defer close(q)
		buf := make([]byte, 64<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				q <- chunk{time.Now().Add(p.half), append([]byte(nil), buf[:n]...)}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range q {
		time.Sleep(time.Until(c.at))
		if _, err := dst.Write(c.data); err != nil {
			break
		}
	}
	// Let the other direction see the end.
	if cw, ok := dst.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	} else {
		_ = dst.Close()
	}
	for range q {
	}
}

// viaProxy rewrites the kubeconfig at path to reach its server through
// proxyAddr (same host, the proxy's port) and returns the new file's path.
func viaProxy(path, proxyAddr string) (string, error) {
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return "", err
	}
	for _, c := range cfg.Clusters {
		u, err := url.Parse(c.Server)
		if err != nil {
			return "", err
		}
		u.Host = proxyAddr
		c.Server = u.String()
	}
	out := path + ".remote"
	if err := clientcmd.WriteToFile(*cfg, out); err != nil {
		return "", err
	}
	return out, nil
}

// serverAddr is the host:port of the API server of the REST config cfg.
func serverAddr(cfg *rest.Config) (string, error) {
	u, err := url.Parse(cfg.Host)
	if err != nil {
		return "", err
	}
	return u.Host, nil
}
