package checks

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// Marks of an installed GitOps Runtime (https://github.com/codefresh-io/gitops-runtime-helm/tree/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/_components, https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/codefresh-cm.yaml): the chart's
// name, the ConfigMap every runtime has (also CLI-installed ones) and the
// app-proxy Deployment.
const (
	RuntimeChartName     = "gitops-runtime"
	RuntimeConfigMapName = "codefresh-cm"
	RuntimeAppProxyName  = "cap-app-proxy"
	// runtimeNameLabel carries the runtime name on chart objects (https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/_helpers.tpl#L43-L59).
	runtimeNameLabel = "codefresh.io/runtime-name"
)

// ExistingRuntime fails when a GitOps Runtime is already installed on the
// cluster: "You can install a single GitOps Runtime on a cluster" and, within
// an account, one Hybrid runtime per cluster (https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/,
// introduction and "Number of Hybrid GitOps Runtimes"). It looks for the
// latest revision of any Helm release of chart gitops-runtime (one GET per
// release; release Secrets are listed metadata-only), a codefresh-cm
// ConfigMap (one field-selected, metadata-only list) and a cap-app-proxy
// Deployment (from the shared Deployments).
func ExistingRuntime() Check {
	return Check{
		Meta: Meta{
			ID:       "existing-runtime",
			Impact:   ImpactInstallFails,
			Category: CategoryConflicts,
			Modes:    ModePre,
			Title:    "No GitOps Runtime is already installed on the cluster",
			Severity: SeverityFail,
			Requires: []string{"cluster-reachable"},
		},
		Run: runExistingRuntime,
	}
}

// runtimeFinding is one mark of an installed runtime.
type runtimeFinding struct {
	ref  ObjectRef
	what string
}

func runExistingRuntime(_ context.Context, env *Env) (Result, error) {
	var found []runtimeFinding
	var denied error // first permission error; reported only when nothing is found

	releases, unreadable, err := runtimeReleases(env.Cluster)
	if err = keepDenied(&denied, err); err != nil {
		return Result{}, err
	}
	for _, r := range releases {
		found = append(found, runtimeFinding{
			ref:  ObjectRef{Kind: "Secret", Namespace: r.Namespace, Name: r.SecretName},
			what: fmt.Sprintf("Helm release %s (chart %s-%s, revision %d, %s)", r.Name, r.Chart, r.ChartVersion, r.Version, r.Status),
		})
	}

	cms, err := env.Cluster.ConfigMapsNamed(RuntimeConfigMapName)
	if err = keepDenied(&denied, err); err != nil {
		return Result{}, err
	}
	for _, cm := range cms {
		what := "ConfigMap " + RuntimeConfigMapName
		if n := cm.Labels[runtimeNameLabel]; n != "" {
			what += " (runtime " + n + ")"
		}
		found = append(found, runtimeFinding{ref: ObjectRef{Kind: "ConfigMap", Namespace: cm.Namespace, Name: cm.Name}, what: what})
	}

	deps, err := env.Cluster.Deployments()
	if err = keepDenied(&denied, err); err != nil {
		return Result{}, err
	}
	for _, d := range deps {
		if d.Name == RuntimeAppProxyName {
			found = append(found, runtimeFinding{ref: ObjectRef{Kind: "Deployment", Namespace: d.Namespace, Name: d.Name}, what: "Deployment " + RuntimeAppProxyName})
		}
	}

	if len(found) == 0 {
		if denied != nil {
			return Result{}, denied
		}
		if len(unreadable) > 0 {
			refs := make([]ObjectRef, len(unreadable))
			names := make([]string, len(unreadable))
			for i, u := range unreadable {
				refs[i] = ObjectRef{Kind: "Secret", Namespace: u.Namespace, Name: u.SecretName}
				names[i] = u.Namespace + "/" + u.Name + " (" + u.Unreadable + ")"
			}
			return Warn("no %s Helm release, %s ConfigMap or %s Deployment found, but %d Helm release(s) could not be read, so their chart is unknown: %s",
				RuntimeChartName, RuntimeConfigMapName, RuntimeAppProxyName, len(unreadable), strings.Join(names, ", ")).
				WithHint("inspect these release Secrets (kubectl get secret -n NAMESPACE NAME); a payload this large is not a real Helm release and may be an attempt to exhaust memory").
				WithObjects(refs...), nil
		}
		return Pass("no %s Helm release, %s ConfigMap or %s Deployment in the cluster", RuntimeChartName, RuntimeConfigMapName, RuntimeAppProxyName), nil
	}
	return Fail("a GitOps Runtime is already installed: %s", describeRuntimeFindings(found)).
		WithHint(existingRuntimeHint(found, env.Inputs)).
		WithObjects(refsOf(found)...), nil
}

// runtimeReleases returns the latest revision of every Helm release whose
// chart is gitops-runtime. The chart name is only in the release payload, so
// each release's latest revision is read (GETs, at most 4 at a time).
// Releases whose payload is over cluster.MaxReleaseSize decompressed are
// returned apart, undecoded.
func runtimeReleases(snap *cluster.Snapshot) (runtime, unreadable []cluster.HelmReleaseSummary, err error) {
	revs, err := snap.HelmRevisions()
	if err != nil {
		return nil, nil, err
	}
	latest := cluster.LatestHelmRevisions(revs)
	sums := make([]cluster.HelmReleaseSummary, len(latest))
	var g errgroup.Group
	g.SetLimit(4)
	for i, rev := range latest {
		g.Go(func() error {
			s, err := snap.HelmReleaseSummary(rev)
			sums[i] = s
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	for _, s := range sums {
		switch {
		case s.Unreadable != "":
			unreadable = append(unreadable, s)
		case s.Chart == RuntimeChartName:
			runtime = append(runtime, s)
		}
	}
	return runtime, unreadable, nil
}

func describeRuntimeFindings(found []runtimeFinding) string {
	byNS := map[string][]string{}
	for _, f := range found {
		byNS[f.ref.Namespace] = append(byNS[f.ref.Namespace], f.what)
	}
	nss := make([]string, 0, len(byNS))
	for ns := range byNS {
		nss = append(nss, ns)
	}
	sort.Strings(nss)
	parts := make([]string, len(nss))
	for i, ns := range nss {
		parts[i] = fmt.Sprintf("in namespace %s: %s", ns, strings.Join(byNS[ns], ", "))
	}
	return strings.Join(parts, "; ")
}

func existingRuntimeHint(found []runtimeFinding, in Inputs) string {
	h := "only one Hybrid GitOps Runtime per cluster: install this one on another cluster, " +
		"or uninstall the existing runtime first (helm uninstall <release> -n <namespace>, and remove it from the Codefresh platform)"
	for _, f := range found {
		if f.ref.Kind == "Secret" && f.ref.Namespace == in.Namespace && strings.HasPrefix(f.ref.Name, "sh.helm.release.v1."+in.ReleaseName+".v") {
			h += fmt.Sprintf("\nrelease %s already exists in namespace %s: to change it, use helm upgrade, not helm install, and check that upgrade first: kubectl gitops-preflight --upgrade -n %s --release-name %s --chart <chart> -f <values>", in.ReleaseName, in.Namespace, in.Namespace, in.ReleaseName)
			break
		}
	}
	return h
}

func refsOf(found []runtimeFinding) []ObjectRef {
	out := make([]ObjectRef, len(found))
	for i, f := range found {
		out[i] = f.ref
	}
	return out
}

// keepDenied records the first permission error in *denied (one signal
// failing for lack of permission must not hide the others) and returns any
// other error.
func keepDenied(denied *error, err error) error {
	if err == nil || !cluster.IsForbidden(err) {
		return err
	}
	if *denied == nil {
		*denied = err
	}
	return nil
}
