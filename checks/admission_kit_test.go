package checks

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// The admission checks' kit: a small chart (a hook Job and its hook
// ClusterRole with wildcard verbs, a Deployment with its ServiceAccount, a
// ConfigMap) and an API server of the test's own (httptest) that answers
// the dry runs as the test says: the snapshot's reads stay the kit's fakes,
// the dry runs reach this server through the REST config (withREST).

// admissionChart writes the chart and returns its directory.
func admissionChart(t *testing.T) string {
	t.Helper()
	return targetChart(t, "0.30.0", "", map[string]string{
		"hook.yaml": `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: validate-values-cr
  annotations:
    helm.sh/hook: pre-install,pre-upgrade
    helm.sh/hook-weight: "-10"
rules:
- apiGroups: ["*"]
  resources: ["*"]
  verbs: ["*"]
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: validate-values-sa
  annotations:
    helm.sh/hook: pre-install,pre-upgrade
    helm.sh/hook-weight: "-10"
---
apiVersion: batch/v1
kind: Job
metadata:
  name: validate-values
  annotations:
    helm.sh/hook: pre-install,pre-upgrade
spec:
  backoffLimit: 0
  template:
    spec:
      serviceAccount: validate-values-sa
      restartPolicy: Never
      containers:
      - name: validate-values
        image: quay.io/codefresh/gitops-runtime-installer:0.30.0
`,
		"app.yaml": `apiVersion: v1
kind: ServiceAccount
metadata:
  name: gitops-operator
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: gitops-operator-config
data:
  a: b
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: gitops-operator
spec:
  replicas: 2
  selector:
    matchLabels: {app: gitops-operator}
  template:
    metadata:
      labels: {app: gitops-operator}
    spec:
      serviceAccountName: gitops-operator
      containers:
      - name: manager
        image: quay.io/codefresh/gitops-operator:1
        resources:
          requests: {cpu: 100m, memory: 128Mi}
          limits: {cpu: 500m, memory: 256Mi}
`,
	})
}

// dryRunRequest is one request the fake API server received.
type dryRunRequest struct {
	Method, Path, DryRun string
	Object               map[string]any
}

// fakeAdmission is the test's API server: answer decides each dry run
// (nil: admitted, echoing the object back).
type fakeAdmission struct {
	mu       sync.Mutex
	requests []dryRunRequest
	answer   func(r dryRunRequest) (status int, body map[string]any, warnings []string)
}

func (f *fakeAdmission) serve(t *testing.T) *rest.Config {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		req := dryRunRequest{Method: r.Method, Path: r.URL.Path, DryRun: r.URL.Query().Get("dryRun")}
		_ = json.Unmarshal(data, &req.Object)
		f.mu.Lock()
		f.requests = append(f.requests, req)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/selfsubjectreviews") {
			_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview",
				"status": map[string]any{"userInfo": map[string]any{"username": "ci-installer", "groups": []string{"platform", "system:authenticated"}}}})
			return
		}
		status, body, warnings := http.StatusCreated, req.Object, []string(nil)
		if f.answer != nil {
			if s, b, ws := f.answer(req); s != 0 {
				status, body, warnings = s, b, ws
			}
		}
		for _, wn := range warnings {
			w.Header().Add("Warning", "299 - "+strconv.Quote(wn))
		}
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(body)
	}))
	t.Cleanup(srv.Close)
	return &rest.Config{Host: srv.URL}
}

// refuse is the API server's Status of a refusal with message.
func refuse(code int, reason, message string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Status", "status": "Failure", "code": code, "reason": reason, "message": message}
}

// admissionKit is a kit of the admission checks: namespace codefresh
// (labels), the chart, the discovery of its kinds, the fake API server.
func admissionKit(t *testing.T, f *fakeAdmission, docs ...string) *kit {
	t.Helper()
	ns := "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: codefresh\n  labels: {kubernetes.io/metadata.name: codefresh}\n"
	k := newKit(t, append([]string{ns}, docs...)...).withChart(admissionChart(t)).withREST(f.serve(t))
	k.serves("v1",
		metav1.APIResource{Name: "pods", Kind: "Pod", Namespaced: true},
		metav1.APIResource{Name: "serviceaccounts", Kind: "ServiceAccount", Namespaced: true},
		metav1.APIResource{Name: "configmaps", Kind: "ConfigMap", Namespaced: true},
		metav1.APIResource{Name: "namespaces", Kind: "Namespace"})
	k.serves("apps/v1", metav1.APIResource{Name: "deployments", Kind: "Deployment", Namespaced: true})
	k.serves("batch/v1", metav1.APIResource{Name: "jobs", Kind: "Job", Namespaced: true})
	k.serves("rbac.authorization.k8s.io/v1", metav1.APIResource{Name: "clusterroles", Kind: "ClusterRole"})
	return k
}

// podOfRequest is the generateName of a pod the fake received ("" for
// another kind).
func podOfRequest(r dryRunRequest) string {
	if !strings.HasSuffix(r.Path, "/pods") {
		return ""
	}
	md, _ := r.Object["metadata"].(map[string]any)
	name, _ := md["generateName"].(string)
	return name
}

func metaResource(name, kind string, namespaced bool) metav1.APIResource {
	return metav1.APIResource{Name: name, Kind: kind, Namespaced: namespaced}
}
