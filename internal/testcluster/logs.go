package testcluster

import (
	"context"
	"crypto/tls"
	_ "embed"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

// How pod logs work on a full cluster (Start), the way a kubelet serves them:
//
//   - kwok runs with --node-ip=127.0.0.1 and --node-port=<its server port>,
//     so its node stages give every node it manages InternalIP 127.0.0.1 and
//     status.daemonEndpoints.kubeletEndpoint.Port = kwok's --server-address
//     port;
//   - the apiserver runs with --kubelet-preferred-address-types=InternalIP
//     (the default tries the Hostname first, the node name, which does not
//     resolve) and no --kubelet-certificate-authority, so it does not verify
//     the self-signed certificate kwok's HTTPS server makes up;
//   - kwok runs with --enable-crds=ClusterLogs and the ClusterLogs CRD (kwok
//     v0.8.0's, testdata/kwok.x-k8s.io_clusterlogs.yaml) is created before it
//     starts: kwok watches the ClusterLogs objects and serves
//     /containerLogs/<ns>/<pod>/<container> from the file the matching one
//     names (CRI log format).
//
// ServeLogs writes such a file and object. GET pods/<pod>/log then goes
// apiserver → kwok → file, as `kubectl logs` goes apiserver → kubelet → CRI.

// kwokClusterLogsCRD is kwok v0.8.0's ClusterLogs CRD (from
// sigs.k8s.io/kwok@v0.8.0/kustomize/crd/bases, Apache-2.0).
//
//go:embed testdata/kwok.x-k8s.io_clusterlogs.yaml
var kwokClusterLogsCRD []byte

var (
	crdResource         = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	clusterLogsResource = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "clusterlogs"}
)

// createLogsCRD creates the ClusterLogs CRD without waiting for it to be
// established: kwok's informer retries its list, and ServeLogs retries its
// create, so nothing waits for it at start.
func createLogsCRD(ctx context.Context, dyn dynamic.Interface) error {
	var obj map[string]any
	if err := yaml.Unmarshal(kwokClusterLogsCRD, &obj); err != nil {
		return fmt.Errorf("kwok ClusterLogs CRD: %w", err)
	}
	_, err := dyn.Resource(crdResource).Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating kwok's ClusterLogs CRD: %w", err)
	}
	return nil
}

// LogSource says which pods' containers ServeLogs gives a log.
type LogSource struct {
	// Namespace of the pods (required).
	Namespace string
	// Pods are the pods' names; empty: every pod in Namespace (a Job's pod,
	// whose name is not known in advance).
	Pods []string
	// Containers are the containers' names; empty: every container.
	Containers []string
}

var logsSeq atomic.Int64

// ServeLogs makes GET pods/log (kubectl logs) of the containers src selects
// return lines, one log line each, as a kubelet would serve what they wrote
// to stdout: it writes the lines to a file in the CRI log format and creates
// a kwok ClusterLogs object naming it, then waits (up to 15 s) until kwok
// serves them. Pods need not exist yet; they must run on a kwok node (AddNode
// on a cluster from Start). The object is deleted when t ends. Lines are
// kept, in order, for every pod matching (tail and limit options apply).
// When two ServeLogs calls select the same pod and container, which one
// kwok serves is not defined: select disjoint pods or containers.
func (c *Cluster) ServeLogs(t testing.TB, src LogSource, lines ...string) {
	t.Helper()
	if !c.Full() {
		t.Fatal("ServeLogs: pod logs are served by kwok: start the cluster with Start, not StartBare")
	}
	if src.Namespace == "" {
		t.Fatal("ServeLogs: LogSource.Namespace is required")
	}
	name := fmt.Sprintf("e2e-logs-%d", logsSeq.Add(1))
	dir := filepath.Join(c.dir, "pod-logs")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, name+".log")
	if err := os.WriteFile(file, CRILog(time.Now().Add(-time.Second), lines...), 0o600); err != nil {
		t.Fatal(err)
	}
	selector := map[string]any{"matchNamespaces": []any{src.Namespace}}
	if len(src.Pods) > 0 {
		selector["matchNames"] = toAny(src.Pods)
	}
	logEntry := map[string]any{"logsFile": file}
	if len(src.Containers) > 0 {
		logEntry["containers"] = toAny(src.Containers)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "ClusterLogs",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"selector": selector, "logs": []any{logEntry}},
	}}
	dyn := dynamic.NewForConfigOrDie(c.Admin)
	ctx := context.Background()
	deadline := time.Now().Add(15 * time.Second)
	for {
		_, err := dyn.Resource(clusterLogsResource).Create(ctx, obj, metav1.CreateOptions{})
		if err == nil {
			break
		}
		// NotFound until the CRD createLogsCRD made is established.
		if !apierrors.IsNotFound(err) || time.Now().After(deadline) {
			t.Fatalf("ServeLogs: creating ClusterLogs %s: %v", name, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Cleanup(func() {
		_ = dyn.Resource(clusterLogsResource).Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	// kwok does not look the pod up: ask it directly for a pod and container
	// the selector matches, until its informer has the object.
	pod, container := "e2e-probe", "e2e-probe"
	if len(src.Pods) > 0 {
		pod = src.Pods[0]
	}
	if len(src.Containers) > 0 {
		container = src.Containers[0]
	}
	want := ""
	if len(lines) > 0 {
		want = lines[len(lines)-1]
	}
	var last string
	for {
		got, err := c.Components.kwokContainerLog(src.Namespace, pod, container)
		if err == nil && strings.Contains(got, want) {
			return
		}
		last = fmt.Sprint(got, err)
		if time.Now().After(deadline) {
			t.Fatalf("ServeLogs: kwok does not serve the log of %s/%s container %s after 15s: %s", src.Namespace, pod, container, last)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// CRILog is lines in the CRI container log format kwok reads (as the
// kubelet's container runtime writes them): "<RFC3339Nano time> stdout F
// <line>", one millisecond apart from start.
func CRILog(start time.Time, lines ...string) []byte {
	var b strings.Builder
	for i, l := range lines {
		fmt.Fprintf(&b, "%s stdout F %s\n", start.Add(time.Duration(i)*time.Millisecond).UTC().Format(time.RFC3339Nano), l)
	}
	return []byte(b.String())
}

// kwokContainerLog asks kwok's server for a container's log, as the
// apiserver does (its certificate is self-signed: not verified).
func (c *Components) kwokContainerLog(ns, pod, container string) (string, error) {
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // kwok's made-up certificate on 127.0.0.1
	}}
	u := "https://127.0.0.1:" + strconv.Itoa(c.kwokPort) + "/containerLogs/" + url.PathEscape(ns) + "/" + url.PathEscape(pod) + "/" + url.PathEscape(container)
	resp, err := client.Get(u)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	return string(body), nil
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
