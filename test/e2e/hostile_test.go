package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	rspb "helm.sh/helm/v3/pkg/release"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	tc "github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

// proc is one run of the plugin started by startPlugin.
type proc struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	start          time.Time
	rssFile        string // GNU time's report (startPluginMeasured)
}

// startPlugin starts the plugin (minimal environment, as tc.Run) without
// waiting, so that a test can signal it; stdin is in (nil: none).
func startPlugin(t *testing.T, env []string, in *os.File, args ...string) *proc {
	t.Helper()
	return startPluginWith(t, false, env, in, args...)
}

// startPluginMeasured is startPlugin under GNU time (/usr/bin/time, in the
// machine image), so that wait returns the plugin's own peak RSS. The
// plugin's rusage as this process sees it is no measure: Go starts children
// with vfork, and Linux carries the parent's high-water mark across exec, so
// a child's ru_maxrss is at least this test binary's. time forks the plugin
// from its own small image. Signals go to time, not the plugin: measure only
// runs that end by themselves.
func startPluginMeasured(t *testing.T, env []string, in *os.File, args ...string) *proc {
	t.Helper()
	return startPluginWith(t, true, env, in, args...)
}

func startPluginWith(t *testing.T, measure bool, env []string, in *os.File, args ...string) *proc {
	t.Helper()
	args = append(append([]string(nil), args...), tc.Blackhole...)
	name := tc.Binary(t)
	p := &proc{}
	if measure {
		p.rssFile = filepath.Join(t.TempDir(), "maxrss")
		args = append([]string{"-o", p.rssFile, "-f", "%M", name}, args...)
		name = "/usr/bin/time"
	}
	p.cmd = exec.Command(name, args...)
	p.cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if in != nil {
		p.cmd.Stdin = in
	}
	p.start = time.Now()
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.cmd.Process.Kill() })
	return p
}

// wait waits at most limit for the plugin and returns its result and peak
// RSS in KiB.
func (p *proc) wait(t *testing.T, limit time.Duration) (tc.Result, int64) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(limit):
		_ = p.cmd.Process.Kill()
		<-done
		t.Fatalf("the plugin did not end within %s\nstdout:\n%s\nstderr:\n%s", limit, p.stdout.String(), p.stderr.String())
	}
	res := tc.Result{Stdout: p.stdout.String(), Stderr: p.stderr.String(), Elapsed: time.Since(p.start)}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		res.Code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if p.rssFile == "" {
		return res, 0
	}
	b, err := os.ReadFile(p.rssFile)
	if err != nil {
		t.Fatalf("reading the peak RSS GNU time wrote: %v", err)
	}
	// The report's last line is %M (KiB); a line before it says how the
	// command ended when it exited non-zero.
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	rss, err := strconv.ParseInt(strings.TrimSpace(lines[len(lines)-1]), 10, 64)
	if err != nil || rss <= 0 {
		t.Fatalf("peak RSS not measured: GNU time wrote %q", b)
	}
	return res, rss
}

// execKubeconfig writes a kubeconfig for server whose user gets credentials
// from an exec plugin running script.
func execKubeconfig(t *testing.T, server, script string) (path, pidFile string) {
	t.Helper()
	dir := t.TempDir()
	pidFile = filepath.Join(dir, "plugin.pid")
	plugin := filepath.Join(dir, "get-token")
	if err := os.WriteFile(plugin, []byte("#!/bin/sh\necho $$ > "+pidFile+"\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["e2e"] = &clientcmdapi.Cluster{Server: server, InsecureSkipTLSVerify: true}
	cfg.AuthInfos["e2e"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
		APIVersion: "client.authentication.k8s.io/v1", Command: plugin, InteractiveMode: clientcmdapi.IfAvailableExecInteractiveMode,
	}}
	cfg.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: "e2e"}
	cfg.CurrentContext = "e2e"
	path = filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path, pidFile
}

// wantGone asserts that the process whose pid is in pidFile has ended (or is
// a zombie waiting to be reaped by its new parent).
func wantGone(t *testing.T, pidFile string) {
	t.Helper()
	time.Sleep(200 * time.Millisecond)
	pid, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the credential plugin never ran: %v", err)
	}
	stat, err := os.ReadFile("/proc/" + strings.TrimSpace(string(pid)) + "/stat")
	if err == nil && !strings.Contains(string(stat), ") Z ") {
		t.Errorf("the credential plugin (pid %s) is still running", strings.TrimSpace(string(pid)))
	}
}

// TestHostileInputsWithoutCluster: the cases that need no API server.
//
// Quiet (tc.Quiet): it bounds the plugin's time on each input (--timeout
// plus a few seconds) and its peak RSS, measured beside the other quiet
// tests only, before the heavy ones start.
func TestHostileInputsWithoutCluster(t *testing.T) {
	tc.Parallel(t, tc.Quiet)
	// The cases run at once: each bounds its own time, and together they
	// take as long as the longest (the helm that keeps stdout open: 10 s).
	run, wait := concurrently(t)
	const server = "https://127.0.0.1:1" // refused at once

	run("exec credential plugin that never answers is bounded by --timeout", func(t *testing.T) {
		kc, pidFile := execKubeconfig(t, server, "sleep 300 & sleep 300\n")
		p := startPlugin(t, nil, nil, "--kubeconfig", kc, "--request-timeout", "3s", "--timeout", "4s", "-o", "json")
		res, _ := p.wait(t, 20*time.Second)
		wantCode(t, res, 3)
		if res.Elapsed > 9*time.Second {
			t.Errorf("took %s with --timeout 4s", res.Elapsed)
		}
		wantStatus(t, res.JSON(t), "cluster-reachable", "fail", "getting credentials from exec plugin", "--timeout or a signal")
		if strings.Count(strings.TrimSpace(res.Stderr), "\n") != 0 {
			t.Errorf("stderr %q, want one line", res.Stderr)
		}
		wantGone(t, pidFile)
	})

	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		run("exec credential plugin interrupted by "+sig.String(), func(t *testing.T) {
			kc, pidFile := execKubeconfig(t, server, "sleep 300\n")
			p := startPlugin(t, nil, nil, "--kubeconfig", kc, "-o", "json")
			time.Sleep(1500 * time.Millisecond)
			_ = p.cmd.Process.Signal(sig)
			res, _ := p.wait(t, 10*time.Second)
			wantCode(t, res, 3) // the cluster was never reached
			doc := res.JSON(t)
			wantStatus(t, doc, "cluster-reachable", "fail", "getting credentials")
			if !strings.Contains(res.Stderr, "interrupted by SIG") {
				t.Errorf("stderr %q does not say the run was interrupted", res.Stderr)
			}
			wantGone(t, pidFile)
		})
	}

	run("values from /dev/zero", func(t *testing.T) {
		res := tc.Run(t, nil, "--kubeconfig", "/nonexistent", "-f", "/dev/zero")
		wantCode(t, res, 2)
		if res.Elapsed > 10*time.Second || !strings.Contains(res.Stderr, "larger than 10 MiB") || strings.Count(strings.TrimSpace(res.Stderr), "\n") != 0 {
			t.Errorf("after %s, stderr %q: want one line about the cap", res.Elapsed, res.Stderr)
		}
	})

	run("values from stdin, endless", func(t *testing.T) {
		zero, err := os.Open("/dev/zero")
		if err != nil {
			t.Skip("no /dev/zero")
		}
		defer zero.Close()
		p := startPluginMeasured(t, nil, zero, "--kubeconfig", "/nonexistent", "-f", "-")
		res, rss := p.wait(t, 20*time.Second)
		wantCode(t, res, 2)
		if !strings.Contains(res.Stderr, "- (stdin) is larger than 10 MiB") {
			t.Errorf("stderr %q", res.Stderr)
		}
		if rss > 200<<10 {
			t.Errorf("peak RSS %d MiB reading endless stdin", rss>>10)
		}
	})

	run("values from a FIFO nobody writes", func(t *testing.T) {
		fifo := filepath.Join(t.TempDir(), "values.yaml")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		res := tc.Run(t, nil, "--kubeconfig", "/nonexistent", "-f", fifo, "--timeout", "2s")
		wantCode(t, res, 2)
		if res.Elapsed > 8*time.Second || !strings.Contains(res.Stderr, "stopped before it ended") {
			t.Errorf("after %s, stderr %q", res.Elapsed, res.Stderr)
		}
		p := startPlugin(t, nil, nil, "--kubeconfig", "/nonexistent", "-f", fifo)
		time.Sleep(time.Second)
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		res, _ = p.wait(t, 10*time.Second)
		wantCode(t, res, 3)
		if !strings.Contains(res.Stderr, "interrupted by SIGTERM while reading values") {
			t.Errorf("stderr %q", res.Stderr)
		}
	})

	run("a kubeconfig FIFO nobody writes", func(t *testing.T) {
		fifo := filepath.Join(t.TempDir(), "kubeconfig")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		res := tc.Run(t, nil, "--kubeconfig", fifo, "--timeout", "2s", "-o", "json")
		wantCode(t, res, 3)
		if res.Elapsed > 8*time.Second || !strings.Contains(res.Stderr, "reading the kubeconfig did not finish within --timeout 2s") {
			t.Errorf("after %s, stderr %q", res.Elapsed, res.Stderr)
		}
	})

	run("a HELM_BIN that floods stdout", func(t *testing.T) {
		helm := filepath.Join(t.TempDir(), "helm")
		if err := os.WriteFile(helm, []byte("#!/bin/sh\nexec yes v3.14.0\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		kc := tc.WriteKubeconfig(t, t.TempDir()+"/kc", server, "x")
		p := startPluginMeasured(t, []string{"HELM_BIN=" + helm}, nil, "--kubeconfig", kc, "--only", "helm-version", "-o", "json")
		res, rss := p.wait(t, 20*time.Second)
		wantCode(t, res, 3)
		wantStatus(t, res.JSON(t), "helm-version", "fail", "stdout exceeded 64 KiB")
		if res.Elapsed > 8*time.Second || rss > 200<<10 {
			t.Errorf("took %s, peak RSS %d MiB", res.Elapsed, rss>>10)
		}
	})

	run("a helm whose child keeps stdout open", func(t *testing.T) {
		helm := filepath.Join(t.TempDir(), "helm")
		if err := os.WriteFile(helm, []byte("#!/bin/sh\n(sleep 300) &\necho v3.14.0\nsleep 300\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		kc := tc.WriteKubeconfig(t, t.TempDir()+"/kc", server, "x")
		res := tc.Run(t, []string{"HELM_BIN=" + helm}, "--kubeconfig", kc, "--only", "helm-version", "-o", "json")
		wantCode(t, res, 3)
		wantStatus(t, res.JSON(t), "helm-version", "fail", "did not report its version")
		if res.Elapsed > 16*time.Second {
			t.Errorf("took %s; the check's own bound is 10 s", res.Elapsed)
		}
	})

	run("refused flag combinations", func(t *testing.T) {
		for _, tt := range []struct {
			args []string
			want string
		}{
			{[]string{"--fix", "--yes", "--tls-secret", "runtime-tls"}, "--tls-secret fixes nginx-tls-secret, which runs after the install (--post): add --post"},
			{[]string{"--tls-secret", "runtime-tls", "--post"}, "--tls-secret only applies with --fix"},
			{[]string{"--crds", "rollouts"}, "--crds only applies with --fix"},
			{[]string{"--fix", "--yes", "--post", "--crds", "rollouts"}, "--crds fixes argo-crds-ownership, which runs before helm install"},
			{[]string{"--fix", "--yes", "--skip", "argo-crds-ownership", "--crds", "all"}, "which --only/--skip left out"},
			{[]string{"--fix", "--yes", "--only", "node-resources"}, "none of the selected checks can be fixed"},
		} {
			// The kubeconfig names a server that records any request.
			res := tc.Run(t, nil, append([]string{"--kubeconfig", "/nonexistent/kc"}, tt.args...)...)
			wantCode(t, res, 2)
			if !strings.Contains(res.Stderr, tt.want) || res.Stdout != "" {
				t.Errorf("%v: stderr %q, stdout %q; want one line with %q", tt.args, res.Stderr, res.Stdout, tt.want)
			}
		}
	})
	wait()
}

// TestHostileCluster: the cases against the real API server.
//
// Quiet (tc.Quiet): it bounds the time and peak RSS of runs that read
// 760 MB answers, measured beside the other quiet tests only.
func TestHostileCluster(t *testing.T) {
	tc.Parallel(t, tc.Quiet)
	c := tc.Start(t)
	c.CreateNamespace(t, "codefresh")

	t.Run("release-Secret bombs keep memory bounded", func(t *testing.T) {
		payload := tc.BombPayload(760 << 20)
		c.CreateNamespace(t, "bombs")
		for i := range 3 {
			if _, err := c.Kube.CoreV1().Secrets("bombs").Create(context.Background(), tc.BombSecret("bombs", fmt.Sprintf("bomb-%d", i), payload), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		p := startPluginMeasured(t, nil, nil, "--kubeconfig", c.AdminKubeconfig(), "--only", "existing-runtime", "-o", "json")
		res, rss := p.wait(t, 60*time.Second)
		wantCode(t, res, 0)
		ch := wantStatus(t, res.JSON(t), "existing-runtime", "warn", "3 Helm release(s) could not be read", "bombs/bomb-0 (payload larger than 10 MiB once decompressed)")
		if len(ch.Objects) != 3 {
			t.Errorf("objects %v, want the 3 bomb Secrets", ch.Objects)
		}
		if rss > 200<<10 || res.Elapsed > 20*time.Second {
			t.Errorf("3 bombs of 760 MB: peak RSS %d MiB, %s (want < 200 MiB, < 20 s)", rss>>10, res.Elapsed)
		}
		t.Logf("3 bombs: peak RSS %d MiB, %s", rss>>10, res.Elapsed)
		if err := c.Kube.CoreV1().Namespaces().Delete(context.Background(), "bombs", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			_ = c.Kube.CoreV1().Secrets("bombs").Delete(context.Background(), fmt.Sprintf("sh.helm.release.v1.bomb-%d.v1", i), metav1.DeleteOptions{})
		}
	})

	t.Run("a planted secret in the release description is masked in every format", func(t *testing.T) {
		const token = "Pl4ntedS3cretValue"
		writeRelease(t, c, "codefresh", "cf-gitops-runtime", 1, rspb.StatusFailed,
			"Release \"cf-gitops-runtime\" failed: admission webhook \"x.example.com\" denied the request: spec.password="+token+"; Authorization: Basic "+token)
		for _, f := range reporters.Formats {
			res := tc.Run(t, nil, "--kubeconfig", c.AdminKubeconfig(), "--post", "--only", "release-deployed", "-o", string(f))
			wantCode(t, res, 1)
			if strings.Contains(res.Stdout, token) || strings.Contains(res.Stderr, token) {
				t.Errorf("-o %s printed the planted secret:\n%s", f, res.Stdout)
			}
			if f == reporters.FormatSARIF || f == reporters.FormatCodeQuality {
				// These carry only findings anchored to a line of a file
				// (docs/ci.md); a release's description is not one.
				continue
			}
			if !strings.Contains(res.Stdout, "spec.password=***") {
				t.Errorf("-o %s: the masked description is missing:\n%s", f, res.Stdout)
			}
			if f == reporters.FormatYAML {
				var doc map[string]any
				if err := yaml.Unmarshal([]byte(res.Stdout), &doc); err != nil {
					t.Errorf("-o yaml: %v", err)
				}
			}
			if f == reporters.FormatJSON {
				var doc map[string]any
				if err := json.Unmarshal([]byte(res.Stdout), &doc); err != nil {
					t.Errorf("-o json: %v", err)
				}
			}
		}
	})

	t.Run("an anonymous caller fails cluster-admin", func(t *testing.T) {
		kc := tc.WriteKubeconfig(t, t.TempDir()+"/kc", c.Admin.Host, "")
		res := tc.Run(t, []string{fakeHelm(t, "v3.14.0")}, "--kubeconfig", kc, "-o", "json")
		doc := res.JSON(t)
		if tc.Check(t, doc, "cluster-reachable").Status != "pass" {
			t.Skipf("this API server refuses anonymous requests (cluster-reachable %s)", tc.Check(t, doc, "cluster-reachable").Message)
		}
		wantCode(t, res, 1)
		ch := wantStatus(t, doc, "cluster-admin", "fail", "system:anonymous")
		if !strings.Contains(ch.Hint, "kubectl auth whoami") {
			t.Errorf("hint %q", ch.Hint)
		}
	})

	t.Run("a namespace-scoped user gets --post from the runtime namespace", func(t *testing.T) {
		const ns = "codefresh"
		writeRelease(t, c, ns, "cf-gitops-runtime", 2, rspb.StatusDeployed, "Upgrade complete")
		// A node with room: the scheduler, kwok and the Deployment controller
		// make app-proxy available (the hand-written status is overwritten).
		c.AddNode(t, tc.NodeSpec{Name: "worker", CPU: "4", Memory: "8Gi"})
		deployment(t, c, ns, "app-proxy", 1, 1)
		waitAvailable(t, c, ns, "app-proxy")
		tok := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "codefresh-token"}, Data: map[string][]byte{"token": []byte("x")}}
		if _, err := c.Kube.CoreV1().Secrets(ns).Create(context.Background(), tok, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "reader"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}}}}
		if _, err := c.Kube.RbacV1().Roles(ns).Create(context.Background(), role, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "reader"},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "reader"},
			Subjects: []rbacv1.Subject{{Kind: "User", Name: "ns-reader"}}}
		if _, err := c.Kube.RbacV1().RoleBindings(ns).Create(context.Background(), rb, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		kc := c.UserKubeconfig(t, "ns-reader")
		c.WaitAllowed(t, "ns-reader", "list", "deployments", ns)
		only := "--only=release-deployed,runtime-workloads,rollouts-controllers"
		res := tc.Run(t, nil, "--kubeconfig", kc, "--post", only, "-o", "json")
		doc := res.JSON(t)
		wantCode(t, res, 0)
		wantStatus(t, doc, "release-deployed", "pass", "revision 2 is deployed", "read namespace codefresh only: no permission to list secrets in all namespaces")
		wantStatus(t, doc, "runtime-workloads", "pass", "read namespace codefresh only")
		wantStatus(t, doc, "rollouts-controllers", "pass", "read namespace codefresh only: no permission to list deployments")

		// With no rights at all, the core checks skip: exit 1, and it says so.
		none := c.UserKubeconfig(t, "nobody")
		res = tc.Run(t, nil, "--kubeconfig", none, "--post", only, "-o", "json")
		doc = res.JSON(t)
		wantCode(t, res, 1)
		wantStatus(t, doc, "release-deployed", "skip", "no permission")
		wantStatus(t, doc, "runtime-workloads", "skip", "no permission")
		if !strings.Contains(res.Stderr, "nothing about the runtime was verified: release-deployed and runtime-workloads ended skip for lack of permission") {
			t.Errorf("stderr %q", res.Stderr)
		}
	})

	t.Run("SIGTERM after the cluster was reached prints the partial report and exits 143", func(t *testing.T) {
		// --wait keeps re-running the failing post-install checks.
		p := startPlugin(t, nil, nil, "--kubeconfig", c.AdminKubeconfig(), "--post", "-n", "nowhere", "--wait", "5m", "-o", "json")
		time.Sleep(3 * time.Second)
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		res, _ := p.wait(t, 15*time.Second)
		wantCode(t, res, 143)
		wantStatus(t, res.JSON(t), "cluster-reachable", "pass")
		// One line: no klog ("unable to cancel request") from cancelled requests.
		if !strings.Contains(res.Stderr, "interrupted by SIGTERM: the report is partial") || strings.Count(strings.TrimSpace(res.Stderr), "\n") != 0 {
			t.Errorf("stderr %q, want one line", res.Stderr)
		}
	})
}
