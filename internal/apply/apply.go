// Package apply sends an upgrade's changes to the API server the way the
// Helm in use will send them, every write a server-side dry run, and
// reports what the API server refuses: Helm 3 (and Helm 4 on a release it
// applied client-side) through Helm's own kube client (helm.sh/helm/v3/pkg/
// kube Client.Update: a three-way merge patch per changed object, creates
// and deletes), Helm 4 on a release it applied server-side with a
// server-side apply of each object under Helm's field manager, without
// forcing conflicts (helm.sh/helm/v4 pkg/kube patchResourceServerSide).
//
// Every request other than GET, HEAD, LIST and WATCH goes through a
// transport that sets dryRun=All on it, so nothing is ever changed, whatever
// the code above it does.
package apply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"helm.sh/helm/v3/pkg/kube"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/admission"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/argocd"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/dryrun"
)

// Method is how Helm applies an upgrade's objects.
type Method string

// Methods.
const (
	// MergePatch is Helm 3's (and Helm 4's on a release it applied
	// client-side): a three-way strategic merge patch (JSON merge patch for
	// custom resources) of the previous manifest, the target and the live
	// object.
	MergePatch Method = "three-way merge patch"
	// ServerSideApply is Helm 4's on a release it applied server-side:
	// server-side apply under Helm's field manager, conflicts not forced.
	ServerSideApply Method = "server-side apply"
	// ClientSideApply is Argo CD's default: `kubectl apply`, a three-way
	// merge patch of the object's last-applied configuration, the target
	// and the live object (Upgrade.Current holds the last-applied
	// configurations), without Helm's release labels; deletes only of
	// Upgrade.Prune.
	ClientSideApply Method = "client-side apply (kubectl apply, last-applied)"
	// ArgoServerSideApply is Argo CD's with the sync option
	// ServerSideApply=true: server-side apply under the field manager
	// argocd-controller, conflicts forced (gitops-engine
	// pkg/utils/kube/resource_ops.go sets ForceConflicts).
	ArgoServerSideApply Method = "server-side apply (argocd-controller, conflicts forced)"
)

// ArgoFieldManager is the field manager Argo CD's application controller
// applies with server-side (argocd-controller).
const ArgoFieldManager = "argocd-controller"

// FieldManager is the field manager Helm 4 applies with: the base name of
// the helm binary (helm.sh/helm/v4 pkg/kube getManagedFieldsManager).
const FieldManager = "helm"

// Upgrade is one upgrade to try: the release, the stored manifest of the
// revision it starts from and the target's manifest (hooks excluded).
type Upgrade struct {
	Release, Namespace string
	Current, Target    string
	// Tracking, for Argo CD's methods, is how Argo CD marks the objects it
	// applies (argocd.Tracking).
	Tracking argocd.Tracking
}

// DryRun sends the upgrade u through the engine e (its identity, every
// write a dry run) with method m, and returns the refusals (none: the API
// server takes it): each an admission.Refusal, the one refusal type of the
// dry runs, with Kind, Namespace and Name set and Reason as Helm would
// print it, parsed into the layer that refused (admission.ParseRefusal).
// Each changed or created object is its own request, up to dryrun.Limit at
// once; the objects Helm reads before it writes are read once, by kind and
// namespace, through the run's shared lists, and the kinds mapped with the
// run's discovery document, both of c (nil: each object read once by
// itself, discovery read again). The error is a failure to try at all (the
// manifests do not build against the cluster's API, the API server is
// unreachable, a replay had no answer).
func DryRun(ctx context.Context, e *dryrun.Engine, c Cluster, u Upgrade, m Method) ([]admission.Refusal, error) {
	refused, err := dryRun(ctx, e, c, u, m)
	if err := e.Unanswered(); err != nil {
		return nil, err
	}
	return refused, err
}

func dryRun(ctx context.Context, e *dryrun.Engine, cl Cluster, u Upgrade, m Method) ([]admission.Refusal, error) {
	c, l, list, err := newClient(e, cl, u.Namespace)
	if err != nil {
		return nil, err
	}
	// The two manifests (megabytes of CRDs each) are decoded at once.
	var original kube.ResourceList
	var origErr error
	built := make(chan struct{})
	go func() {
		defer close(built)
		original, origErr = c.Build(strings.NewReader(u.Current), false)
	}()
	target, err := c.Build(strings.NewReader(u.Target), false)
	<-built
	if origErr != nil {
		return nil, fmt.Errorf("building the objects of the deployed manifest: %w", origErr)
	}
	if err != nil {
		return nil, fmt.Errorf("building the objects of the target manifest: %w", err)
	}
	if m == ClientSideApply || m == ArgoServerSideApply {
		// Argo CD adds its tracking annotation, no Helm release metadata.
		if err := target.Visit(argoTracking(u.Tracking, u.Namespace)); err != nil {
			return nil, err
		}
	} else if err := target.Visit(releaseMetadata(u.Release, u.Namespace)); err != nil {
		return nil, err
	}
	if err := l.prefetch(ctx, list, target, original); err != nil {
		return nil, err
	}
	switch m {
	case ServerSideApply:
		return serverSideApply(ctx, e, target, true, FieldManager, false)
	case ArgoServerSideApply:
		return serverSideApply(ctx, e, target, true, ArgoFieldManager, true)
	case ClientSideApply:
		// Argo CD deletes what it prunes apart from the applies
		// (upgrade-deletes judges it): only the objects the target keeps
		// are patched against their last-applied configuration, and each
		// carries its new one, as kubectl apply writes it (a CRD too large
		// for that annotation is refused here as there).
		original = original.Filter(func(info *resource.Info) bool { return target.Get(info) != nil })
		if err := target.Visit(lastApplied); err != nil {
			return nil, err
		}
	}
	return mergePatch(ctx, e, c, original, target, m == ClientSideApply)
}

// mergePatch sends the upgrade as Helm's kube client does (Client.Update:
// a three-way merge patch of each changed object, a create of each new
// one), one object per call of Helm's own Update, concurrently; the
// refusals are those Helm's one sequential Update reports: the first
// object it cannot read or create stops it (that error alone), else every
// refused patch, joined. The deletes of what the target drops are left
// out: Helm logs their failures and goes on, so they decide nothing.
func mergePatch(ctx context.Context, e *dryrun.Engine, c *kube.Client, original, target kube.ResourceList, clientSide bool) ([]admission.Refusal, error) {
	errs := make([]error, len(target))
	order := sendOrder(target)
	e.Go(ctx, len(target), func(_ context.Context, k int) {
		i := order[k]
		info := target[i]
		var orig kube.ResourceList
		if o := original.Get(info); o != nil {
			orig = kube.ResourceList{o}
		} else if _, err := resource.NewHelper(info.Client, info.Mapping).Get(info.Namespace, info.Name); err == nil && clientSide {
			// kubectl apply of an object with no last-applied
			// configuration: nothing was applied before, every field of
			// the target is sent.
			orig = kube.ResourceList{unapplied(info)}
		} else if err == nil {
			// Helm's upgrade updates, not creates, the objects of the
			// target that are not in the deployed revision but exist (and
			// pass its ownership check: helm-ownership judges that): it
			// adds them to the current objects (pkg/action/upgrade.go,
			// existingResourceConflict).
			orig = kube.ResourceList{info}
		}
		err, noAnswer := askAgain(transientText, func() error {
			_, err := c.Update(orig, kube.ResourceList{info}, false)
			return err
		})
		if noAnswer {
			err = &NoAnswerError{Kind: info.Mapping.GroupVersionKind.Kind, Namespace: info.Namespace, Name: info.Name, Err: err}
		}
		errs[i] = err
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var updates []string
	for _, err := range errs {
		if err == nil {
			continue
		}
		var na *NoAnswerError
		if errors.As(err, &na) {
			return nil, err
		}
		msg := err.Error()
		if strings.HasPrefix(msg, "failed to create resource") || strings.HasPrefix(msg, "could not get information about the resource") {
			return refusals(msg), nil
		}
		updates = append(updates, msg)
	}
	if len(updates) == 0 {
		return nil, nil
	}
	return refusals(strings.Join(updates, " && ")), nil
}

// newClient is Helm's kube client over e's REST config, its reads of live
// objects answered by the returned live, and the lister of cl (nil without
// cl). With cl's discovery document the client maps kinds from it.
func newClient(e *dryrun.Engine, cl Cluster, namespace string) (*kube.Client, *live, Lister, error) {
	cfg := e.RESTConfig()
	l := newLive(cfg)
	cfg.Wrap(l.wrap)
	getter, err := newGetter(cfg, namespace)
	if err != nil {
		return nil, nil, nil, err
	}
	var list Lister
	if cl != nil {
		list = cl.ObjectsJSON
		if groups, resources, err := cl.APIGroupsAndResources(); err == nil && len(groups) > 0 {
			getter.mapper = restmapper.NewDiscoveryRESTMapper(groupResources(groups, resources))
		}
	}
	c := kube.New(getter)
	c.Namespace = namespace
	return c, l, list, nil
}

// groupResources is a discovery document as the REST mapper takes it
// (restmapper.GetAPIGroupResources' assembly).
func groupResources(groups []*metav1.APIGroup, resources []*metav1.APIResourceList) []*restmapper.APIGroupResources {
	byGV := map[string]*metav1.APIResourceList{}
	for _, r := range resources {
		if r != nil {
			byGV[r.GroupVersion] = r
		}
	}
	var out []*restmapper.APIGroupResources
	for _, g := range groups {
		if g == nil {
			continue
		}
		gr := &restmapper.APIGroupResources{Group: *g, VersionedResources: map[string][]metav1.APIResource{}}
		for _, v := range g.Versions {
			if r, ok := byGV[v.GroupVersion]; ok {
				gr.VersionedResources[v.Version] = r.APIResources
			}
		}
		out = append(out, gr)
	}
	return out
}

// refusals splits Helm's joined update errors ("cannot patch \"x\" with
// kind Deployment: ... && cannot patch ...") into one refusal each.
func refusals(msg string) []admission.Refusal {
	var out []admission.Refusal
	for _, part := range strings.Split(msg, " && ") {
		r := admission.ParseRefusal(strings.TrimSpace(part))
		var name, kind string
		if n, _ := fmt.Sscanf(part, "cannot patch %q with kind %s", &name, &kind); n == 2 {
			r.Name, r.Kind = name, strings.TrimSuffix(kind, ":")
		}
		out = append(out, r)
	}
	return out
}

// Existing is a server-side apply of the objects of Manifest (a rendered
// release, "---"-separated YAML) that already exist, labelled and annotated
// for Release in Namespace: what Helm 4's helm install (server-side apply,
// https://helm.sh/docs/) sends for the objects it adopts.
type Existing struct {
	Release, Namespace string
	Manifest           string
}

// DryRunExisting applies through the engine e, as server-side dry runs
// under Helm's field manager with conflicts not forced, every object of ex
// that exists in the cluster (an object that does not exist is created,
// which no field manager can conflict with: it is skipped). It returns the
// refusals, each with the API server's reason ("Apply failed with 1
// conflict: conflict with \"kubectl\" ...: .spec.versions"); the error is
// a failure to try.
func DryRunExisting(ctx context.Context, e *dryrun.Engine, c Cluster, ex Existing) ([]admission.Refusal, error) {
	refused, err := dryRunExisting(ctx, e, c, ex)
	if err := e.Unanswered(); err != nil {
		return nil, err
	}
	return refused, err
}

func dryRunExisting(ctx context.Context, e *dryrun.Engine, cl Cluster, ex Existing) ([]admission.Refusal, error) {
	c, l, list, err := newClient(e, cl, ex.Namespace)
	if err != nil {
		return nil, err
	}
	objs, err := c.Build(strings.NewReader(ex.Manifest), false)
	if err != nil {
		return nil, fmt.Errorf("building the objects of the rendered release: %w", err)
	}
	if err := objs.Visit(releaseMetadata(ex.Release, ex.Namespace)); err != nil {
		return nil, err
	}
	if err := l.prefetch(ctx, list, objs); err != nil {
		return nil, err
	}
	return serverSideApply(ctx, e, objs, false, FieldManager, false)
}

// serverSideApply applies every target object server-side under manager,
// conflicts forced only with force, as dry runs; objects that do not
// exist are created (dry run), as Helm 4 does, when create is true, and
// skipped otherwise.
func serverSideApply(ctx context.Context, e *dryrun.Engine, target kube.ResourceList, create bool, manager string, force bool) ([]admission.Refusal, error) {
	// Each object is its own request: up to dryrun.Limit at once, the
	// refusals in the target's order.
	reasons := make([]string, len(target))
	noAnswer := make([]error, len(target))
	order := sendOrder(target)
	e.Go(ctx, len(target), func(_ context.Context, k int) {
		i := order[k]
		info := target[i]
		h := resource.NewHelper(info.Client, info.Mapping).WithFieldManager(manager).DryRun(true)
		err, lost := askAgain(transient, func() error {
			_, err := h.Get(info.Namespace, info.Name)
			switch {
			case apierrors.IsNotFound(err) && !create:
				return nil
			case apierrors.IsNotFound(err):
				_, err = h.Create(info.Namespace, true, info.Object)
			case err == nil:
				var data []byte
				if data, err = json.Marshal(info.Object); err == nil {
					_, err = h.Patch(info.Namespace, info.Name, types.ApplyPatchType, data, &metav1.PatchOptions{Force: &force})
				}
			}
			return err
		})
		switch {
		case lost:
			noAnswer[i] = &NoAnswerError{Kind: info.Mapping.GroupVersionKind.Kind, Namespace: info.Namespace, Name: info.Name, Err: err}
		case err != nil:
			reasons[i] = err.Error()
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := errors.Join(noAnswer...); err != nil {
		return nil, err
	}
	var out []admission.Refusal
	for i, info := range target {
		if reasons[i] != "" {
			r := admission.ParseRefusal(reasons[i])
			r.Kind, r.Namespace, r.Name = info.Mapping.GroupVersionKind.Kind, info.Namespace, info.Name
			out = append(out, r)
		}
	}
	return out, nil
}

// releaseMetadata labels and annotates each target object for the release,
// as Helm's upgrade does before it applies them (pkg/action/validate.go
// setMetadataVisitor).
func releaseMetadata(release, namespace string) resource.VisitorFunc {
	return func(info *resource.Info, err error) error {
		if err != nil {
			return err
		}
		a, err := meta.Accessor(info.Object)
		if err != nil {
			return err
		}
		labels := a.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels["app.kubernetes.io/managed-by"] = "Helm"
		a.SetLabels(labels)
		ann := a.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann["meta.helm.sh/release-name"] = release
		ann["meta.helm.sh/release-namespace"] = namespace
		a.SetAnnotations(ann)
		return nil
	}
}

// getter is the RESTClientGetter Helm's kube client builds its clients
// from: cfg (whose transport makes every write a dry run), its discovery
// cached in memory, and a namespace.
type getter struct {
	cfg       *rest.Config
	disc      discovery.CachedDiscoveryInterface
	namespace string
	// mapper, when set, maps kinds from the run's discovery document.
	mapper meta.RESTMapper
}

func newGetter(cfg *rest.Config, namespace string) (*getter, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &getter{cfg: cfg, disc: memory.NewMemCacheClient(dc), namespace: namespace}, nil
}

func (g *getter) ToRESTConfig() (*rest.Config, error) { return rest.CopyConfig(g.cfg), nil }

func (g *getter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) { return g.disc, nil }

func (g *getter) ToRESTMapper() (meta.RESTMapper, error) {
	if g.mapper != nil {
		return g.mapper, nil
	}
	return restmapper.NewDeferredDiscoveryRESTMapper(g.disc), nil
}

func (g *getter) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	return clientcmd.NewDefaultClientConfig(*clientcmdapi.NewConfig(), &clientcmd.ConfigOverrides{Context: clientcmdapi.Context{Namespace: g.namespace}})
}

// lastApplied sets kubectl's last-applied-configuration annotation on an
// object to the object itself, as `kubectl apply` does
// (k8s.io/kubectl/pkg/util GetModifiedConfiguration: the object's JSON
// without the annotation).
func lastApplied(info *resource.Info, err error) error {
	if err != nil {
		return err
	}
	a, err := meta.Accessor(info.Object)
	if err != nil {
		return err
	}
	ann := a.GetAnnotations()
	delete(ann, lastAppliedAnnotation)
	a.SetAnnotations(ann)
	b, err := json.Marshal(info.Object)
	if err != nil {
		return err
	}
	if ann == nil {
		ann = map[string]string{}
	}
	ann[lastAppliedAnnotation] = string(b) + "\n"
	a.SetAnnotations(ann)
	return nil
}

// lastAppliedAnnotation is kubectl's (k8s.io/api/core/v1
// LastAppliedConfigAnnotation).
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// unapplied is info with an object that names it and holds nothing else:
// the last-applied configuration of an object nothing applied.
func unapplied(info *resource.Info) *resource.Info {
	cp := *info
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(info.Mapping.GroupVersionKind)
	u.SetName(info.Name)
	u.SetNamespace(info.Namespace)
	cp.Object = u
	return &cp
}

// argoTracking marks each object as Argo CD's repo-server does before the
// controller applies it (argocd.Tracking.Set), leaving out CRDs as it does
// (https://github.com/argoproj/argo-cd/blob/v3.6.1/reposerver/repository/repository.go,
// manifestsFromObjects: !kube.IsCRD); nothing when tr.App is "". dest is
// the Application's destination namespace, which the tracking annotation
// names for a cluster-scoped object.
func argoTracking(tr argocd.Tracking, dest string) resource.VisitorFunc {
	return func(info *resource.Info, err error) error {
		if err != nil || tr.App == "" {
			return err
		}
		gvk := info.Mapping.GroupVersionKind
		if gvk.Group == "apiextensions.k8s.io" && gvk.Kind == "CustomResourceDefinition" {
			return nil
		}
		a, err := meta.Accessor(info.Object)
		if err != nil {
			return err
		}
		ns := info.Namespace
		if ns == "" {
			ns = dest
		}
		labels, annotations := tr.Set(a.GetLabels(), a.GetAnnotations(), gvk.Group, gvk.Kind, ns, info.Name)
		a.SetLabels(labels)
		a.SetAnnotations(annotations)
		return nil
	}
}

// sendOrder is the order in which the dry runs of target are sent
// (dryrun.Order: the cluster-scoped objects first, each group from the
// largest); the results stay in target's order.
func sendOrder(target kube.ResourceList) []int {
	return dryrun.Order(len(target), func(i int) bool { return !target[i].Namespaced() }, func(i int) int {
		if u, ok := target[i].Object.(*unstructured.Unstructured); ok {
			return dryrun.Size(u.Object)
		}
		return 0
	})
}
