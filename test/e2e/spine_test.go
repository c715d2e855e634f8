package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	tc "github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

// TestSpineChecks walks one real control plane through the states the
// cluster-level checks judge, asserting each check's JSON status and the exit
// code through the built binary.
func TestSpineChecks(t *testing.T) {
	tc.Parallel(t)
	c := tc.Start(t)
	ctx := context.Background()
	helm := fakeHelm(t, "v3.14.2+gc309b6f")

	// Two small nodes and one big cordoned node: node-resources fails.
	c.AddNode(t, tc.NodeSpec{Name: "small-1", CPU: "1", Memory: "2Gi"})
	c.AddNode(t, tc.NodeSpec{Name: "small-2", CPU: "2", Memory: "4Gi"})
	c.AddNode(t, tc.NodeSpec{Name: "big", CPU: "8", Memory: "32Gi", Unschedulable: true})

	t.Run("node-resources fails with the best node's figures", func(t *testing.T) {
		res, doc := c.RunJSONReplayed(t, []string{helm})
		wantCode(t, res, 1)
		wantStatus(t, doc, "node-resources", "fail", "best: small-2", "cpu 2", "memory 4295M (4.0Gi)", "1 cordoned")
		wantStatus(t, doc, "cluster-reachable", "pass", "v1.36.3")
		wantStatus(t, doc, "kubernetes-version", "pass", "v1.36.3")
		wantStatus(t, doc, "cluster-admin", "pass")
		wantStatus(t, doc, "helm-version", "pass", "v3.14.2")
		wantStatus(t, doc, "runtime-name", "pass")
		wantStatus(t, doc, "runtime-namespace", "pass", "does not exist yet")
		if doc.SchemaVersion != "v1" || doc.Mode != "pre" || doc.Cluster.Version != "v1.36.3" || doc.Summary.Fail != 1 {
			t.Errorf("report header = %+v %+v", doc.Cluster, doc.Summary)
		}
	})

	t.Run("node-resources passes once the big node is uncordoned", func(t *testing.T) {
		_, err := c.Kube.CoreV1().Nodes().Patch(ctx, "big", types.MergePatchType, []byte(`{"spec":{"unschedulable":false}}`), metav1.PatchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		res, doc := c.RunJSONReplayed(t, []string{helm})
		wantCode(t, res, 0)
		wantStatus(t, doc, "node-resources", "pass", "1 of 3 nodes qualify", "big")
	})

	t.Run("table output on a pipe has no colour and the same exit code", func(t *testing.T) {
		_, doc := c.RunJSONReplayed(t, []string{helm})
		res := tc.Run(t, []string{helm}, "--kubeconfig", c.AdminKubeconfig())
		wantCode(t, res, 0)
		s := doc.Summary
		summary := fmt.Sprintf("Summary: %d pass, %d warn, %d fail, %d skip, %d error", s.Pass, s.Warn, s.Fail, s.Skip, s.Error)
		for _, w := range []string{"STATUS", "node-resources", "✔ pass", summary} {
			if !strings.Contains(res.Stdout, w) {
				t.Errorf("table output lacks %q:\n%s", w, res.Stdout)
			}
		}
		if strings.Contains(res.Stdout, "\x1b[") {
			t.Errorf("table on a pipe contains ANSI escapes:\n%q", res.Stdout)
		}
	})

	t.Run("kubernetes-version fails for 1.22 with a vendor suffix", func(t *testing.T) {
		kc := c.Proxy(t, tc.FakeVersion("v1.22.17-eks-b9c9ed7", "1", "22+"))
		res, _ := tc.RunJSONReplayed(t, []string{helm}, "--kubeconfig", kc, "-o", "json")
		wantCode(t, res, 1)
		doc := res.JSON(t)
		wantStatus(t, doc, "kubernetes-version", "fail", "v1.22.17-eks-b9c9ed7", "older than 1.23.0")
	})

	t.Run("kubernetes-version passes for EKS, GKE and k3s suffixes", func(t *testing.T) {
		for _, v := range []string{"v1.29.3-eks-4f4795d", "v1.28.5-gke.1217000", "v1.30.2+k3s1"} {
			kc := c.Proxy(t, tc.FakeVersion(v, "1", "29"))
			res, _ := tc.RunJSONReplayed(t, []string{helm}, "--kubeconfig", kc, "-o", "json", "--only", "kubernetes-version")
			wantCode(t, res, 0)
			wantStatus(t, res.JSON(t), "kubernetes-version", "pass", v)
		}
	})

	t.Run("helm-version: old fails, absent warns", func(t *testing.T) {
		res, doc := c.RunJSONReplayed(t, []string{fakeHelm(t, "v3.7.2+g663a896")}, "--only", "helm-version")
		wantCode(t, res, 1)
		wantStatus(t, doc, "helm-version", "fail", "older than 3.11.0", "chart's README")
		res, doc = c.RunJSONReplayed(t, []string{"PATH=/nonexistent"}, "--only", "helm-version")
		wantCode(t, res, 0)
		wantStatus(t, doc, "helm-version", "warn", "no helm client")
		res, _ = c.RunJSONReplayed(t, []string{"PATH=/nonexistent"}, "--only", "helm-version", "--fail-on", "warn")
		wantCode(t, res, 1)
	})

	t.Run("runtime-name fails for an invalid name", func(t *testing.T) {
		res, doc := c.RunJSONReplayed(t, []string{helm}, "--runtime-name", "My-Runtime")
		wantCode(t, res, 1)
		wantStatus(t, doc, "runtime-name", "fail", "My-Runtime")
	})

	t.Run("runtime-namespace: Terminating fails, foreign workloads warn, invalid fails", func(t *testing.T) {
		c.CreateNamespace(t, "doomed")
		// No namespace controller runs here: a deleted namespace stays Terminating.
		if err := c.Kube.CoreV1().Namespaces().Delete(ctx, "doomed", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		res, doc := c.RunJSONReplayed(t, []string{helm}, "-n", "doomed")
		wantCode(t, res, 1)
		wantStatus(t, doc, "runtime-namespace", "fail", "doomed is Terminating")

		c.CreateNamespace(t, "shared")
		c.Kubectl(t, "-n", "shared", "create", "deployment", "redis", "--image=redis:7")
		res, doc = c.RunJSONReplayed(t, []string{helm}, "-n", "shared")
		wantCode(t, res, 0)
		ns := wantStatus(t, doc, "runtime-namespace", "warn", "Deployment/redis")
		if len(ns.Objects) != 1 || ns.Objects[0].Name != "redis" || ns.Objects[0].Namespace != "shared" {
			t.Errorf("objects = %+v, want Deployment shared/redis", ns.Objects)
		}

		res, doc = c.RunJSONReplayed(t, []string{helm}, "-n", "Not_Valid")
		wantCode(t, res, 1)
		wantStatus(t, doc, "runtime-namespace", "fail", "not a valid DNS-1123 label")
	})

	t.Run("a user without RBAC: cluster-admin fails listing permissions, reads skip", func(t *testing.T) {
		kc := c.UserKubeconfig(t, "nobody")
		res, _ := tc.RunJSONReplayed(t, []string{helm}, "--kubeconfig", kc, "-o", "json")
		wantCode(t, res, 1)
		doc := res.JSON(t)
		wantStatus(t, doc, "cluster-reachable", "pass")
		admin := wantStatus(t, doc, "cluster-admin", "fail", "missing 29 of 29", "create,delete serviceaccounts in codefresh", "create,update,delete customresourcedefinitions.apiextensions.k8s.io")
		if !strings.Contains(admin.Hint, "clusterrolebinding") {
			t.Errorf("cluster-admin hint %q names no fix", admin.Hint)
		}
		wantStatus(t, doc, "node-resources", "skip", "no permission to list nodes")
		wantStatus(t, doc, "runtime-namespace", "skip", "no permission to get namespaces/codefresh")
	})

	t.Run("a namespace admin is told what cluster-scoped permissions are missing", func(t *testing.T) {
		kc := c.UserKubeconfig(t, "ns-admin")
		c.CreateNamespace(t, "codefresh")
		// Not the "admin" ClusterRole: it is aggregated by a controller that
		// does not run here, so it has no rules. An explicit Role instead.
		_, err := c.Kube.RbacV1().Roles("codefresh").Create(ctx, &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "ns-admin"},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Kube.RbacV1().RoleBindings("codefresh").Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "ns-admin"},
			Subjects:   []rbacv1.Subject{{Kind: "User", Name: "ns-admin"}},
			RoleRef:    rbacv1.RoleRef{Kind: "Role", Name: "ns-admin", APIGroup: "rbac.authorization.k8s.io"},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c.WaitAllowed(t, "ns-admin", "create", "pods", "codefresh")
		res, _ := tc.RunJSONReplayed(t, []string{helm}, "--kubeconfig", kc, "-o", "json", "--only", "cluster-admin")
		wantCode(t, res, 1)
		c := wantStatus(t, res.JSON(t), "cluster-admin", "fail", "customresourcedefinitions", "clusterroles", "clusterrolebindings")
		if strings.Contains(c.Message, "serviceaccounts") || strings.Contains(c.Message, "pods") {
			t.Errorf("namespace admin told it misses namespaced permissions: %q", c.Message)
		}
	})

	t.Run("credentials rejected exits 3", func(t *testing.T) {
		kc := tc.WriteKubeconfig(t, t.TempDir()+"/bad.kubeconfig", c.Admin.Host, "not-a-token")
		res, _ := tc.RunJSONReplayed(t, []string{helm}, "--kubeconfig", kc, "-o", "json")
		wantCode(t, res, 3)
		doc := res.JSON(t)
		wantStatus(t, doc, "cluster-reachable", "fail", "rejected the credentials")
		wantStatus(t, doc, "node-resources", "skip", "needs cluster-reachable")
		wantStatus(t, doc, "runtime-name", "pass")
	})
}

// TestUnreachable: a refused connection and a server that never answers both
// exit 3, within --request-timeout plus a few seconds.
//
// Runs alone: that bound is measured on a machine no other test loads, and
// the refused address is a port it closed, which no control plane starting
// beside it may take meanwhile.
func TestUnreachable(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusedAddr := closed.Addr().String()
	closed.Close()

	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			conn, err := silent.Accept()
			if err != nil {
				return
			}
			defer conn.Close() // accept and never answer
		}
	}()

	for name, addr := range map[string]string{"refused": refusedAddr, "silent": silent.Addr().String()} {
		t.Run(name, func(t *testing.T) {
			kc := tc.WriteKubeconfig(t, t.TempDir()+"/kc", "https://"+addr, "x")
			res := tc.Run(t, nil, "--kubeconfig", kc, "--request-timeout", "2s", "-o", "json")
			wantCode(t, res, 3)
			if res.Elapsed > 8*time.Second {
				t.Errorf("took %s with --request-timeout 2s", res.Elapsed)
			}
			doc := res.JSON(t)
			wantStatus(t, doc, "cluster-reachable", "fail", "cannot reach https://"+addr)
			// The exit-3 line says what happened and which checks still ran.
			if !strings.Contains(res.Stderr, "cluster-reachable fail: cannot reach https://"+addr) {
				t.Errorf("stderr %q does not say why the cluster is not reachable", res.Stderr)
			}
			var ran []string
			for _, c := range doc.Checks {
				if c.ID != "cluster-reachable" && c.Status != "skip" {
					ran = append(ran, c.ID)
				}
			}
			if len(ran) > 0 && !strings.Contains(res.Stderr, "only the checks that need no cluster ran: "+strings.Join(ran, ", ")) {
				t.Errorf("stderr %q does not name the checks that ran (%v)", res.Stderr, ran)
			}
		})
	}
}

// TestUsageErrors: bad input exits 2 with a one-line error, before any request.
func TestUsageErrors(t *testing.T) {
	tc.Parallel(t)
	tests := []struct {
		args    []string
		wantErr string
	}{
		{[]string{"--no-such-flag"}, "unknown flag: --no-such-flag"},
		{[]string{"--only", "node-resource"}, `unknown check ID "node-resource" (did you mean "node-resources"?)`},
		{[]string{"--skip", "nope"}, `unknown check ID "nope"`},
		{[]string{"-o", "xml"}, `unknown output format "xml"`},
		{[]string{"--fail-on", "sometimes"}, "--fail-on must be warn or fail"},
		{[]string{"--skip", "cluster-reachable"}, "cannot be skipped"},
		{[]string{"extra-arg"}, "unknown command"},
		{[]string{"--kubeconfig", "/nonexistent/kubeconfig"}, "kubeconfig"},
		{[]string{"--post", "--upgrade"}, "--post and --upgrade are different runs"},
		{[]string{"--reuse-values"}, "use them with --upgrade"},
		{[]string{"--upgrade", "--helm-major", "5"}, "--helm-major must be 3 or 4"},
		{[]string{"--post", "--helm-major", "4"}, "no use with --post"},
		{[]string{"--upgrade", "--set-string", "a["}, "failed parsing --set-string data"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			res := tc.Run(t, nil, tt.args...)
			wantCode(t, res, 2)
			if !strings.Contains(res.Stderr, tt.wantErr) || strings.Count(strings.TrimSpace(res.Stderr), "\n") != 0 {
				t.Errorf("stderr %q: want one line containing %q", res.Stderr, tt.wantErr)
			}
			if res.Stdout != "" {
				t.Errorf("stdout not empty on usage error: %q", res.Stdout)
			}
		})
	}
}

// TestListChecks: the catalogue as a table (ID, mode, category, docs link),
// wide (with the title, no trailing blanks) and JSON, without a cluster.
func TestListChecks(t *testing.T) {
	tc.Parallel(t)
	res := tc.Run(t, nil, "--list-checks", "-o", "json")
	wantCode(t, res, 0)
	var list []struct{ ID, Category, Mode, Title, Docs string }
	if err := json.Unmarshal([]byte(res.Stdout), &list); err != nil {
		t.Fatalf("--list-checks -o json: %v\n%s", err, res.Stdout)
	}
	if len(list) < 7 || list[0].ID != "cluster-reachable" || !strings.HasSuffix(list[0].Docs, "#cluster-reachable") {
		t.Fatalf("--list-checks = %+v", list)
	}
	res = tc.Run(t, nil, "--list-checks")
	wantCode(t, res, 0)
	for _, w := range []string{"ID", "MODE", "CATEGORY", "DOCS", "node-resources", "pre,post,upgrade", list[0].Docs} {
		if !strings.Contains(res.Stdout, w) {
			t.Errorf("--list-checks table lacks %q", w)
		}
	}
	res = tc.Run(t, nil, "--list-checks", "-o", "wide")
	wantCode(t, res, 0)
	for _, w := range []string{"ID", "CATEGORY", "MODE", "TITLE", "node-resources", "cluster", "pre", list[0].Title, list[0].Docs} {
		if !strings.Contains(res.Stdout, w) {
			t.Errorf("--list-checks -o wide lacks %q", w)
		}
	}
	for i, l := range strings.Split(res.Stdout, "\n") {
		if strings.HasSuffix(l, " ") {
			t.Errorf("--list-checks -o wide line %d ends in a blank: %q", i+1, l)
		}
	}
}
