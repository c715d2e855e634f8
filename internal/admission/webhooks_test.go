package admission

import (
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/webhookmatch"
)

// webhookPlan is an install into a namespace to come: a hook Job, a
// ClusterRole, a ConfigMap, an unserved Widget and the pods of a
// Deployment and of the hook Job.
func webhookPlan(t *testing.T) *Plan {
	r := testRendering(t)
	p, err := NewPlan(Input{Rendering: r, Release: "rt", Namespace: "codefresh", API: testAPI(), Upgrade: false,
		InCurrent: func(o chart.Object) bool { return o.Kind == "ConfigMap" && o.Name == "config" },
		Workloads: []Workload{{Kind: "Deployment", Name: "operator", Namespace: "codefresh", Pods: 2}, {Kind: "Job", Name: "validate", Namespace: "codefresh", Pods: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRequests: each served object created (Helm's, as the installer),
// each changed object updated, the namespace created, each workload's pod
// created by its controller (Helm's when a hook Job's), with the dry runs'
// verdicts where they were sent.
func TestRequests(t *testing.T) {
	p := webhookPlan(t)
	installer := &user.DefaultInfo{Name: "ci"}
	objs := &ObjectRuns{Plan: p, Verdicts: make([]Verdict, len(p.Objects)), Namespace: &Verdict{}}
	reqs := Requests(p, objs, nil, installer)
	var got []string
	for _, r := range reqs {
		s := string(r.Operation) + " " + r.Resource.Resource
		switch {
		case r.Object != nil:
			s += " " + r.Object.Obj.Name
		case r.Workload != nil:
			s += " of " + r.Workload.Name + " as " + r.User.GetName()
		default:
			s += " " + r.Name
		}
		if r.Helm {
			s += " (helm)"
		}
		if r.Verdict != nil {
			s += " judged"
		}
		got = append(got, s)
	}
	want := "CREATE serviceaccounts validate-sa (helm) judged|CREATE configmaps a-first (helm) judged|CREATE jobs validate (helm) judged|" +
		"CREATE serviceaccounts operator (helm) judged|CREATE clusterroles reader (helm) judged|CREATE deployments operator (helm) judged|" +
		"CREATE jobs report (helm) judged|UPDATE configmaps config (helm)|CREATE namespaces codefresh (helm) judged|" +
		"CREATE pods of validate as system:serviceaccount:kube-system:job-controller (helm)|" +
		"CREATE pods of operator as system:serviceaccount:kube-system:replicaset-controller"
	if strings.Join(got, "|") != want {
		t.Errorf("requests\n%s, want\n%s", strings.Join(got, "\n"), strings.ReplaceAll(want, "|", "\n"))
	}
	for _, r := range reqs {
		if r.Object != nil && r.User != installer {
			t.Errorf("%s sent as %v, want the installer", r.Object.Obj.Name, r.User)
		}
	}
	if ns := reqs[8]; ns.Object != nil || ns.Workload != nil || ns.Name != "codefresh" || ns.Namespace != "codefresh" || ns.Verdict != objs.Namespace {
		t.Errorf("namespace request %+v", ns)
	}
}

// TestJudge: a webhook of pods matches the pods' requests only, says why,
// and a matched request whose dry run passed is set apart.
func TestJudge(t *testing.T) {
	p := webhookPlan(t)
	m, err := webhookmatch.New(webhookmatch.Options{Resources: testAPI().Resources, Namespaces: map[string]map[string]string{"codefresh": p.NamespaceLabels}})
	if err != nil {
		t.Fatal(err)
	}
	fail := admissionregistrationv1.Fail
	none := admissionregistrationv1.SideEffectClassNone
	cfg := admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "policy"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "pods.example.com", FailurePolicy: &fail, SideEffects: &none,
			AdmissionReviewVersions: []string{"v1"}, NamespaceSelector: &metav1.LabelSelector{}, ObjectSelector: &metav1.LabelSelector{},
			Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}}}}}}}
	hooks := m.Hooks([]admissionregistrationv1.ValidatingWebhookConfiguration{cfg}, nil)
	if len(hooks) != 1 {
		t.Fatalf("%d hooks", len(hooks))
	}
	pods := &PodRuns{Plan: p, Pods: p.Pods(), Verdicts: []Verdict{{}, {Refused: &Refusal{Layer: LayerWebhookDown}}}}
	reqs := Requests(p, nil, pods, nil)
	j := Judge(t.Context(), m, hooks[0], reqs)
	if len(j.Matched) != 2 || !j.Helm || j.Why == "" || j.Ruleless != len(reqs)-2 || len(j.Excluded) != 0 {
		t.Errorf("judgement %+v", j)
	}
	rest, passed := j.WithoutPassed()
	if len(passed) != 1 || passed[0].Workload.Name != "validate" || len(rest.Matched) != 1 || rest.Matched[0].Workload.Name != "operator" || rest.Helm {
		t.Errorf("without passed %+v, passed %+v", rest, passed)
	}
	names := MatchingHooks(t.Context(), m, hooks, &p.Workloads[1], pods.Pods[1])
	if strings.Join(names, ",") != "pods.example.com" {
		t.Errorf("matching hooks %v", names)
	}
	if u := controllerUser("StatefulSet"); u.GetName() != "system:serviceaccount:kube-system:statefulset-controller" {
		t.Errorf("controller user %s", u.GetName())
	}
}
