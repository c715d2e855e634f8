// Package netpol evaluates what a rendered release's pods need of the
// network and whether the cluster lets them have it:
//
//   - Egress reads, from a chart rendering, where each pod connects (the
//     platform, the tunnel server, the Git provider, the API server, the
//     release's own Services) and how (its proxy environment, its platform
//     CA mount);
//   - ProxyFindings judges each pod's proxy environment against those
//     destinations, with Go's own proxy matching
//     (golang.org/x/net/http/httpproxy);
//   - Flows and Judge evaluate the NetworkPolicies of networking.k8s.io/v1
//     for each connection, as the Kubernetes documentation gives their
//     semantics (https://kubernetes.io/docs/concepts/services-networking/network-policies/).
//
// It reads plain inputs (a chart.Rendering, cluster summaries, policies)
// and reads nothing from the cluster itself.
package netpol
