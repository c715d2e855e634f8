package checks

import (
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/installed"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// osmWorld is a cluster for osm-ingress: which OSM generation is installed,
// the runtime namespace's label, an ingress-nginx controller with its
// published Service, IngressBackends and the v0.8 osm-config.
type osmWorld struct {
	ibCRD, meshConfigCRD, controller bool
	osmConfig                        map[string]string // nil: no osm-config
	caBundle                         bool
	nsExists                         bool
	monitored                        bool
	backends                         []string // IngressBackend YAML documents
	runtimeIngressAnnotations        map[string]string
}

func (w osmWorld) env(t *testing.T, in Inputs) *Env {
	t.Helper()
	objs := []runtime.Object{
		ingressClass("nginx", ControllerNginxCommunity),
		&appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ingress-nginx", Name: "ingress-nginx-controller"},
			Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "controller", Image: "registry.k8s.io/ingress-nginx/controller:v1.12.0",
				Args: []string{"/nginx-ingress-controller", "--publish-service=$(POD_NAMESPACE)/ingress-nginx-controller"},
			}}}}},
		},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ingress-nginx", Name: "ingress-nginx-controller"},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer}},
	}
	var metaObjs []runtime.Object
	crd := func(name string) {
		metaObjs = append(metaObjs, &metav1.PartialObjectMetadata{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
			ObjectMeta: metav1.ObjectMeta{Name: name},
		})
	}
	if w.ibCRD {
		crd(cluster.OSMIngressBackendCRD)
	}
	if w.meshConfigCRD {
		crd(cluster.OSMMeshConfigCRD)
	}
	if w.controller {
		objs = append(objs, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "osm-system", Name: "osm-controller"}})
	}
	if w.osmConfig != nil {
		objs = append(objs, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "osm-system", Name: "osm-config"}, Data: w.osmConfig})
		metaObjs = append(metaObjs, &metav1.PartialObjectMetadata{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "osm-system", Name: "osm-config"},
		})
	}
	if w.caBundle {
		metaObjs = append(metaObjs, secretMeta("osm-system", "osm-ca-bundle"))
	}
	if w.nsExists {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "codefresh"}}
		if w.monitored {
			ns.Labels = map[string]string{"openservicemesh.io/monitored-by": "osm"}
		}
		objs = append(objs, ns)
	}
	if w.runtimeIngressAnnotations != nil {
		cls := "nginx"
		objs = append(objs, &networkingv1.Ingress{
			ObjectMeta: metav1.ObjectMeta{Namespace: "codefresh", Name: installed.IngressName, Annotations: w.runtimeIngressAnnotations},
			Spec:       networkingv1.IngressSpec{IngressClassName: &cls, Rules: []networkingv1.IngressRule{{Host: "rt.example.com"}}},
		})
	}
	return newKit(t, w.backends...).objects(objs...).objects(metaObjs...).with(in).env()
}

func ingressBackend(name, backend string, port int, protocol string, sources string) string {
	return `apiVersion: policy.openservicemesh.io/v1alpha1
kind: IngressBackend
metadata:
  name: ` + name + `
  namespace: codefresh
spec:
  backends:
  - name: ` + backend + `
    port:
      number: ` + strconv.Itoa(port) + `
      protocol: ` + protocol + `
  sources:
` + sources
}

const nginxSource = "  - kind: Service\n    namespace: ingress-nginx\n    name: ingress-nginx-controller\n"

// osmCase is one osm-ingress case: the cluster, the run, and the status
// and texts (of the message or the hint) expected.
type osmCase struct {
	name  string
	world osmWorld
	in    osmRun
	want  Status
	text  []string
}

// runOSMCases runs each case through the kit.
func runOSMCases(t *testing.T, tests []osmCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := tt.world.env(t, tt.in.Inputs)
			env.Mode = tt.in.mode
			got := runThrough(t, OSMIngress(), env)
			if got.Status != tt.want {
				t.Fatalf("status %s (%s; hint %q), want %s", got.Status, got.Message, got.Hint, tt.want)
			}
			for _, s := range tt.text {
				if !strings.Contains(got.Message, s) && !strings.Contains(got.Hint, s) {
					t.Errorf("message %q / hint %q lacks %q", got.Message, got.Hint, s)
				}
			}
		})
	}
}

var (
	osmIngressMode = Inputs{AccessMode: AccessIngress, IngressClass: "nginx", IngressHost: "rt.example.com"}
	osmMeshMode    = Inputs{AccessMode: AccessServiceMesh, IngressURL: "https://rt.example.com"}
)

func osmWith(w osmWorld, f func(*osmWorld)) osmWorld { f(&w); return w }
func osmPost(in Inputs) osmRun                       { return osmRun{in, ModePost} }
func osmPre(in Inputs) osmRun                        { return osmRun{in, ModePre} }

// TestOSMIngress: whether OSM is there and monitors the namespace, and the
// IngressBackend API (v0.10 and later).
func TestOSMIngress(t *testing.T) {
	ingress, mesh := osmIngressMode, osmMeshMode
	v10 := osmWorld{ibCRD: true, meshConfigCRD: true, controller: true, nsExists: true, monitored: true}
	with, post, pre := osmWith, osmPost, osmPre
	runOSMCases(t, []osmCase{
		{"no OSM", osmWorld{nsExists: true, monitored: true}, pre(ingress), StatusSkip, []string{"Open Service Mesh is not installed"}},
		{"namespace absent", with(v10, func(w *osmWorld) { w.nsExists = false }), pre(ingress), StatusSkip, []string{"namespace codefresh does not exist yet"}},
		{"not monitored", with(v10, func(w *osmWorld) { w.monitored = false }), pre(ingress), StatusSkip, []string{"not monitored by Open Service Mesh", "openservicemesh.io/monitored-by"}},
		{"tunnel", v10, pre(Inputs{AccessMode: AccessTunnel}), StatusSkip, []string{NotApplicable + "access mode is tunnel"}},
		{"tunnel after install", v10, post(Inputs{AccessMode: AccessTunnel}), StatusSkip, []string{"access mode tunnel: the tunnel client"}},
		{"CRD without MeshConfig is OSM too", osmWorld{ibCRD: true, nsExists: true, monitored: true}, pre(ingress), StatusWarn, []string{"no IngressBackend admits"}},
		{"controller only: generation unknown", osmWorld{controller: true, nsExists: true, monitored: true}, pre(ingress), StatusSkip, []string{"without the IngressBackend API"}},
		{"v0.10 no IngressBackend, pre", v10, pre(ingress), StatusWarn, []string{"OSM mesh osm", "no IngressBackend admits the ingress controller's Service ingress-nginx/ingress-nginx-controller to internal-router:8080", "create it after install", "name: ingress-nginx-controller", "number: 8080"}},
		{"v0.10 no IngressBackend, post", v10, post(ingress), StatusFail, []string{"no IngressBackend admits"}},
		{"v0.10 admitted", with(v10, func(w *osmWorld) {
			w.backends = []string{ingressBackend("internal-router", "internal-router", 8080, "http", nginxSource)}
		}), pre(ingress), StatusPass,
			[]string{"IngressBackend internal-router admits Service ingress-nginx/ingress-nginx-controller to internal-router:8080"}},
		{"v0.10 admitted, post", with(v10, func(w *osmWorld) {
			w.backends = []string{ingressBackend("ib", "internal-router", 8080, "http", nginxSource)}
		}), post(ingress), StatusPass, nil},
		{"v0.10 service port, not target port", with(v10, func(w *osmWorld) {
			w.backends = []string{ingressBackend("ib", "internal-router", 80, "http", nginxSource)}
		}), post(ingress), StatusFail,
			[]string{"IngressBackend ib has backend internal-router port 80, but OSM matches the target port 8080"}},
		{"v0.10 https protocol", with(v10, func(w *osmWorld) {
			w.backends = []string{ingressBackend("ib", "internal-router", 8080, "https", nginxSource)}
		}), pre(ingress), StatusWarn,
			[]string{`protocol "https", but internal-router serves http`}},
		{"v0.10 other source", with(v10, func(w *osmWorld) {
			w.backends = []string{ingressBackend("ib", "internal-router", 8080, "http", "  - kind: Service\n    namespace: other\n    name: gw\n")}
		}), post(ingress), StatusFail, []string{"IngressBackend ib admits Service other/gw, not the ingress controller's Service ingress-nginx/ingress-nginx-controller"}},
		{"v0.10 other backend only", with(v10, func(w *osmWorld) { w.backends = []string{ingressBackend("ib", "httpbin", 14001, "http", nginxSource)} }), pre(ingress), StatusWarn, []string{"no IngressBackend admits"}},
		{"v0.10 IP range", with(v10, func(w *osmWorld) {
			w.backends = []string{ingressBackend("ib", "internal-router", 8080, "http", "  - kind: IPRange\n    name: 10.0.0.0/8\n")}
		}), pre(ingress), StatusPass, []string{"admits IP range 10.0.0.0/8"}},
		{"v0.10 bad IP range", with(v10, func(w *osmWorld) {
			w.backends = []string{ingressBackend("ib", "internal-router", 8080, "http", "  - kind: IPRange\n    name: ten\n")}
		}), pre(ingress), StatusWarn, []string{"admits IPRange ten"}},
		{"v0.10 service-mesh, any Service", with(v10, func(w *osmWorld) {
			w.backends = []string{ingressBackend("ib", "internal-router", 8080, "http", "  - kind: Service\n    namespace: istio-system\n    name: gw\n")}
		}), pre(mesh), StatusPass, []string{"admits Service istio-system/gw"}},
		{"v0.10 service-mesh, none", v10, pre(mesh), StatusWarn, []string{"no IngressBackend admits your mesh gateway", "<gateway-namespace>"}},
		{"v0.9", osmWorld{meshConfigCRD: true, controller: true, nsExists: true, monitored: true}, pre(ingress), StatusSkip, []string{"v0.9"}},
	})
}

// TestOSMIngressV08: OSM v0.8's HTTPS ingress (use_https_ingress) and the
// ingress-nginx annotations it needs.
func TestOSMIngressV08(t *testing.T) {
	ingress, mesh := osmIngressMode, osmMeshMode
	with, post, pre := osmWith, osmPost, osmPre
	httpsAnn := osmHTTPSAnnotations("codefresh", "osm-system")
	v08 := osmWorld{controller: true, nsExists: true, monitored: true, caBundle: true, osmConfig: map[string]string{"use_https_ingress": "true"}}
	runOSMCases(t, []osmCase{
		{"v0.8 http", with(v08, func(w *osmWorld) { w.osmConfig = map[string]string{"use_https_ingress": "false"} }), pre(ingress), StatusPass, []string{"admits HTTP ingress"}},
		{"v0.8 https, no annotations, pre", v08, pre(ingress), StatusWarn, []string{"use_https_ingress \"true\"", "nginx.ingress.kubernetes.io/backend-protocol is missing", `proxy_ssl_name "internal-router.codefresh.cluster.local";`}},
		{"v0.8 https, annotations in values", v08, pre(withValues(ingress, httpsAnn)), StatusPass, []string{"global.runtime.ingress.annotations carries the HTTPS backend annotations"}},
		{"v0.8 https, no CA bundle", with(v08, func(w *osmWorld) { w.caBundle = false }), pre(withValues(ingress, httpsAnn)), StatusWarn, []string{"Secret osm-system/osm-ca-bundle does not exist"}},
		{"v0.8 https, Ingress without annotations, post", with(v08, func(w *osmWorld) { w.runtimeIngressAnnotations = map[string]string{nginxBackendProtocol: "HTTP"} }), post(ingress), StatusFail,
			[]string{"Ingress codefresh-gitops-runtime", `backend-protocol is "HTTP", want "HTTPS"`, "proxy-ssl-verify is missing"}},
		{"v0.8 https, Ingress annotated, post", with(v08, func(w *osmWorld) { w.runtimeIngressAnnotations = httpsAnn }), post(ingress), StatusPass, []string{"Ingress codefresh-gitops-runtime carries"}},
		{"v0.8 https, wrong SAN", with(v08, func(w *osmWorld) {
			a := map[string]string{}
			for k, v := range httpsAnn {
				a[k] = v
			}
			a[nginxConfigSnippet] = `proxy_ssl_name "httpbin.httpbin.cluster.local";`
			w.runtimeIngressAnnotations = a
		}), post(ingress), StatusFail, []string{"configuration-snippet lacks proxy_ssl_name \"internal-router.codefresh.cluster.local\";"}},
		{"v0.8 https, service-mesh", v08, pre(mesh), StatusSkip, []string{"access mode service-mesh has none"}},
	})
}

func withValues(in Inputs, annotations map[string]string) Inputs {
	a := map[string]any{}
	for k, v := range annotations {
		a[k] = v
	}
	in.Values = map[string]any{"global": map[string]any{"runtime": map[string]any{"ingress": map[string]any{"annotations": a}}}}
	in.IngressAnnotations = plan.Derive(in.Values).IngressAnnotations
	return in
}

// TestIngressBackendYAMLParses: the hint is a valid IngressBackend whose
// fields are the ones the check accepts.
func TestIngressBackendYAMLParses(t *testing.T) {
	y := IngressBackendYAML("codefresh", &cluster.Service{Namespace: "ingress-nginx", Name: "ingress-nginx-controller"}, AccessIngress)
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatalf("%v\n%s", err, y)
	}
	ib := cluster.OSMIngressBackendFrom(u)
	if u.GetKind() != "IngressBackend" || ib.Namespace != "codefresh" || len(ib.Backends) != 1 || ib.Backends[0] != (cluster.OSMBackend{Name: "internal-router", Port: 8080, Protocol: "http"}) {
		t.Fatalf("parsed %+v from\n%s", ib, y)
	}
	if how, ok := admits(ib.Sources, &cluster.Service{Namespace: "ingress-nginx", Name: "ingress-nginx-controller"}); !ok {
		t.Fatalf("the hint's sources %+v do not admit the controller (%s)", ib.Sources, how)
	}
	// The v0.8 values snippet parses to the annotations the check wants.
	var v map[string]any
	want := osmHTTPSAnnotations("codefresh", "osm-system")
	if err := yaml.Unmarshal([]byte(osmHTTPSValuesYAML(want)), &v); err != nil {
		t.Fatal(err)
	}
	got := v["global"].(map[string]any)["runtime"].(map[string]any)["ingress"].(map[string]any)["annotations"].(map[string]any)
	for k, w := range want {
		if s, _ := got[k].(string); strings.TrimSpace(s) != w {
			t.Errorf("values snippet %s = %q, want %q", k, s, w)
		}
	}
}

// osmRun is a TestOSMIngress row's planned install and the run's mode.
type osmRun struct {
	Inputs
	mode Mode
}
