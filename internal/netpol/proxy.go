package netpol

import (
	"sort"

	"golang.org/x/net/http/httpproxy"
)

// Proxy is a proxy environment: HTTP_PROXY, HTTPS_PROXY, NO_PROXY.
type Proxy struct {
	HTTP, HTTPS, NoProxy string
}

// Set reports whether p names a proxy.
func (p Proxy) Set() bool { return p.HTTP != "" || p.HTTPS != "" }

// PodProxy is what ProxyFindings finds of one pod.
type PodProxy struct {
	// Direct are the external destinations (Destination.Label) the pod
	// calls with no proxy in its environment while the release has one
	// (the destinations with a proxy of their own left out): it is to get
	// the release's proxy.
	Direct []string
	// Leaks are the in-cluster destinations (Destination.Label) the pod's
	// own NO_PROXY sends to its proxy.
	Leaks []string
	// NoCA is set when the release has a platform CA and the pod calls the
	// platform without mounting it.
	NoCA bool
}

// ProxyReport is what ProxyFindings finds of a release's pods.
type ProxyReport struct {
	// Proxy is the release's proxy: global's, else the first proxied pod's
	// (with global's NO_PROXY).
	Proxy Proxy
	// Pods are the findings of each pod, in order.
	Pods []PodProxy
	// External counts the pods that call an external destination with no
	// proxy of its own; Proxied the pods with a proxy environment.
	External, Proxied int
	// NoProxyAdd are the hosts (sorted) NO_PROXY must cover for the
	// in-cluster destinations of the proxied pods and of those that are to
	// get the proxy, judged by Go's own matching
	// (golang.org/x/net/http/httpproxy, what the runtime's Go programs use;
	// https://github.com/argoproj/argo-cd/issues/14280).
	NoProxyAdd []string
}

// ProxyFindings judges each pod's proxy environment and CA mounts against
// its destinations, global being the release's proxy values
// (global.httpProxy, httpsProxy, noProxy) and platformCA whether a
// platform CA is configured.
func ProxyFindings(pods []PodEgress, global Proxy, platformCA bool) ProxyReport {
	rep := ProxyReport{Proxy: global, Pods: make([]PodProxy, len(pods))}
	for _, p := range pods {
		if !rep.Proxy.Set() && p.Proxied {
			rep.Proxy.HTTP, rep.Proxy.HTTPS = p.HTTPProxy, p.HTTPSProxy
		}
	}
	hosts := map[string]bool{}
	for i, p := range pods {
		f := &rep.Pods[i]
		var ext []string
		for _, d := range p.Dests {
			if d.External && d.Proxy == "" {
				ext = append(ext, d.Label())
			}
		}
		if len(ext) > 0 {
			rep.External++
		}
		mustProxy := rep.Proxy.Set() && len(ext) > 0 && !p.Proxied
		if mustProxy {
			f.Direct = ext
		}
		if p.Proxied || mustProxy {
			// Its NO_PROXY: its own, or the global one it is to get.
			cfg := httpproxy.Config{HTTPProxy: p.HTTPProxy, HTTPSProxy: p.HTTPSProxy, NoProxy: p.NoProxy}
			if mustProxy {
				cfg = httpproxy.Config{HTTPProxy: rep.Proxy.HTTP, HTTPSProxy: rep.Proxy.HTTPS, NoProxy: global.NoProxy}
			}
			leaks := leaked(p, cfg, hosts)
			if p.Proxied {
				rep.Proxied++
				f.Leaks = leaks
			}
		}
		f.NoCA = platformCA && !p.MountsCA && callsPlatform(p)
	}
	for h := range hosts {
		rep.NoProxyAdd = append(rep.NoProxyAdd, h)
	}
	sort.Strings(rep.NoProxyAdd)
	return rep
}

// leaked returns the in-cluster destinations of p that cfg sends to the
// proxy, adding their hosts to hosts.
func leaked(p PodEgress, cfg httpproxy.Config, hosts map[string]bool) []string {
	via := cfg.ProxyFunc()
	var leaks []string
	for _, d := range p.Dests {
		if d.External {
			continue
		}
		if px, err := via(d.URL); err == nil && px != nil {
			leaks = append(leaks, d.Label())
			hosts[d.URL.Hostname()] = true
		}
	}
	return leaks
}

func callsPlatform(p PodEgress) bool {
	for _, d := range p.Dests {
		if d.What == WhatPlatform {
			return true
		}
	}
	return false
}
