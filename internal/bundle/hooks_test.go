package bundle

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// hookServer answers as an API server holding a failed validate-values Job,
// its pod (whose log prints the planted credentials and a long preamble)
// and their events; gone makes the Job and pod 404, as after the Job's TTL.
func hookServer(t *testing.T, gone *bool) *httptest.Server {
	t.Helper()
	job := batchv1.Job{TypeMeta: metav1.TypeMeta{Kind: "Job", APIVersion: "batch/v1"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "codefresh", Name: "validate-values", UID: "uid-1"},
		Status:     batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit"}}}}
	pod := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "codefresh", Name: "validate-values-x7k2p"},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "validate-values"}}},
		Status: corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{Name: "validate-values",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1}}}}}}
	log := strings.Repeat("preamble line\n", HookLogBytes/14+10) + "token: " + plantedToken + "\npassword=" + plantedPassword + "\n" +
		"Error: global.codefresh.userToken is required\n"
	mux := http.NewServeMux()
	write := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	notFound := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_ = json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: "Failure", Reason: metav1.StatusReasonNotFound, Code: 404})
	}
	mux.HandleFunc("/apis/batch/v1/namespaces/codefresh/jobs/{name}", func(w http.ResponseWriter, r *http.Request) {
		if *gone || r.PathValue("name") != "validate-values" {
			notFound(w)
			return
		}
		write(w, job)
	})
	mux.HandleFunc("/api/v1/namespaces/codefresh/pods", func(w http.ResponseWriter, r *http.Request) {
		list := corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}}
		if !*gone && strings.Contains(r.URL.Query().Get("labelSelector"), "uid-1") {
			list.Items = []corev1.Pod{pod}
		}
		write(w, list)
	})
	mux.HandleFunc("/api/v1/namespaces/codefresh/pods/validate-values-x7k2p/log", func(w http.ResponseWriter, _ *http.Request) {
		if *gone {
			notFound(w)
			return
		}
		_, _ = w.Write([]byte(log))
	})
	mux.HandleFunc("/api/v1/namespaces/codefresh/events", func(w http.ResponseWriter, r *http.Request) {
		list := corev1.EventList{TypeMeta: metav1.TypeMeta{Kind: "EventList", APIVersion: "v1"}}
		if strings.Contains(r.URL.Query().Get("fieldSelector"), "involvedObject.name=validate-values-x7k2p") {
			list.Items = []corev1.Event{{InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: pod.Name}, Type: "Warning", Reason: "BackOff", Message: "Back-off restarting failed container", Count: 3}}
		}
		write(w, list)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestRecordHooksKeepsTheJobAfterItsTTL: a --post run sees the failed
// validate-values Job while its pod exists, and again once Kubernetes
// deleted them; the bundle keeps the Job, its pod's state, the last
// HookLogBytes of its log (the hook's last line in it, no planted
// credential) and the pod's events.
func TestRecordHooksKeepsTheJobAfterItsTTL(t *testing.T) {
	gone := false
	srv := hookServer(t, &gone)
	r := NewRecorder()
	// Through the recording transport too: api.json holds the log's
	// exchange, redacted.
	kube := kubernetes.NewForConfigOrDie(&rest.Config{Host: srv.URL, WrapTransport: r.Wrap})
	r.RecordHooks(t.Context(), kube, "codefresh", []string{"validate-values", "validate-usage"})
	first := filepath.Join(t.TempDir(), "first.tgz")
	if err := r.Write(first, Manifest{Mode: "post-install"}, nil); err != nil {
		t.Fatal(err)
	}
	fb, err := Open(first)
	if err != nil {
		t.Fatal(err)
	}
	logged := false
	for _, e := range fb.exchanges {
		logged = logged || strings.Contains(string(e.Body), "userToken is required")
		for _, p := range plantedAll {
			if strings.Contains(string(e.Body), p) {
				t.Errorf("planted %q in the answer to %s", p, e.URI)
			}
		}
	}
	if !logged {
		t.Error("api.json does not hold the log's exchange")
	}
	gone = true
	r.RecordHooks(t.Context(), kube, "codefresh", []string{"validate-values", "validate-usage"})
	path := filepath.Join(t.TempDir(), "post.tgz")
	if err := r.Write(path, Manifest{Mode: "post-install"}, nil); err != nil {
		t.Fatal(err)
	}
	b, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	hooks, err := b.Hooks()
	if err != nil {
		t.Fatal(err)
	}
	if len(hooks) != 1 || hooks[0].Name != "validate-values" || len(hooks[0].Conditions) != 1 || hooks[0].Conditions[0].Reason != "BackoffLimitExceeded" {
		t.Fatalf("hooks %+v", hooks)
	}
	if len(hooks[0].Pods) != 1 || len(hooks[0].Pods[0].Containers) != 1 {
		t.Fatalf("pods %+v", hooks[0].Pods)
	}
	c := hooks[0].Pods[0].Containers[0]
	if c.State != "terminated: Error, exit code 1" || !c.LogCut || len(c.Log) > HookLogBytes+64 ||
		!strings.Contains(c.Log, "Error: global.codefresh.userToken is required") {
		t.Errorf("container %s %v, log of %d bytes ending %q", c.State, c.LogCut, len(c.Log), c.Log[max(0, len(c.Log)-200):])
	}
	if len(hooks[0].Events) != 1 || hooks[0].Events[0].Reason != "BackOff" {
		t.Errorf("events %+v", hooks[0].Events)
	}
	logEntry, ok := b.File("hooks/validate-values/validate-values-x7k2p/validate-values.log")
	if !ok || !strings.Contains(string(logEntry), "userToken is required") {
		t.Errorf("no log entry")
	}
	for name, v := range b.entries {
		for _, p := range plantedAll {
			if strings.Contains(string(v), p) {
				t.Errorf("planted %q in entry %s", p, name)
			}
		}
	}
}
