package checks

import (
	"context"
	"strings"
	"testing"

	rspb "helm.sh/helm/v3/pkg/release"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	metadatafake "k8s.io/client-go/metadata/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/argocd"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// The check test kit: one builder for a check's environment from Kubernetes
// objects written as YAML (as linkerd's k8s.NewFakeAPI(yaml...)), so a test
// reads like the cluster it describes:
//
//	k := newKit(t, `
//	apiVersion: networking.k8s.io/v1
//	kind: IngressClass
//	metadata: {name: nginx}
//	spec: {controller: k8s.io/ingress-nginx}`).with(Inputs{AccessMode: AccessIngress, IngressClass: "nginx"})
//	r := k.run(IngressControllerCheck())
//
// Every object is served the way the snapshot reads it: built-in kinds by the
// typed client, every object (CRDs and custom resources too) by the
// metadata client, custom resources by the dynamic client. A custom
// resource's API (IngressBackend, VirtualService, NginxIngressController) is
// served only when the YAML holds its CRD or one of its objects; otherwise a
// list of it is a 404, as on a real API server without it.
type kit struct {
	t       *testing.T
	in      Inputs
	typed   []runtime.Object
	meta    []runtime.Object
	dynamic []runtime.Object
	served  map[schema.GroupResource]bool
	seen    map[string]bool // kind/namespace/name already added
	version string
	// apis is the discovery document (serves); nil = the fake's empty one.
	apis []*metav1.APIResourceList
	// rest is the REST configuration of the clients (withREST); nil = none,
	// as a snapshot over fakes has.
	rest *rest.Config
	// chartRef is the chart the run renders (withChart); "" = none. With
	// an upgrade run (inMode(ModeUpgrade)) it is the target of `helm upgrade` of the kit's release.
	chartRef string

	// mode, helmMajor, helmWait and fix are how the run was invoked
	// (Env.Mode, Env.HelmMajor, Env.HelmWait, Env.Fix).
	mode      Mode
	helmMajor int
	helmWait  HelmWait
	fix       FixOptions
	images    ImageOptions

	// Kube is the typed fake, for reactors (errors, counting); set by env().
	Kube *fake.Clientset
}

// dynamicLists are the custom resources the snapshot lists through the
// dynamic client, with their list kinds.
var dynamicLists = map[schema.GroupVersionResource]string{
	cluster.OSMIngressBackendGVR:      "IngressBackendList",
	cluster.NginxIngressControllerGVR: "NginxIngressControllerList",
	cluster.ApplicationResource:       "ApplicationList",
}

func init() {
	for _, v := range virtualServiceVersionsForKit {
		dynamicLists[schema.GroupVersionResource{Group: "networking.istio.io", Version: v, Resource: "virtualservices"}] = "VirtualServiceList"
	}
}

// virtualServiceVersionsForKit are the networking.istio.io versions the
// snapshot tries (cluster.VirtualServices).
var virtualServiceVersionsForKit = []string{"v1", "v1beta1", "v1alpha3"}

// newKit returns a kit holding the objects of docs (YAML, "---"-separated
// documents allowed), with the chart's default inputs and Kubernetes v1.30.0.
func newKit(t *testing.T, docs ...string) *kit {
	t.Helper()
	k := &kit{t: t, served: map[schema.GroupResource]bool{}, seen: map[string]bool{}, version: "v1.30.0",
		in: Inputs{}.WithDefaults()}
	return k.yaml(docs...)
}

// yaml adds the objects of docs.
func (k *kit) yaml(docs ...string) *kit {
	k.t.Helper()
	for _, doc := range docs {
		for _, part := range strings.Split(doc, "\n---") {
			if strings.TrimSpace(part) == "" {
				continue
			}
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(part), &u.Object); err != nil {
				k.t.Fatalf("kit: %v in\n%s", err, part)
			}
			k.add(u)
		}
	}
	return k
}

// objects adds typed objects (built-in kinds).
func (k *kit) objects(objs ...runtime.Object) *kit {
	k.t.Helper()
	for _, o := range objs {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			k.t.Fatal(err)
		}
		obj := &unstructured.Unstructured{Object: u}
		if obj.GetKind() == "" {
			gvks, _, err := scheme.Scheme.ObjectKinds(o)
			if err != nil || len(gvks) == 0 {
				k.t.Fatalf("kit: no kind for %T: %v", o, err)
			}
			obj.SetGroupVersionKind(gvks[0])
		}
		k.add(obj)
	}
	return k
}

func (k *kit) add(u *unstructured.Unstructured) {
	k.t.Helper()
	gvk := u.GroupVersionKind()
	if gvk.Kind == "" {
		k.t.Fatalf("kit: object %q has no kind", u.GetName())
	}
	// The same object given twice (typed, then as metadata for the
	// metadata client) is one object: the first wins.
	key := gvk.GroupKind().String() + "/" + u.GetNamespace() + "/" + u.GetName()
	if k.seen[key] {
		return
	}
	k.seen[key] = true
	rv := u.GetResourceVersion()
	if rv == "" {
		rv = "1"
	}
	k.meta = append(k.meta, &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: u.GetAPIVersion(), Kind: gvk.Kind},
		ObjectMeta: metav1.ObjectMeta{Namespace: u.GetNamespace(), Name: u.GetName(), Labels: u.GetLabels(), Annotations: u.GetAnnotations(), ResourceVersion: rv},
	})
	if gvk.Kind == "CustomResourceDefinition" {
		// A CRD's name is <plural>.<group> (apiextensions validation).
		plural, group, _ := strings.Cut(u.GetName(), ".")
		k.served[schema.GroupResource{Group: group, Resource: plural}] = true
		return
	}
	if scheme.Scheme.Recognizes(gvk) {
		obj, err := scheme.Scheme.New(gvk)
		if err != nil {
			k.t.Fatal(err)
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
			k.t.Fatalf("kit: %s %s: %v", gvk.Kind, u.GetName(), err)
		}
		k.typed = append(k.typed, obj)
		return
	}
	for gvr := range dynamicLists {
		if gvr.Group == gvk.Group && gvr.Version == gvk.Version && dynamicLists[gvr] == gvk.Kind+"List" {
			k.served[gvr.GroupResource()] = true
		}
	}
	k.dynamic = append(k.dynamic, u)
}

// with sets the inputs; the chart's defaults fill an empty runtime name,
// namespace and release name.
func (k *kit) with(in Inputs) *kit {
	k.in = in.WithDefaults()
	return k
}

// imageOptions sets the run's image options (--registry-mirror,
// --registry-check).
func (k *kit) imageOptions(o ImageOptions) *kit { k.images = o; return k }

// inMode sets the run's mode (Env.Mode; default ModePre).
func (k *kit) inMode(m Mode) *kit { k.mode = m; return k }

// helm sets the Helm major version that will install or upgrade
// (Env.HelmMajor, --helm-major).
func (k *kit) helm(major int) *kit { k.helmMajor = major; return k }

// waits sets whether helm install or upgrade runs with --wait
// (Env.HelmWait, --helm-wait; default HelmWaitUnknown).
func (k *kit) waits(w HelmWait) *kit { k.helmWait = w; return k }

// fixing sets the --fix options the planners read (Env.Fix).
func (k *kit) fixing(o FixOptions) *kit { k.fix = o; return k }

// serverVersion sets the API server's gitVersion (default v1.30.0).
func (k *kit) serverVersion(v string) *kit { k.version = v; return k }

// serves adds resources of apiVersion ("v1", "apps/v1") to the discovery
// document: the kinds the API server serves (Snapshot.APIResources). Without
// it the document is empty.
func (k *kit) serves(apiVersion string, resources ...metav1.APIResource) *kit {
	for _, l := range k.apis {
		if l.GroupVersion == apiVersion {
			l.APIResources = append(l.APIResources, resources...)
			return k
		}
	}
	k.apis = append(k.apis, &metav1.APIResourceList{GroupVersion: apiVersion, APIResources: resources})
	return k
}

// withREST gives the clients a REST configuration: what a check that builds
// its own clients from it (upgrade-apply's dry runs) dials.
func (k *kit) withREST(cfg *rest.Config) *kit { k.rest = cfg; return k }

// env builds the Env: a fresh snapshot over the fakes.
func (k *kit) env() *Env {
	k.t.Helper()
	k.Kube = fake.NewClientset(k.typed...)
	disc := k.Kube.Discovery().(*fakediscovery.FakeDiscovery)
	disc.FakedServerVersion = &version.Info{GitVersion: k.version, Major: "1", Minor: "30"}
	disc.Resources = k.apis
	ms := metadatafake.NewTestScheme()
	if err := metav1.AddMetaToScheme(ms); err != nil {
		k.t.Fatal(err)
	}
	meta := metadatafake.NewSimpleMetadataClient(ms, k.meta...)
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), dynamicLists, k.dynamic...)
	for gvr := range dynamicLists {
		if k.served[gvr.GroupResource()] {
			continue
		}
		gr := gvr.GroupResource()
		dyn.PrependReactor("list", gvr.Resource, func(a k8stesting.Action) (bool, runtime.Object, error) {
			if a.GetResource().Group != gr.Group {
				return false, nil, nil
			}
			return true, nil, apierrors.NewNotFound(gr, "")
		})
	}
	clients := &cluster.Clients{Kube: k.Kube, Metadata: meta, Dynamic: dyn, Discovery: disc, Config: k.rest}
	env := &Env{Inputs: k.in, Mode: k.mode, HelmMajor: k.helmMajor, HelmWait: k.helmWait, Fix: k.fix, Images: k.images, Cluster: cluster.NewSnapshot(context.Background(), clients)}
	switch {
	case k.chartRef != "" && k.mode == ModeUpgrade:
		// --upgrade: Helm's upgrade action over the release's revisions
		// the kit holds (as internal/run does).
		snap := env.Cluster
		env.Chart = chart.StartUpgradeOrSync(context.Background(), chart.NewLoader(chart.Source{Ref: k.chartRef}), k.in.ReleaseName, k.in.Namespace, k.in.RenderValues, chart.UpgradeValues{},
			func() ([]*rspb.Release, error) { return snap.HelmHistory(k.in.Namespace, k.in.ReleaseName) },
			func() (*argocd.SyncBase, error) { return argocd.ReadSyncBase(snap, k.in.Namespace, "") },
			func() (chart.Capabilities, error) { return chart.Capabilities{KubeVersion: k.version}, nil })
	case k.chartRef != "":
		env.Chart = startKitChart(k.chartRef, k.in, k.version)
	}
	env.withDefaults()
	return env
}

// run runs c alone on a fresh Env through the runner (applicability first,
// errors resolved as in a run) and returns its result.
func (k *kit) run(c Check) Result {
	k.t.Helper()
	return runThrough(k.t, c, k.env())
}

// outcome is a table case's expectation: the status and substrings of the
// message (or hint).
type outcome struct {
	status Status
	text   []string
}

// expect fails the test unless r has o's status and texts.
func (o outcome) expect(t *testing.T, r Result) {
	t.Helper()
	if r.Status != o.status {
		t.Fatalf("status %s (%q; hint %q), want %s", r.Status, r.Message, r.Hint, o.status)
	}
	for _, s := range o.text {
		if !strings.Contains(r.Message, s) && !strings.Contains(r.Hint, s) {
			t.Errorf("message %q / hint %q lacks %q", r.Message, r.Hint, s)
		}
	}
}

// Short names for reactor signatures in tests.
type (
	k8sAction     = k8stesting.Action
	runtimeObject = runtime.Object
)
