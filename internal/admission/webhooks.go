package admission

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/webhookmatch"
)

// Request is one request of the install as a webhook sees it.
type Request struct {
	webhookmatch.Request
	// Object is the planned object it creates or (an upgrade's change)
	// updates; Workload the workload whose pod it creates; neither, the
	// create of the release namespace (helm install --create-namespace).
	Object   *Object
	Workload *Workload
	// Helm says whether helm itself sends it (an object; a hook Job's pod
	// counts too: helm waits for it); a runtime pod's is its controller's.
	Helm bool
	// Verdict is what the dry run of this request met (nil when none was
	// sent here: an upgrade's updates are internal/apply's).
	Verdict *Verdict
}

// Passed reports whether the request's dry run was sent and admitted.
func (r Request) Passed() bool { return r.Verdict != nil && r.Verdict.Passed() }

// controllerUser is who creates a workload's pods: its controller, as
// kube-controller-manager runs it with --use-service-account-credentials
// (kubeadm, EKS, GKE, AKS): the controller's ServiceAccount in kube-system
// (https://kubernetes.io/docs/reference/access-authn-authz/rbac/#controller-roles).
func controllerUser(kind string) user.Info {
	name := map[string]string{"Job": "job-controller", "StatefulSet": "statefulset-controller", "DaemonSet": "daemon-set-controller"}[kind]
	if name == "" {
		name = "replicaset-controller"
	}
	return &user.DefaultInfo{Name: "system:serviceaccount:kube-system:" + name,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"}}
}

// Requests are the plan's requests as the webhooks see them: each created
// object, the release namespace when helm creates it, each workload's pod,
// and (upgrade) each changed object's update; helm's are sent as installer
// (nil: unknown), the pods as their controllers. objs and pods (nil: not
// run) give each its dry run's verdict.
func Requests(p *Plan, objs *ObjectRuns, pods *PodRuns, installer user.Info) []Request {
	var out []Request
	for k, list := range [][]Object{p.Objects, p.Changed} {
		op := admission.Create
		if k == 1 {
			op = admission.Update
		}
		for i := range list {
			o := &list[i]
			if !o.Served {
				continue
			}
			r := Request{Request: webhookmatch.Request{Resource: o.Resource, Kind: o.U.GroupVersionKind(), Operation: op, Namespace: o.RequestNamespace(), Name: o.Obj.Name,
				Object: o.U, User: installer}, Object: o, Helm: true}
			if k == 0 && objs != nil {
				r.Verdict = &objs.Verdicts[i]
			}
			out = append(out, r)
		}
	}
	if !p.NamespaceExists {
		nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": p.Namespace}}}
		nsObj.SetLabels(p.NamespaceLabels)
		r := Request{Request: webhookmatch.Request{Resource: namespacesGVR, Kind: nsObj.GroupVersionKind(), Operation: admission.Create, Namespace: p.Namespace, Name: p.Namespace,
			Object: nsObj, User: installer}, Helm: true}
		if objs != nil {
			r.Verdict = objs.Namespace
		}
		out = append(out, r)
	}
	for i := range p.Workloads {
		w := &p.Workloads[i]
		var pod *corev1.Pod
		if pods != nil {
			pod = pods.Pods[i]
		} else {
			pod, _ = PodOf(*w, p)
		}
		r := podRequest(w, pod)
		if pods != nil {
			r.Verdict = &pods.Verdicts[i]
		}
		out = append(out, r)
	}
	return out
}

// podRequest is the create of a workload's pod by its controller.
func podRequest(w *Workload, pod *corev1.Pod) Request {
	return Request{Request: webhookmatch.Request{Resource: podsGVR, Kind: corev1.SchemeGroupVersion.WithKind("Pod"),
		Operation: admission.Create, Namespace: w.Namespace, Object: pod, User: controllerUser(w.Kind)}, Workload: w, Helm: w.IsHook()}
}

// MatchingHooks are the names of the webhooks of hooks that match the
// create of w's pod.
func MatchingHooks(ctx context.Context, m *webhookmatch.Matcher, hooks []*webhookmatch.Hook, w *Workload, pod *corev1.Pod) []string {
	r := podRequest(w, pod)
	var names []string
	for _, h := range hooks {
		if m.Match(ctx, h, r.Request).Matches {
			names = append(names, h.Name)
		}
	}
	return names
}

// Judgement is what one webhook judges of the release's requests.
type Judgement struct {
	// Matched are the requests it matches; Helm whether helm sends one
	// of them.
	Matched []Request
	Helm    bool
	// Why is why the first matched request matches. Unsure is the first
	// reason a request (UnsureOf) was taken to match without the API
	// server's certainty.
	Why, Unsure string
	UnsureOf    *Request
	// Excluded are the requests a rule matched but a selector or a
	// matchCondition excluded, by reason; Ruleless counts those no rule
	// matched.
	Excluded map[string][]Request
	Ruleless int
}

// Judge matches webhook h with each of reqs (the API server's own
// matching: webhookmatch).
func Judge(ctx context.Context, m *webhookmatch.Matcher, h *webhookmatch.Hook, reqs []Request) Judgement {
	j := Judgement{Excluded: map[string][]Request{}}
	for i, r := range reqs {
		d := m.Match(ctx, h, r.Request)
		switch {
		case d.Matches:
			j.Matched = append(j.Matched, r)
			j.Helm = j.Helm || r.Helm
			if j.Why == "" {
				j.Why = d.Why
			}
			if j.Unsure == "" && d.Unsure != "" {
				j.Unsure, j.UnsureOf = d.Unsure, &reqs[i]
			}
		case strings.HasPrefix(d.Why, "no rule matches"), strings.HasPrefix(d.Why, "the API server sends no"):
			j.Ruleless++
		default:
			j.Excluded[d.Why] = append(j.Excluded[d.Why], r)
		}
	}
	return j
}

// WithoutPassed removes from the matched requests those whose dry run
// passed (a webhook that cannot be called did not refuse them) and
// returns them.
func (j Judgement) WithoutPassed() (Judgement, []Request) {
	var kept, passed []Request
	j.Helm = false
	for _, r := range j.Matched {
		if r.Passed() {
			passed = append(passed, r)
			continue
		}
		kept = append(kept, r)
		j.Helm = j.Helm || r.Helm
	}
	j.Matched = kept
	return j, passed
}
