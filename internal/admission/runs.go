package admission

import (
	"context"
	"errors"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/dryrun"
)

// Unjudged says why no dry run judged an object or pod.
type Unjudged int

// The causes of Unjudged.
const (
	// Judged: a dry run judged it.
	Judged Unjudged = iota
	// KindOfPlannedCRD: its kind is defined by a CRD the plan creates.
	KindOfPlannedCRD
	// KindNotServed: discovery does not list its apiVersion and kind.
	KindNotServed
	// NamespaceToCome: its namespace does not exist yet.
	NamespaceToCome
	// Exists: it exists already, and Helm creates no release object that
	// exists (Plan.ExistenceDecides).
	Exists
	// KindNotFound: the API server answered that it does not serve its
	// kind.
	KindNotFound
	// NotSent: the dry run could not be sent (Verdict.Err says why).
	NotSent
)

// Verdict is what one dry run says of one object or pod.
type Verdict struct {
	// Refused is the API server's refusal, parsed; nil when it accepted.
	Refused *Refusal
	// Unjudged says why no dry run judged it (Judged when one did); Err
	// is the failure to send, for NotSent.
	Unjudged Unjudged
	Err      error
	// Warnings are the API server's warnings on the request.
	Warnings []string
	// Object is the API server's answer (the mutated, defaulted object).
	Object *unstructured.Unstructured
}

// Passed reports whether a dry run judged it and the API server admitted
// it.
func (v Verdict) Passed() bool { return v.Unjudged == Judged && v.Refused == nil }

// ObjectRuns are the verdicts of the plan's objects, in plan order.
type ObjectRuns struct {
	Plan     *Plan
	Verdicts []Verdict
	// Namespace is the verdict of the release namespace's own dry run
	// (helm install --create-namespace) when it does not exist, else nil.
	Namespace *Verdict
}

var (
	namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	podsGVR       = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
)

// DryRunObjects dry-runs the create of each of the plan's objects that a
// dry run can judge, and of the release namespace when it does not exist,
// through e. exists says whether an object exists (asked only of those
// whose existence decides: Plan.ExistenceDecides); a dry-run create of one
// that exists judges a request Helm never sends. The error is a replay
// without an answer (dryrun.Engine.Unanswered).
func DryRunObjects(ctx context.Context, e *dryrun.Engine, p *Plan, exists func(Object) bool) (*ObjectRuns, error) {
	runs := &ObjectRuns{Plan: p, Verdicts: make([]Verdict, len(p.Objects))}
	var reqs []dryrun.Request
	var idx []int
	crds := p.PlannedCRDs()
	for i, o := range p.Objects {
		switch {
		case !o.Served && crds[o.Obj.Group()+"/"+o.Obj.Kind]:
			runs.Verdicts[i].Unjudged = KindOfPlannedCRD
		case !o.Served:
			runs.Verdicts[i].Unjudged = KindNotServed
		case o.Namespaced && !p.NamespaceExists:
			runs.Verdicts[i].Unjudged = NamespaceToCome
		case p.ExistenceDecides(o) && exists(o):
			runs.Verdicts[i].Unjudged = Exists
		default:
			reqs = append(reqs, dryrun.Request{Resource: o.Resource, Namespace: o.RequestNamespace(), Object: o.U})
			idx = append(idx, i)
		}
	}
	if !p.NamespaceExists {
		nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
			"metadata": map[string]any{"name": p.Namespace, "labels": map[string]any{"name": p.Namespace}}}}
		reqs = append(reqs, dryrun.Request{Resource: namespacesGVR, Object: nsObj})
		idx = append(idx, -1)
	}
	answers := e.Create(ctx, reqs)
	if err := e.Unanswered(); err != nil {
		return nil, err
	}
	for k, a := range answers {
		v := verdictOf(a)
		if idx[k] < 0 {
			runs.Namespace = &v
			continue
		}
		runs.Verdicts[idx[k]] = v
	}
	return runs, nil
}

// PodRuns are the verdicts of the plan's workloads' pods, in plan order.
type PodRuns struct {
	Plan     *Plan
	Verdicts []Verdict
	// Pods are the pods sent (PodOf), one per workload.
	Pods []*corev1.Pod
	// DefaultSA names, by workload index, the ServiceAccounts the release
	// creates that a workload's pod names: its pod was sent with the
	// namespace's default one.
	DefaultSA map[int]string
}

// DryRunPods dry-runs the create of the pod each workload's controller
// will create (one per workload, never one per replica), through e; none
// when the namespace does not exist yet (NamespaceToCome).
func DryRunPods(ctx context.Context, e *dryrun.Engine, p *Plan) (*PodRuns, error) {
	runs := &PodRuns{Plan: p, Verdicts: make([]Verdict, len(p.Workloads)), Pods: make([]*corev1.Pod, len(p.Workloads)), DefaultSA: map[int]string{}}
	var reqs []dryrun.Request
	var idx []int
	for i, w := range p.Workloads {
		pod, sa := PodOf(w, p)
		runs.Pods[i] = pod
		if sa != "" {
			runs.DefaultSA[i] = sa
		}
		if !p.NamespaceExists {
			runs.Verdicts[i].Unjudged = NamespaceToCome
			continue
		}
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pod)
		if err != nil {
			return nil, err
		}
		reqs = append(reqs, dryrun.Request{Resource: podsGVR, Namespace: w.Namespace, Object: &unstructured.Unstructured{Object: u}})
		idx = append(idx, i)
	}
	answers := e.Create(ctx, reqs)
	if err := e.Unanswered(); err != nil {
		return nil, err
	}
	for k, a := range answers {
		runs.Verdicts[idx[k]] = verdictOf(a)
	}
	return runs, nil
}

// Answered is the pod of workload i as the API server would store it
// (mutated, LimitRange defaults applied) when its dry run was admitted,
// else the pod sent.
func (r *PodRuns) Answered(i int) *corev1.Pod {
	if pod := answered(r.Verdicts[i]); pod != nil {
		return pod
	}
	return r.Pods[i]
}

// verdictOf reads one answer: an AlreadyExists means the admission chain
// accepted the object (the API server runs it before it looks for the
// name), a NotFound of the kind means the kind is not served.
func verdictOf(a dryrun.Answer) Verdict {
	v := Verdict{Warnings: a.Warnings, Object: a.Object}
	switch {
	case a.Err == nil, apierrors.IsAlreadyExists(a.Err):
	case isNoSuchKind(a.Err):
		v.Unjudged = KindNotFound
	default:
		var se apierrors.APIStatus
		if !errors.As(a.Err, &se) {
			v.Unjudged, v.Err = NotSent, a.Err
			break
		}
		r := ParseRefusal(se.Status().Message)
		v.Refused = &r
	}
	return v
}

// isNoSuchKind reports whether err is the API server's 404 for a resource
// it does not serve (no object name in its details).
func isNoSuchKind(err error) bool {
	var se apierrors.APIStatus
	if !errors.As(err, &se) {
		return false
	}
	st := se.Status()
	return st.Code == 404 && (st.Details == nil || st.Details.Name == "") && strings.Contains(st.Message, "could not find the requested resource")
}
