package admission

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/dryrun"
)

// apiServer is a test's API server: answer decides each request by its
// path and object (status 0: created, the object echoed back); sent
// records the paths.
type apiServer struct {
	mu     sync.Mutex
	sent   []string
	answer func(path string, obj map[string]any) (status int, body map[string]any, warning string)
}

func (s *apiServer) engine(t *testing.T) *dryrun.Engine {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var obj map[string]any
		_ = json.NewDecoder(r.Body).Decode(&obj)
		s.mu.Lock()
		s.sent = append(s.sent, r.URL.Path)
		s.mu.Unlock()
		status, body, warning := 0, obj, ""
		if s.answer != nil {
			if st, b, wn := s.answer(r.URL.Path, obj); st != 0 {
				status, body, warning = st, b, wn
			}
		}
		if status == 0 {
			status = http.StatusCreated
		}
		w.Header().Set("Content-Type", "application/json")
		if warning != "" {
			w.Header().Add("Warning", "299 - "+strconv.Quote(warning))
		}
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(body)
	}))
	t.Cleanup(srv.Close)
	e, err := dryrun.New(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func status(code int, reason, msg string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Status", "status": "Failure", "code": code, "reason": reason, "message": msg}
}

// runsRendering is testRendering with a CRD of Widget and an object of
// a kind nothing defines.
func runsRendering(t *testing.T) *chart.Rendering {
	r := testRendering(t)
	r.Objects = append(r.Objects,
		obj(t, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "widgets.example.com", "", map[string]any{
			"spec": map[string]any{"group": "example.com", "names": map[string]any{"kind": "Widget"}}}),
		obj(t, "example.org/v1", "Gadget", "g", "", nil))
	return r
}

// TestDryRunObjects: each object a dry run can judge is sent once; a
// refusal is parsed, an AlreadyExists is an admission, warnings are kept;
// an unserved kind a planned CRD defines, an unserved kind, and an object
// that exists are not sent, each said why.
func TestDryRunObjects(t *testing.T) {
	vap := `clusterroles.rbac.authorization.k8s.io "reader" is forbidden: ValidatingAdmissionPolicy 'no-wildcards' with binding 'b' denied request: no`
	s := &apiServer{answer: func(path string, obj map[string]any) (int, map[string]any, string) {
		switch {
		case strings.HasSuffix(path, "/clusterroles"):
			return http.StatusForbidden, status(403, "Forbidden", vap), ""
		case strings.HasSuffix(path, "/deployments"):
			return http.StatusConflict, status(409, "AlreadyExists", `deployments.apps "operator" already exists`), ""
		case strings.HasSuffix(path, "/jobs"):
			return http.StatusCreated, obj, "be careful"
		}
		return 0, nil, ""
	}}
	p, err := NewPlan(Input{Rendering: runsRendering(t), Release: "rt", Namespace: "codefresh", NamespaceExists: true, API: testAPI()})
	if err != nil {
		t.Fatal(err)
	}
	var asked []string
	exists := func(o Object) bool {
		asked = append(asked, o.Obj.Name)
		return o.Obj.Kind == "ConfigMap" && o.Obj.Name == "config"
	}
	runs, err := DryRunObjects(t.Context(), s.engine(t), p, exists)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]func(v Verdict) bool{
		"ClusterRole/reader": func(v Verdict) bool {
			return v.Refused != nil && v.Refused.Layer == LayerPolicy && v.Refused.Binding == "b"
		},
		"Deployment/operator": func(v Verdict) bool { return v.Passed() },
		"Job/validate":        func(v Verdict) bool { return v.Passed() && len(v.Warnings) == 1 && v.Warnings[0] == "be careful" },
		"Widget/w":            func(v Verdict) bool { return v.Unjudged == KindOfPlannedCRD },
		"Gadget/g":            func(v Verdict) bool { return v.Unjudged == KindNotServed },
		"ConfigMap/config":    func(v Verdict) bool { return v.Unjudged == Exists },
		"ConfigMap/a-first":   func(v Verdict) bool { return v.Passed() && v.Object.GetName() == "a-first" },
		"CustomResourceDefinition/widgets.example.com": func(v Verdict) bool { return v.Passed() },
	}
	for i, o := range p.Objects {
		if ok, known := want[o.Obj.Kind+"/"+o.Obj.Name]; known && !ok(runs.Verdicts[i]) {
			t.Errorf("%s %s: verdict %+v", o.Obj.Kind, o.Obj.Name, runs.Verdicts[i])
		}
	}
	if runs.Namespace != nil {
		t.Error("the namespace, which exists, was dry-run")
	}
	if len(s.sent) != len(p.Objects)-3 {
		t.Errorf("%d requests for %d objects, 3 not sent: %v", len(s.sent), len(p.Objects), s.sent)
	}
	for _, name := range asked {
		if name == "validate" || name == "w" || name == "g" {
			t.Errorf("asked whether %s exists: a hook or an unserved kind is sent (or not) whatever exists", name)
		}
	}
}

// TestDryRunObjectsNamespaceToCome: the namespace does not exist yet: the
// cluster-scoped objects and the namespace's own create are sent, the
// namespaced objects are not.
func TestDryRunObjectsNamespaceToCome(t *testing.T) {
	s := &apiServer{}
	p, err := NewPlan(Input{Rendering: testRendering(t), Release: "rt", Namespace: "codefresh", API: testAPI()})
	if err != nil {
		t.Fatal(err)
	}
	runs, err := DryRunObjects(t.Context(), s.engine(t), p, func(Object) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range p.Objects {
		v := runs.Verdicts[i]
		switch {
		case o.Obj.Kind == "ClusterRole" && !v.Passed():
			t.Errorf("ClusterRole: %+v", v)
		case o.Namespaced && v.Unjudged != NamespaceToCome:
			t.Errorf("%s %s: %+v, want NamespaceToCome", o.Obj.Kind, o.Obj.Name, v)
		}
	}
	if runs.Namespace == nil || !runs.Namespace.Passed() || runs.Namespace.Object.GetLabels()["name"] != "codefresh" {
		t.Errorf("namespace verdict %+v", runs.Namespace)
	}
	sort.Strings(s.sent)
	if strings.Join(s.sent, " ") != "/api/v1/namespaces /apis/rbac.authorization.k8s.io/v1/clusterroles" {
		t.Errorf("sent %v", s.sent)
	}
}

// TestDryRunPods: one pod per workload, as the answer came back; a pod
// whose ServiceAccount the release creates is sent with the default one;
// none is sent to a namespace that does not exist yet.
func TestDryRunPods(t *testing.T) {
	s := &apiServer{answer: func(_ string, obj map[string]any) (int, map[string]any, string) {
		md := obj["metadata"].(map[string]any)
		labels, _ := md["labels"].(map[string]any)
		if labels == nil {
			labels = map[string]any{}
		}
		labels["mutated"] = "yes"
		md["labels"] = labels
		return http.StatusCreated, obj, ""
	}}
	tmpl := func(sa string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{Spec: corev1.PodSpec{ServiceAccountName: sa, Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	}
	ws := []Workload{{Kind: "Deployment", Name: "operator", Namespace: "codefresh", Pods: 3, Template: tmpl("operator")},
		{Kind: "Job", Name: "validate", Namespace: "codefresh", Pods: 1, Template: tmpl("validate-sa")}}
	for _, exists := range []bool{true, false} {
		s.sent = nil
		p, err := NewPlan(Input{Rendering: testRendering(t), Namespace: "codefresh", NamespaceExists: exists, API: testAPI(), Workloads: ws})
		if err != nil {
			t.Fatal(err)
		}
		runs, err := DryRunPods(t.Context(), s.engine(t), p)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs.DefaultSA) != 2 || runs.DefaultSA[0] != "validate-sa" || runs.DefaultSA[1] != "operator" {
			t.Errorf("default ServiceAccounts %v", runs.DefaultSA)
		}
		if !exists {
			if len(s.sent) != 0 || runs.Verdicts[0].Unjudged != NamespaceToCome || runs.Answered(0) != runs.Pods[0] {
				t.Errorf("namespace to come: sent %v, verdict %+v", s.sent, runs.Verdicts[0])
			}
			continue
		}
		if len(s.sent) != 2 || s.sent[0] != "/api/v1/namespaces/codefresh/pods" {
			t.Errorf("sent %v, want the 2 pods", s.sent)
		}
		for i := range p.Workloads {
			if got := runs.Answered(i); got.Labels["mutated"] != "yes" || runs.Pods[i].Labels["mutated"] != "" {
				t.Errorf("workload %d: answered labels %v, sent %v", i, got.Labels, runs.Pods[i].Labels)
			}
		}
	}
}

// TestVerdictOf: AlreadyExists is an admission, the API server's 404 of a
// resource it does not serve is KindNotFound, any other API status a
// refusal, and an error with no status a dry run not sent.
func TestVerdictOf(t *testing.T) {
	gr := schema.GroupResource{Group: "example.com", Resource: "widgets"}
	noKind := &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 404, Reason: metav1.StatusReasonNotFound,
		Message: "the server could not find the requested resource"}}
	cases := []struct {
		err   error
		check func(v Verdict) bool
	}{
		{nil, func(v Verdict) bool { return v.Passed() }},
		{apierrors.NewAlreadyExists(gr, "w"), func(v Verdict) bool { return v.Passed() }},
		{noKind, func(v Verdict) bool { return v.Unjudged == KindNotFound }},
		{apierrors.NewNotFound(gr, "w"), func(v Verdict) bool { return v.Refused != nil && v.Refused.Layer == LayerOther }},
		{apierrors.NewForbidden(gr, "w", errors.New(`violates PodSecurity "restricted:latest": runAsNonRoot != true`)),
			func(v Verdict) bool { return v.Refused != nil && v.Refused.Layer == LayerPodSecurity }},
		{errors.New("dial tcp: connection refused"), func(v Verdict) bool { return v.Unjudged == NotSent && v.Err != nil && v.Refused == nil }},
	}
	for _, tc := range cases {
		if v := verdictOf(dryrun.Answer{Err: tc.err}); !tc.check(v) {
			t.Errorf("%v: verdict %+v", tc.err, v)
		}
	}
}
