package checks

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/ingressclass"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/installed"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// Open Service Mesh names the check looks for. Sources: the OSM v0.8 ingress
// guide, https://release-v0-8.docs.openservicemesh.io/docs/tasks_usage/traffic_management/ingress/
// (osm-config, use_https_ingress, the ingress-nginx HTTPS annotations and
// osm-ca-bundle), the OSM v1.0 ingress guide,
// https://release-v1-0.docs.openservicemesh.io/docs/guides/traffic_management/ingress/
// (IngressBackend), and OSM's source, https://github.com/openservicemesh/osm
// (pkg/apis/policy/v1alpha1/ingress_backend.go; pkg/constants/constants.go
// for openservicemesh.io/monitored-by).
const (
	osmControllerName = "osm-controller"
	osmConfigMapName  = "osm-config"
	osmCABundleSecret = "osm-ca-bundle"
	osmHTTPSIngress   = "use_https_ingress"
)

// The runtime's backend: Service internal-router, port 80 → target port
// "http", the container port 8080 of Deployment internal-router, whose
// ServiceAccount is internal-router
// (https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/_components/internal-router/_service.yaml,
// .../_components/internal-router/_deployment.yaml). OSM matches an
// IngressBackend's backend port against the Service's target port, not its
// port (pkg/compute/kube/client.go GetIngressBackendPolicyForService:
// backend.Port.Number == svc.TargetPort; the v1.0 guide's example says
// "targetPort of httpbin service").
const (
	internalRouterTargetPort = 8080
	internalRouterSA         = plan.InternalRouterName
)

// Annotations of ingress-nginx for HTTPS to an OSM v0.8 backend (the v0.8
// guide, "Sample Ingress Configurations", HTTPS ingress).
const (
	nginxBackendProtocol = "nginx.ingress.kubernetes.io/backend-protocol"
	nginxConfigSnippet   = "nginx.ingress.kubernetes.io/configuration-snippet"
	nginxProxySSLSecret  = "nginx.ingress.kubernetes.io/proxy-ssl-secret"
	nginxProxySSLServer  = "nginx.ingress.kubernetes.io/proxy-ssl-server-name"
	nginxProxySSLVerify  = "nginx.ingress.kubernetes.io/proxy-ssl-verify"
)

// OSMIngress checks, when Open Service Mesh monitors the runtime namespace
// (label openservicemesh.io/monitored-by), that OSM admits ingress traffic to
// the runtime's internal-router; its sidecar refuses it otherwise.
//   - OSM v0.10 and later (the IngressBackend API): an IngressBackend in the
//     runtime namespace has backend internal-router, port 8080 (the target
//     port), protocol http, and a source that is the ingress controller's
//     Service (or any Service when it is unknown, e.g. in service-mesh mode)
//     or an IPRange.
//   - OSM v0.8 (ConfigMap osm-config): HTTP ingress is admitted by default;
//     with use_https_ingress "true" the runtime Ingress (before install: the
//     values' global.runtime.ingress.annotations) carries the guide's
//     ingress-nginx HTTPS backend annotations, with proxy_ssl_name
//     "internal-router.<namespace>.cluster.local" and proxy-ssl-secret
//     "<osm namespace>/osm-ca-bundle", and that Secret exists.
//
// Before install a missing policy is a warn whose hint is the exact object to
// apply after install; with --post it is a fail. Tunnel mode (checked first,
// without reading the cluster), OSM not installed, the namespace absent or
// not monitored, or OSM v0.9 (MeshConfig without IngressBackend): skip,
// saying which.
func OSMIngress() Check {
	return Check{
		Meta: Meta{
			ID:       "osm-ingress",
			Impact:   ImpactRuntimeBreaks,
			Category: CategoryServiceMesh,
			Modes:    ModePre | ModePost,
			Title:    "Open Service Mesh admits ingress traffic to internal-router (IngressBackend, or v0.8 HTTPS ingress annotations)",
			Severity: SeverityFail,
			Requires: []string{"cluster-reachable"},
			Applies:  Applies{Access: []AccessMode{AccessIngress, AccessServiceMesh}},
		},
		Run: runOSMIngress,
	}
}

// osmInstall is what the cluster shows of OSM.
type osmInstall struct {
	ingressBackendCRD, meshConfigCRD bool
	controllerNS                     string // namespace of Deployment osm-controller
	configNS                         string // namespace of ConfigMap osm-config (v0.8)
}

func (o osmInstall) present() bool {
	return o.ingressBackendCRD || o.meshConfigCRD || o.controllerNS != "" || o.configNS != ""
}

// namespace is OSM's control-plane namespace (osm-system by default).
func (o osmInstall) namespace() string {
	if o.configNS != "" {
		return o.configNS
	}
	if o.controllerNS != "" {
		return o.controllerNS
	}
	return "osm-system"
}

func detectOSM(env *Env) (osmInstall, error) {
	var o osmInstall
	crds, err := env.Cluster.CRDs()
	if err != nil {
		return o, err
	}
	for _, c := range crds {
		switch c.Name {
		case cluster.OSMIngressBackendCRD:
			o.ingressBackendCRD = true
		case cluster.OSMMeshConfigCRD:
			o.meshConfigCRD = true
		}
	}
	deps, err := env.Cluster.Deployments()
	if err != nil {
		return o, err
	}
	for _, d := range deps {
		if d.Name == osmControllerName {
			o.controllerNS = d.Namespace
			break
		}
	}
	cms, err := env.Cluster.ConfigMapsNamed(osmConfigMapName)
	if err != nil {
		return o, err
	}
	for _, cm := range cms {
		if o.controllerNS == "" || cm.Namespace == o.controllerNS {
			o.configNS = cm.Namespace
			break
		}
	}
	return o, nil
}

func runOSMIngress(_ context.Context, env *Env) (Result, error) {
	// Before the install, the runner skips tunnel mode (Applies). After it,
	// the installed runtime's mode is read from the cluster, first: in tunnel
	// mode (the chart's default) nothing enters the namespace from outside
	// the mesh, and no OSM lookup is spent.
	mode, class := env.Inputs.AccessMode, env.Inputs.IngressClass
	var facts installed.Facts
	if env.Post() {
		var err error
		if facts, err = runtimeFacts(env); err != nil {
			return Result{}, err
		}
		mode, class = facts.Mode, facts.Class
		if mode == AccessTunnel || mode == "" {
			return Skip("access mode tunnel: the tunnel client reaches internal-router from inside the namespace, no ingress traffic to admit"), nil
		}
	}

	osm, err := detectOSM(env)
	if err != nil {
		return Result{}, err
	}
	if !osm.present() {
		return Skip("Open Service Mesh is not installed (no %s Deployment, no %s or %s CRD, no %s ConfigMap)",
			osmControllerName, cluster.OSMIngressBackendCRD, cluster.OSMMeshConfigCRD, osmConfigMapName), nil
	}
	ns := env.Inputs.Namespace
	n, err := env.Cluster.Namespace(ns)
	if err != nil {
		return Result{}, err
	}
	if !n.Exists {
		return Skip("namespace %s does not exist yet, so Open Service Mesh does not monitor it (after `osm namespace add %s`, run this check again)", ns, ns), nil
	}
	mesh := n.Labels[cluster.OSMMonitoredByLabel]
	if mesh == "" {
		return Skip("namespace %s is not monitored by Open Service Mesh (no %s label)", ns, cluster.OSMMonitoredByLabel), nil
	}

	_, served, err := env.Cluster.OSMIngressBackends(ns)
	if err != nil {
		return Result{}, err
	}
	switch {
	case osm.ingressBackendCRD || served:
		return osmIngressBackend(env, mesh, mode, class)
	case osm.configNS != "":
		return osmV08(env, osm, mode, class, facts)
	default:
		return Skip("Open Service Mesh without the IngressBackend API (v0.10+) or the %s ConfigMap (v0.8), e.g. v0.9: not covered by this check", osmConfigMapName), nil
	}
}

// ingressSource returns the ingress controller's Service for class, nil
// when it is not known.
func ingressSource(env *Env, mode AccessMode, class string) (*cluster.Service, error) {
	if mode != AccessIngress || class == "" {
		return nil, nil
	}
	e := *env
	e.Inputs.IngressClass = class
	ic, err := lookupIngress(&e)
	if err != nil {
		return nil, err
	}
	return ic.Service, nil
}

func osmIngressBackend(env *Env, mesh string, mode AccessMode, class string) (Result, error) {
	ns := env.Inputs.Namespace
	src, err := ingressSource(env, mode, class)
	if err != nil {
		return Result{}, err
	}
	ibs, _, err := env.Cluster.OSMIngressBackends(ns)
	if err != nil {
		return Result{}, err
	}
	sort.Slice(ibs, func(i, j int) bool { return ibs[i].Name < ibs[j].Name })
	want := "the ingress controller"
	if src != nil {
		want = fmt.Sprintf("the ingress controller's Service %s/%s", src.Namespace, src.Name)
	} else if mode == AccessServiceMesh {
		want = "your mesh gateway"
	}
	var problems []string
	for _, ib := range ibs {
		for _, b := range ib.Backends {
			if b.Name != internalRouterHost {
				continue
			}
			switch {
			case b.Port != internalRouterTargetPort:
				problems = append(problems, fmt.Sprintf("IngressBackend %s has backend internal-router port %d, but OSM matches the target port %d", ib.Name, b.Port, internalRouterTargetPort))
			case !strings.EqualFold(b.Protocol, "http"):
				problems = append(problems, fmt.Sprintf("IngressBackend %s has backend internal-router protocol %q, but internal-router serves http", ib.Name, b.Protocol))
			default:
				if how, ok := admits(ib.Sources, src); ok {
					return Pass("IngressBackend %s admits %s to internal-router:%d over http (namespace %s is in OSM mesh %s)",
						ib.Name, how, internalRouterTargetPort, ns, mesh).
						WithObjects(ObjectRef{Kind: "IngressBackend", Namespace: ns, Name: ib.Name}), nil
				}
				problems = append(problems, fmt.Sprintf("IngressBackend %s admits %s, not %s", ib.Name, describeSources(ib.Sources), want))
			}
		}
	}
	msg := fmt.Sprintf("namespace %s is in OSM mesh %s and no IngressBackend admits %s to internal-router:%d over http, so the sidecar refuses ingress traffic",
		ns, mesh, want, internalRouterTargetPort)
	if len(problems) > 0 {
		msg += ": " + strings.Join(problems, "; ")
	}
	hint := "apply after install (kubectl apply -f -):\n" + IngressBackendYAML(ns, src, mode)
	if env.Post() {
		return Fail("%s", msg).WithHint(hint), nil
	}
	return Warn("%s; create it after install", msg).WithHint(hint), nil
}

// admits reports whether sources admit the ingress controller's Service src
// (any Service when src is nil) or name an IP range (OSM admits the range as
// given), and how.
func admits(sources []cluster.OSMSource, src *cluster.Service) (string, bool) {
	for _, s := range sources {
		switch s.Kind {
		case "Service":
			if src == nil || (s.Name == src.Name && s.Namespace == src.Namespace) {
				return fmt.Sprintf("Service %s/%s", s.Namespace, s.Name), true
			}
		case "IPRange":
			if _, _, err := net.ParseCIDR(s.Name); err == nil {
				return "IP range " + s.Name, true
			}
		}
	}
	return "", false
}

func describeSources(sources []cluster.OSMSource) string {
	if len(sources) == 0 {
		return "no source"
	}
	var out []string
	for _, s := range sources {
		if s.Namespace != "" {
			out = append(out, fmt.Sprintf("%s %s/%s", s.Kind, s.Namespace, s.Name))
		} else {
			out = append(out, s.Kind+" "+s.Name)
		}
	}
	return strings.Join(out, ", ")
}

// IngressBackendYAML is the IngressBackend that admits src (the ingress
// controller's Service; placeholders when nil) to internal-router in
// namespace ns, as the OSM v1.0 ingress guide writes it.
func IngressBackendYAML(ns string, src *cluster.Service, mode AccessMode) string {
	srcNS, srcName := "<ingress-controller-namespace>", "<ingress-controller-service>"
	if mode == AccessServiceMesh {
		srcNS, srcName = "<gateway-namespace>", "<gateway-service>"
	}
	if src != nil {
		srcNS, srcName = src.Namespace, src.Name
	}
	return fmt.Sprintf(`apiVersion: policy.openservicemesh.io/v1alpha1
kind: IngressBackend
metadata:
  name: internal-router
  namespace: %s
spec:
  backends:
  - name: internal-router
    port:
      number: %d
      protocol: http
  sources:
  - kind: Service
    namespace: %s
    name: %s
`, ns, internalRouterTargetPort, srcNS, srcName)
}

// osmV08 applies the v0.8 guide: HTTP ingress is admitted by default; HTTPS
// ingress needs the ingress-nginx annotations and osm-ca-bundle.
func osmV08(env *Env, osm osmInstall, mode AccessMode, class string, facts installed.Facts) (Result, error) {
	ns := env.Inputs.Namespace
	osmNS := osm.namespace()
	cm, err := env.Cluster.ConfigMap(osmNS, osmConfigMapName)
	if err != nil {
		return Result{}, err
	}
	if !strings.EqualFold(strings.TrimSpace(cm.Data[osmHTTPSIngress]), "true") {
		return Pass("OSM v0.8 (%s/%s): %s is not \"true\", so OSM admits HTTP ingress to namespace %s by default", osmNS, osmConfigMapName, osmHTTPSIngress, ns), nil
	}
	if mode != AccessIngress {
		return Skip("OSM v0.8 with %s: the guide covers Kubernetes Ingress, and access mode %s has none", osmHTTPSIngress, mode), nil
	}
	e := *env
	e.Inputs.IngressClass = class
	ic, err := lookupIngress(&e)
	if err != nil {
		return Result{}, err
	}
	want := osmHTTPSAnnotations(ns, osmNS)
	if ic.Class == nil || ic.Class.Controller != ControllerNginxCommunity {
		ctrl := class
		if ic.Class != nil {
			ctrl = ingressclass.Flavour(ic.Class)
		}
		return Warn("OSM v0.8 with %s: HTTPS to the runtime's backends needs %s to trust %s/%s; the guide gives annotations for ingress-nginx only", osmHTTPSIngress, ctrl, osmNS, osmCABundleSecret).
			WithHint("configure the controller as the OSM v0.8 ingress guide describes for it: https://release-v0-8.docs.openservicemesh.io/docs/tasks_usage/traffic_management/ingress/"), nil
	}

	var have map[string]string
	where := "global.runtime.ingress.annotations"
	var refs []ObjectRef
	if env.Post() && facts.IngressFound {
		have = facts.Ingress.Annotations
		where = "Ingress " + facts.Ingress.Name
		refs = append(refs, runtimeIngressRef(facts))
	} else {
		have = env.Inputs.IngressAnnotations
	}
	var problems []string
	for _, k := range []string{nginxBackendProtocol, nginxConfigSnippet, nginxProxySSLSecret, nginxProxySSLVerify} {
		got, ok := have[k]
		switch {
		case !ok:
			problems = append(problems, k+" is missing")
		case k == nginxConfigSnippet:
			if !strings.Contains(got, want[k]) {
				problems = append(problems, fmt.Sprintf("%s lacks %s", k, want[k]))
			}
		case !strings.EqualFold(strings.TrimSpace(got), want[k]):
			problems = append(problems, fmt.Sprintf("%s is %q, want %q", k, got, want[k]))
		}
	}
	ok, err := env.Cluster.SecretExists(osmNS, osmCABundleSecret)
	if err != nil && !cluster.IsForbidden(err) {
		return Result{}, err
	}
	if err == nil && !ok {
		problems = append(problems, fmt.Sprintf("Secret %s/%s does not exist (with a certificate provider other than Tresor, create it with the root certificate as ca.crt)", osmNS, osmCABundleSecret))
	}
	if len(problems) == 0 {
		return Pass("OSM v0.8 HTTPS ingress: %s carries the HTTPS backend annotations for internal-router and %s/%s exists", where, osmNS, osmCABundleSecret).WithObjects(refs...), nil
	}
	msg := fmt.Sprintf("OSM v0.8 (%s/%s) has %s \"true\", so ingress-nginx must reach internal-router over HTTPS: %s: %s",
		osmNS, osmConfigMapName, osmHTTPSIngress, where, strings.Join(problems, "; "))
	hint := "set these annotations in your values and run helm upgrade --install:\n" + osmHTTPSValuesYAML(want)
	if env.Post() {
		return Fail("%s", msg).WithHint(hint).WithObjects(refs...), nil
	}
	return Warn("%s", msg).WithHint(hint), nil
}

// osmHTTPSAnnotations are the v0.8 guide's ingress-nginx annotations for the
// runtime: proxy_ssl_name is <service-account>.<namespace>.cluster.local.
func osmHTTPSAnnotations(ns, osmNS string) map[string]string {
	return map[string]string{
		nginxBackendProtocol: "HTTPS",
		nginxConfigSnippet:   fmt.Sprintf(`proxy_ssl_name "%s.%s.cluster.local";`, internalRouterSA, ns),
		nginxProxySSLSecret:  osmNS + "/" + osmCABundleSecret,
		nginxProxySSLServer:  "on",
		nginxProxySSLVerify:  "on",
	}
}

func osmHTTPSValuesYAML(a map[string]string) string {
	return fmt.Sprintf(`global:
  runtime:
    ingress:
      annotations:
        %s: "%s"
        %s: |
          %s
        %s: "%s"
        %s: "%s"
        %s: "%s"
`, nginxBackendProtocol, a[nginxBackendProtocol], nginxConfigSnippet, a[nginxConfigSnippet],
		nginxProxySSLSecret, a[nginxProxySSLSecret], nginxProxySSLServer, a[nginxProxySSLServer], nginxProxySSLVerify, a[nginxProxySSLVerify])
}
