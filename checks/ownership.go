package checks

// Helpers of the checks that judge who owns an object: Helm's ownership
// metadata, its description and the patch that adopts an object, and the
// workloads a release owns.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// upgradeTargetWorkloads returns the Deployments and StatefulSets the
// upgrade's target renders, as the cluster reads workloads (labels, pod
// labels, images); known is false when the target is not at hand (no
// chart, it does not render, Helm refuses the release).
func upgradeTargetWorkloads(ctx context.Context, env *Env) (ws []cluster.Workload, known bool, err error) {
	if _, skip, err := renderingForChecks(ctx, env); skip != nil || err != nil {
		return nil, false, err
	}
	u, err := env.Upgrade(ctx)
	if err != nil {
		return nil, false, err
	}
	specs, err := renderedWorkloads(env, u.Target)
	if err != nil {
		return nil, false, err
	}
	for _, s := range specs {
		w := cluster.Workload{Kind: s.Kind, Namespace: s.Namespace, Name: s.Name, PodLabels: s.Template.Labels}
		switch {
		case s.Hook != "":
			continue
		case s.Deployment != nil:
			w.Labels = s.Deployment.Labels
		case s.StatefulSet != nil:
			w.Labels = s.StatefulSet.Labels
		default:
			continue
		}
		for _, c := range s.Spec.Containers {
			w.Containers = append(w.Containers, cluster.Container{Name: c.Name, Image: c.Image})
		}
		ws = append(ws, w)
	}
	return ws, true, nil
}

// ownedByRelease reports whether Helm ownership annotations name the
// release in.ReleaseName in namespace in.Namespace: the object belongs to
// the release a --upgrade run upgrades (Helm's own ownership test,
// pkg/action/validate.go checkOwnership, reads the same two annotations).
func ownedByRelease(annotations map[string]string, in Inputs) bool {
	return annotations[HelmReleaseNameAnnotation] == in.ReleaseName &&
		annotations[HelmReleaseNamespaceAnnotation] == in.Namespace
}

// ownedWorkloads returns the workloads of lists the release being upgraded
// owns, keyed Kind/namespace/name.
func ownedWorkloads(in Inputs, lists ...[]cluster.Workload) map[string]bool {
	out := map[string]bool{}
	for _, ws := range lists {
		for i := range ws {
			if ownedByRelease(ws[i].Annotations, in) {
				out[ws[i].Kind+"/"+ws[i].Namespace+"/"+ws[i].Name] = true
			}
		}
	}
	return out
}

// createdByHelm returns whether Helm will create an object of the rendering
// (and so check its ownership) rather than update it: in an --upgrade run,
// the objects of the revision Helm upgrades from are updated without the
// check (chart.Upgrade.InCurrent); before an install every object is
// created.
func createdByHelm(ctx context.Context, env *Env) (func(chart.Object) bool, error) {
	if !env.Upgrading() {
		return func(chart.Object) bool { return true }, nil
	}
	u, err := env.Upgrade(ctx)
	if err != nil {
		return nil, err
	}
	in, err := u.InCurrent()
	if err != nil {
		return nil, err
	}
	return func(o chart.Object) bool { return !in(o) }, nil
}

// describeOwner names the release an object's annotations say owns it, and
// returns its record when that release still exists (and is not rel in ns).
func describeOwner(records map[string]cluster.HelmRecord, annotations map[string]string, rel, ns string) (string, *cluster.HelmRecord) {
	oRel, oNS := annotations[HelmReleaseNameAnnotation], annotations[HelmReleaseNamespaceAnnotation]
	if oRel == "" {
		return "no owner", nil
	}
	if oRel == rel && oNS == ns {
		return "this release", nil
	}
	if rec, ok := records[oNS+"/"+oRel]; ok {
		return fmt.Sprintf("owned by %s release %s in namespace %s", rec.Status, oRel, orNone(oNS)), &rec
	}
	return fmt.Sprintf("owner release %s in namespace %s no longer exists", oRel, orNone(oNS)), nil
}

// ownershipPatch is the JSON merge patch that sets the label and annotation
// fields (metadata.labels[k] / metadata.annotations[k] = New) with
// resourceVersion as the conflict guard: the API server refuses it when the
// object changed since it was read.
func ownershipPatch(fields []FieldChange, resourceVersion string) ([]byte, error) {
	labels, annotations := map[string]string{}, map[string]string{}
	for _, f := range fields {
		key := f.Field[strings.IndexByte(f.Field, '[')+1 : len(f.Field)-1]
		if strings.HasPrefix(f.Field, "metadata.labels[") {
			labels[key] = f.New
		} else {
			annotations[key] = f.New
		}
	}
	meta := map[string]any{"resourceVersion": resourceVersion}
	if len(labels) > 0 {
		meta["labels"] = labels
	}
	if len(annotations) > 0 {
		meta["annotations"] = annotations
	}
	return json.Marshal(map[string]any{"metadata": meta})
}
