package cli

import (
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// TestUnreachableSaysItOnce: a run against a port that refuses connections,
// in an 80-column terminal, exits 3 with the connection error once (in
// cluster-reachable), every check that needs the cluster skipped with
// "needs cluster-reachable", no line wider than 80, a summary that counts
// only the failure, and one Error: line that refers to the report instead
// of repeating it, wrapped to 80 columns.
func TestUnreachableSaysItOnce(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: "https://" + addr}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "x"}
	cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	cfg.CurrentContext = "c"
	if err := clientcmd.WriteToFile(*cfg, kc); err != nil {
		t.Fatal(err)
	}

	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	cmd, _ := newCommand(streams, Host{
		Getenv:        func(string) string { return "" },
		IsTerminal:    func(io.Writer) bool { return true },
		TerminalWidth: func(io.Writer) int { return 80 },
	})
	// platform-reachable would dial the Internet, helm-version depends on
	// this machine's PATH: neither needs the cluster, both are left out.
	cmd.SetArgs([]string{"--kubeconfig", kc, "--no-color", "--skip", "platform-reachable,helm-version"})
	err = cmd.Execute()
	if code := ExitCode(err); code != ExitUnreachable {
		t.Fatalf("exit %d (%v), want %d", code, err, ExitUnreachable)
	}
	report := out.String()
	if n := strings.Count(report, "connection refused"); n != 1 {
		t.Errorf("the connection error is in the report %d times, want once:\n%s", n, report)
	}
	lines := strings.Split(strings.TrimSuffix(report, "\n"), "\n")
	for i, l := range lines {
		if w := twwidth.Width(l); w > 80 {
			t.Errorf("line %d is %d columns: %q", i+1, w, l)
		}
	}
	// 37 checks: two lines for each skip that needs the cluster, up to
	// three for the others (not applicable: why, and what would apply it),
	// the header and the summary.
	if len(lines) > 102 {
		t.Errorf("the report is %d lines at 80 columns, want at most 102:\n%s", len(lines), report)
	}
	for _, id := range []string{"kubernetes-version", "cluster-admin", "node-resources", "chart-renders", "existing-runtime"} {
		if !strings.Contains(report, "– skip   "+id+"\n    needs cluster-reachable\n") {
			t.Errorf("%s is not skipped with \"needs cluster-reachable\":\n%s", id, report)
		}
	}
	if !strings.HasSuffix(report, "Summary: 1 pass, 0 warn, 1 fail, 35 skip, 0 error\nFailing, by impact: 1 install-fails (✱ = helm install will fail)\n") {
		t.Errorf("the summary does not count the one failure:\n%s", report)
	}
	text := ErrorText(err.Error(), 80)
	if strings.Contains(text, "connection refused") || !strings.HasPrefix(text, "Error: cluster-reachable ended fail (the reason is above)") {
		t.Errorf("the Error: line repeats the report or does not refer to it: %q", text)
	}
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if w := twwidth.Width(l); w > 80 {
			t.Errorf("Error: line is %d columns: %q", w, l)
		}
	}
}

// TestNoKubeconfig: with no kubeconfig anywhere (KUBECONFIG names a file
// that does not exist) and no --server, the run exits 3 with one line naming
// where it looked, not a connection error to client-go's default server.
func TestNoKubeconfig(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	t.Setenv("KUBECONFIG", missing)
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	_, _, _, err := runCmd(t, map[string]string{"KUBECONFIG": missing}, "--skip", "platform-reachable,helm-version")
	if code := ExitCode(err); code != ExitUnreachable {
		t.Fatalf("exit %d (%v), want %d", code, err, ExitUnreachable)
	}
	want := "no kubeconfig with a cluster found: looked in KUBECONFIG=" + missing + "; "
	if !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "localhost:8080") || strings.Contains(err.Error(), "\n") {
		t.Errorf("error %q, want one line starting %q", err, want)
	}
}
