package e2e

import (
	"crypto/tls"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcert"
	tc "github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

// admissionChecks are the admission checks a scenario runs.
const admissionChecks = "admission-objects,admission-pods,resource-quota,admission-webhooks"

// webhookServer is an admission webhook the test serves itself on
// 127.0.0.1 over TLS with its own CA: review answers each AdmissionReview.
type webhookServer struct {
	URL    string
	CA     []byte
	review func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse
}

// serveWebhook starts a webhook server answering with review (replaceable
// through the returned server's review field before it is called).
func serveWebhook(t *testing.T, review func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse) *webhookServer {
	t.Helper()
	ca := testcert.NewCA(t, "e2e-webhook-ca")
	leaf, _ := ca.Leaf(t, "127.0.0.1", time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ws := &webhookServer{URL: "https://" + l.Addr().String(), CA: ca.PEM, review: review}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, TLSConfig: &tls.Config{Certificates: []tls.Certificate{leaf}, MinVersion: tls.VersionTLS12},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var rev admissionv1.AdmissionReview
			if err := json.NewDecoder(r.Body).Decode(&rev); err != nil || rev.Request == nil {
				http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
				return
			}
			resp := ws.review(rev.Request)
			resp.UID = rev.Request.UID
			rev.Response, rev.Request = resp, nil
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(&rev)
		})}
	go func() { _ = srv.ServeTLS(l, "", "") }()
	t.Cleanup(func() { _ = srv.Close() })
	return ws
}

// addSidecar is a mutating webhook's answer that adds a container that
// never exits (kwok's stages never complete a pod with the image tag
// e2e-runs-forever), as a service mesh's proxy injection does.
func addSidecar(*admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	patch := `[{"op":"add","path":"/spec/containers/-","value":{"name":"e2e-proxy","image":"example.invalid/proxy:e2e-runs-forever"}}]`
	pt := admissionv1.PatchTypeJSONPatch
	return &admissionv1.AdmissionResponse{Allowed: true, PatchType: &pt, Patch: []byte(patch)}
}

// gatekeeperDeny answers as Gatekeeper does for a violated constraint
// (validation.gatekeeper.sh: "[constraint] message").
func gatekeeperDeny(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Code: 403,
		Message: "[psp-pods-allowed-user-ranges] Container " + req.Name + " is attempting to run without a required securityContext/runAsNonRoot"}}
}

func allow(*admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	return &admissionv1.AdmissionResponse{Allowed: true}
}

// podRules are the rules of a webhook on the creation of pods.
var podRules = []admissionregistrationv1.RuleWithOperations{{
	Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
	Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
}}

// inNamespace selects the namespace ns by its kubernetes.io/metadata.name.
func inNamespace(ns string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}}
}

// validatingWebhook creates a ValidatingWebhookConfiguration named name with
// one webhook on the creation of pods in ns, called at cc, and deletes it
// when the scenario ends. With conditions, it selects the pods of every
// namespace and its matchConditions decide.
func validatingWebhook(t *testing.T, c *tc.Cluster, name, ns string, cc admissionregistrationv1.WebhookClientConfig, fp admissionregistrationv1.FailurePolicyType,
	conditions ...admissionregistrationv1.MatchCondition) {
	t.Helper()
	none := admissionregistrationv1.SideEffectClassNone
	timeout := int32(5)
	sel := inNamespace(ns)
	if len(conditions) > 0 {
		sel = &metav1.LabelSelector{}
	}
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: name, ClientConfig: cc, Rules: podRules, FailurePolicy: &fp, SideEffects: &none,
			AdmissionReviewVersions: []string{"v1"}, NamespaceSelector: sel, TimeoutSeconds: &timeout, MatchConditions: conditions,
		}},
	}
	if _, err := c.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(bg, cfg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(bg, name, metav1.DeleteOptions{})
	})
}

// mutatingWebhook is validatingWebhook for a MutatingWebhookConfiguration.
func mutatingWebhook(t *testing.T, c *tc.Cluster, name, ns string, cc admissionregistrationv1.WebhookClientConfig) {
	t.Helper()
	none := admissionregistrationv1.SideEffectClassNone
	fail := admissionregistrationv1.Fail
	timeout := int32(5)
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: name, ClientConfig: cc, Rules: podRules, FailurePolicy: &fail, SideEffects: &none,
			AdmissionReviewVersions: []string{"v1"}, NamespaceSelector: inNamespace(ns), TimeoutSeconds: &timeout,
		}},
	}
	if _, err := c.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(bg, cfg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(bg, name, metav1.DeleteOptions{})
	})
}

// urlClient is a webhook client configuration calling ws.
func urlClient(ws *webhookServer, path string) admissionregistrationv1.WebhookClientConfig {
	u := ws.URL + path
	return admissionregistrationv1.WebhookClientConfig{URL: &u, CABundle: ws.CA}
}

// endpointlessService creates a Service selecting no pod (so no ready
// endpoint) and returns a client configuration calling it.
func endpointlessService(t *testing.T, c *tc.Cluster, ns, name string) admissionregistrationv1.WebhookClientConfig {
	t.Helper()
	if _, err := c.Kube.CoreV1().Namespaces().Get(bg, ns, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		c.CreateNamespace(t, ns)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "policy-controller-gone"}, Ports: []corev1.ServicePort{{Port: 443}}}}
	if _, err := c.Kube.CoreV1().Services(ns).Create(bg, svc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	path := "/validate"
	return admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: ns, Name: name, Path: &path}}
}

// failedCreates returns the messages of the FailedCreate events of ns.
func failedCreates(t *testing.T, c *tc.Cluster, ns string) []string {
	t.Helper()
	evs, err := c.Kube.CoreV1().Events(ns).List(bg, metav1.ListOptions{FieldSelector: "reason=FailedCreate"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs.Items {
		out = append(out, e.InvolvedObject.Kind+"/"+e.InvolvedObject.Name+": "+e.Message)
	}
	return out
}

// waitFailedCreate waits (up to 30 s) for a FailedCreate event of ns whose
// message holds want, and returns it.
func waitFailedCreate(t *testing.T, c *tc.Cluster, ns, want string) string {
	t.Helper()
	var got []string
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		got = failedCreates(t, c, ns)
		for _, m := range got {
			if strings.Contains(m, want) {
				return m
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("no FailedCreate event in %s says %q; events: %q", ns, want, got)
	return ""
}

// auditedDryRuns fails the test when a write the plugin (user agent
// kubectl-gitops_preflight) sent does not ask for a dry run: dryRun=All in
// its query, and in its body for a delete that has one. The review APIs
// (SelfSubjectReview, SelfSubjectAccessReview, SelfSubjectRulesReview)
// store nothing and are not writes. It returns how many writes it read.
func auditedDryRuns(t *testing.T, c *tc.Cluster) int {
	t.Helper()
	writes := 0
	for _, e := range c.AuditEvents(t) {
		if !strings.HasPrefix(e.UserAgent, "kubectl-gitops_preflight") {
			continue
		}
		switch e.Verb {
		case "create", "update", "patch", "delete", "deletecollection":
		default:
			continue
		}
		u, err := url.Parse(e.RequestURI)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(u.Path, "/apis/authorization.k8s.io/") || strings.Contains(u.Path, "/apis/authentication.k8s.io/") {
			continue
		}
		writes++
		if u.Query().Get("dryRun") != "All" {
			t.Errorf("the plugin sent %s %s without dryRun=All", e.Verb, e.RequestURI)
		}
		if strings.HasPrefix(e.Verb, "delete") && len(e.Body) > 0 {
			var opts struct {
				DryRun []string `json:"dryRun"`
			}
			if err := json.Unmarshal(e.Body, &opts); err != nil || len(opts.DryRun) != 1 || opts.DryRun[0] != "All" {
				t.Errorf("the plugin sent %s %s whose body %s does not ask for a dry run", e.Verb, e.RequestURI, e.Body)
			}
		}
	}
	return writes
}

// waitAdmitted waits (up to 30 s) until a dry-run create of a plain pod in
// ns gets the answer ok wants: the API server's admission plugins learn of
// namespace labels, policies and webhook configurations through informers,
// so a test that just changed one waits for it to be in force.
func waitAdmitted(t *testing.T, c *tc.Cluster, ns, what string, ok func(p *corev1.Pod, err error) bool) {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-probe-", Namespace: ns},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example.invalid/probe:1"}}}}
	waitFor(t, 30*time.Second, what, func() bool {
		got, err := c.Kube.CoreV1().Pods(ns).Create(bg, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return ok(got, err)
	})
}

// refusedWith is a waitAdmitted condition: refused, the message holding s.
func refusedWith(s string) func(*corev1.Pod, error) bool {
	return func(_ *corev1.Pod, err error) bool { return err != nil && strings.Contains(err.Error(), s) }
}

// admitted is a waitAdmitted condition: admitted.
func admitted(_ *corev1.Pod, err error) bool { return err == nil }

// waitPolicy waits (up to 30 s) until a dry-run create of a ClusterRole
// granting the verb "*" gets the answer ok wants (the policy plugin learns
// of policies and bindings through informers).
func waitPolicy(t *testing.T, c *tc.Cluster, refused bool) {
	t.Helper()
	cr := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "e2e-probe-wildcard"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}}
	waitFor(t, 30*time.Second, "the wildcard policy in force", func() bool {
		_, err := c.Kube.RbacV1().ClusterRoles().Create(bg, cr, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return (err != nil) == refused
	})
}
